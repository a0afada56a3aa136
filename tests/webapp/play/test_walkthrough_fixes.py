"""Issue 46 item 4, what a walk through the play pages found: "Play again" starts the same kind of
game, the confirmation box after "That's my word!" holds the guessed word, /games/ shows a game a
person answered from the person's side, and each judge of the start form says what it does."""

from __future__ import annotations

import json
import re

import pytest
from django.utils.html import escape

from tests.webapp.play.support import model_game
from tests.webapp.play.support import start_from_page as start_game
from webapp.catalog.models import ModelSpec
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def play_again_form(html: str) -> dict[str, str]:
    """The hidden fields of the end screen's "Play again" form (it posts to the start view)."""
    form = re.search(
        r'<form method="post" action="/play/start/"[^>]*id="play-again">(.*?)</form>',
        html,
        flags=re.S,
    )
    assert form, "no Play again form"
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form.group(1)))
    fields.pop("csrfmiddlewaretoken", None)
    return fields


@pytest.mark.parametrize(
    "form, same",
    [
        (
            {"role": "guesser", "judge": "kb-closed", "word_list": "lmrl/objects", "max_turns": 7},
            lambda g: (g.mode, g.judge.name, g.word_list.name, g.config["max_turns"]),
        ),
        (
            {"role": "answerer", "guesser": "random", "max_turns": 5},
            lambda g: (g.mode, g.guesser.name, g.word_list, g.secret, g.config["max_turns"]),
        ),
        (
            {
                "role": "answerer",
                "guesser": "infogain",
                "draw_word": "on",
                "word_list": "lmrl/objects",
                "max_turns": 9,
            },
            lambda g: (g.mode, g.guesser.name, g.word_list.name, g.config["max_turns"]),
        ),
    ],
)
def test_play_again_starts_the_same_kind_of_game(client, catalog, form, same):
    first = start_game(client, **form)
    ended = client.post(f"/play/{first.pk}/abandon/", **HTMX).content.decode()
    again = start_game(client, **play_again_form(ended))
    assert again.pk != first.pk and same(again) == same(first)
    if form.get("draw_word") == "on":
        assert again.secret and again.state["secret_source"] == "word_list"
    assert 'href="/play/"' in ended  # another kind of game is one link away


def test_a_model_game_has_no_play_again_form_but_the_link(client, catalog):
    game = model_game("dog", ["Is it an animal?"])
    html = client.get(f"/play/{game.pk}/").content.decode()
    assert 'id="play-again"' not in html


def test_the_confirmation_box_holds_the_word_the_guess_named(client, catalog, player):
    client.force_login(player)
    game = start_game(client, role="answerer", guesser="infogain")
    game.refresh_from_db()
    pending = {**game.state["pending"], "question": "Is it a canoe?"}
    Game.objects.filter(pk=game.pk).update(state={**game.state, "pending": pending})
    ended = client.post(
        f"/play/{game.pk}/answer/", {"verdict": "finished", "expected_index": 0}, **HTMX
    ).content.decode()
    box = re.search(r'<input id="secret-input"[^>]*>', ended).group(0)
    assert 'value="canoe"' in box
    done = client.post(f"/play/{game.pk}/confirm/", {"secret": "canoe"}, **HTMX).content.decode()
    assert 'id="revealed-secret">canoe<' in done


def test_a_game_lost_for_want_of_questions_has_an_empty_box(client, catalog, player):
    client.force_login(player)
    game = start_game(client, role="answerer", guesser="infogain", max_turns=1)
    ended = client.post(
        f"/play/{game.pk}/answer/", {"verdict": "no", "expected_index": 0}, **HTMX
    ).content.decode()
    box = re.search(r'<input id="secret-input"[^>]*>', ended).group(0)
    assert "value=" not in box


def _outcome_cell(html: str, game: Game) -> tuple[str, ...]:
    """(the badge's tone, its words) of the game's row in a games table."""
    row = re.search(rf'<a href="/games/{game.pk}/">{game.pk}</a>.*?</tr>', html, flags=re.S)
    return re.search(r'<span class="badge outcome-(\w+)">([^<]+)</span>', row.group(0)).groups()


def test_games_lists_show_the_persons_side_of_a_game_they_answered(client, catalog, player):
    stumped = Game.objects.create(
        mode="human_judge",
        player=player,
        secret="yak",
        status="finished",
        outcome="lost",
        n_turns=20,
        guesser=ModelSpec.objects.get(name="infogain"),
    )
    found = Game.objects.create(
        mode="human_judge",
        player=player,
        secret="dog",
        status="finished",
        outcome="won",
        n_turns=6,
        guesser=ModelSpec.objects.get(name="infogain"),
    )
    asked = Game.objects.create(
        mode="human_guesser",
        player=player,
        secret="cat",
        status="finished",
        outcome="lost",
        n_turns=20,
        judge=ModelSpec.objects.get(name="kb"),
    )
    for url in ("/games/", f"/players/{player.username}/"):
        html = client.get(url).content.decode()
        assert _outcome_cell(html, stumped) == ("won", "stumped the model")
        assert _outcome_cell(html, found) == ("lost", "model found the word")
        assert _outcome_cell(html, asked) == ("lost", "lost")  # the person asked and lost
        assert "the person's side" in html


def test_each_judge_on_the_start_form_says_what_it_does(client, catalog):
    html = client.get("/play/").content.decode()
    notes = dict(
        re.findall(
            r'<p class="help judge-note" data-judge-note="([^"]+)"><strong>[^<]+</strong>: '
            r"([^<]+)</p>",
            html,
        )
    )
    judges = set(
        re.findall(
            r'<option value="([^"]+)"', html.split('id="ask-judge"')[1].split("</select>")[0]
        )
    )
    assert {"kb", "kb-any-sense", "kb-closed"} <= set(notes) <= judges
    assert len(set(notes.values())) == len(notes)  # no two judges described alike
    for name, note in notes.items():
        assert note == escape(ModelSpec.objects.get(name=name).description)
    assert "every sense of the word" in notes["kb-any-sense"]
    assert "No to every fact WordNet does not store" in notes["kb-closed"]
    assert 'aria-describedby="ask-judge-notes"' in html


def test_seeding_replaces_the_stale_any_sense_description(catalog):
    from webapp.catalog.services import SUPERSEDED_DESCRIPTIONS, seed_model_specs

    ModelSpec.objects.filter(name="kb-any-sense").update(
        description=SUPERSEDED_DESCRIPTIONS["kb-any-sense"]
    )
    seed_model_specs()
    assert "every sense of the word" in ModelSpec.objects.get(name="kb-any-sense").description


def _answered_game(player, guesser: str, counts: list[int]) -> Game:
    game = Game.objects.create(
        mode="human_judge",
        player=player,
        secret="canoe",
        status="finished",
        outcome="lost",
        n_turns=len(counts),
        guesser=ModelSpec.objects.get(name=guesser),
    )
    for i, (left, verdict) in enumerate(zip(counts, ["no", "yes", "no"])):
        game.turns.create(index=i, question=f"Question {i}?", verdict=verdict, candidates_left=left)
    return game


def test_the_natural_guessers_soft_count_is_named_likely_candidates(client, catalog, player):
    """Issue 46 item 4: "Candidates left" went up after a Yes. The natural guesser counts the words
    within a factor of its likeliest (games.guessers.natural.SHOWN), which grows when an answer
    makes the likeliest word less likely: the pages name it for what it is."""
    soft = _answered_game(player, "natural", [900, 163, 259])  # 163, a Yes, then 259
    html = client.get(f"/games/{soft.pk}/").content.decode()
    header = re.search(r'<table class="data turns-table">.*?</thead>', html, flags=re.S).group(0)
    assert "Likely candidates" in header and "Candidates left" not in header
    assert "can grow after an answer" in html and "1/1,000 as likely as its likeliest" in html
    assert "Candidates the guesser had left" not in html
    data = json.loads(
        re.search(
            r'id="chart-data" type="application/json">(.*?)</script>', html, flags=re.S
        ).group(1)
    )
    assert data["candidates_label"] == "likely candidates"

    hard = _answered_game(player, "infogain", [900, 163, 40])  # words fitting every answer
    html = client.get(f"/games/{hard.pk}/").content.decode()
    assert '<th scope="col">Candidates left</th>' in html and "only falls" in html
    assert "Likely candidates" not in html
