"""Issue 46 item 4: the home page's "Top people" says what it measures (the games a person asks
in) and a game a person answered (a model asked about their word) counts there for no one, not
as a loss."""

from __future__ import annotations

import pytest

from webapp.catalog.models import ModelSpec, WordList
from webapp.leaderboards.services import leaderboards_refresh
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
STRICT = {"max_turns": 20, "win_rule": "strict"}


def _game(mode: str, won: bool, **fields) -> Game:
    return Game.objects.create(
        mode=mode,
        secret="w",
        status="finished",
        outcome="won" if won else "lost",
        n_turns=9,
        config=STRICT,
        **fields,
    )


def _top_people(client) -> str:
    body = client.get("/").content.decode()
    return " ".join(body[body.index('id="top-people"') : body.index("All leaderboards")].split())


def test_top_people_counts_only_the_games_a_person_asks_in_and_says_so(client, make_user):
    judge = ModelSpec.objects.create(name="kb-test", kind="kb", role="judge")
    guesser = ModelSpec.objects.create(name="ig-test", kind="infogain", role="guesser")
    words = WordList.objects.create(name="test/words", version=1)
    ann = make_user("player", username="ann")
    for _ in range(2):
        _game("human_guesser", True, player=ann, judge=judge, word_list=words)
    for won in (False, False, False, True):  # ann stumped the model three times, it found one
        _game("human_judge", won, player=ann, guesser=guesser, word_list=words)
    leaderboards_refresh()
    top = _top_people(client)
    assert "ann</a> — 100.0% won over 2 games asking" in top
    assert "Games where the person asks and a model answers" in top
    assert "count for no one here" in top


def test_people_who_only_answered_are_not_on_it(client, make_user):
    guesser = ModelSpec.objects.create(name="ig-test", kind="infogain", role="guesser")
    _game("human_judge", False, player=make_user("player", username="bea"), guesser=guesser)
    leaderboards_refresh()
    top = _top_people(client)
    assert "bea" not in top and "No one with an account has finished a game asking yet" in top
