"""Arena services: pairing from stored battles, outcomes, what counts, exclusions, rate limit."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from games import rules
from games.types import Verdict
from tests.webapp.arena.support import STRONG, WEAK, play_out, seed_arena, stored_battle
from tests.webapp.play.support import visitor_of
from webapp.arena import board, selectors, services
from webapp.arena.models import ArenaExclusion
from webapp.catalog.models import ModelKind
from webapp.core.exceptions import ApplicationError
from webapp.play import services as play_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("ada", password="pw-ada-123456")


@pytest.fixture
def drawn(monkeypatch):
    monkeypatch.setattr(play_services, "draw_secret", lambda words, judge: "dog")


def test_pairing_takes_the_pair_that_met_least_counting_unfinished_battles(user):
    seed_arena(("third-guesser", ModelKind.INFOGAIN))
    stored_battle(STRONG, WEAK, "a")
    stored_battle(WEAK, STRONG, "")  # unfinished: still a meeting
    stored_battle(STRONG, "third-guesser", "tie")
    battle = services.battle_start(visitor=visitor_of(user), rng=random.Random(3))
    assert {battle.guesser_a.name, battle.guesser_b.name} == {WEAK, "third-guesser"}
    meetings = services.pair_meetings()
    assert meetings[frozenset((WEAK, "third-guesser"))] == 1
    assert meetings[frozenset((STRONG, WEAK))] == 2  # both side orders of one pair add up


def test_sides_are_random_and_pairs_balance_over_many_starts(arena, user):
    seed = random.Random(0)
    sides = {battle_side for _ in range(6) for battle_side in [_start_side(user, seed)]}
    assert sides == {STRONG, WEAK}  # the strong guesser was drawn on both sides


def _start_side(user, rng) -> str:
    return services.battle_start(visitor=visitor_of(user), rng=rng).guesser_a.name


def test_a_played_battle_has_its_outcome_the_strong_side_wins(arena, user, drawn):
    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor, word_list="dbrl/paper_test")
    battle = play_out(battle, visitor, "dog")
    strong_side = "a" if battle.guesser_a.name == STRONG else "b"
    assert battle.outcome == strong_side
    assert battle.word == "dog" and battle.word_in_kb is True
    assert battle.game_a.secret == battle.game_b.secret == "dog"
    rows, meta = board.arena_board()
    assert meta["battles"] == 1
    assert [r["name"] for r in rows] == [STRONG, WEAK] and rows[0]["wins"] == 1


def test_a_kept_word_is_typed_at_the_end_and_an_unknown_word_is_kept_flagged(arena, user):
    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor)
    assert battle.word_source == "kept" and not battle.word
    battle = play_out(battle, visitor, "?", answer=lambda secret, q: Verdict.NO.value)
    context = selectors.battle_context(battle)
    assert context["needs_word"] and not context["over"]
    battle = services.battle_finish(
        public_id=battle.public_id, visitor=visitor, word="Flibbertigibbet"
    )
    assert battle.outcome == "tie"  # both failed
    assert battle.word == "flibbertigibbet" and battle.word_in_kb is False
    # two knowledge-base guessers could not name it: a certain tie, out of the ratings, but the
    # word is kept, not dropped
    assert battle.word_nameable is False and board.arena_board()[1]["battles"] == 0
    words = board.arena_words_refresh().entries.values_list("word__text", "stats")
    assert list(words) == [("flibbertigibbet", {"in_kb": False, "battles": 1})]


def test_a_win_must_name_the_typed_word(arena, user):
    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor)

    def answer(secret, question):  # "That's my word" at each side's first guess of one thing
        return Verdict.FINISHED.value if rules.guessed_word(question) else Verdict.NO.value

    battle = play_out(battle, visitor, "?", answer=answer)
    won = [g for g in (battle.game_a, battle.game_b) if g.won]
    assert won, "a side should have been told it found the word"
    with pytest.raises(ApplicationError, match="does not name"):
        services.battle_finish(public_id=battle.public_id, visitor=visitor, word="xylophone")
    assert not services.battle_get(battle.public_id, visitor).finished


def test_half_finished_and_given_up_battles_count_nowhere(arena, user):
    stored_battle(STRONG, WEAK, "a")
    stored_battle(STRONG, WEAK, "")  # half-finished
    visitor = visitor_of(user)
    given_up = services.battle_start(visitor=visitor)
    services.battle_abandon(public_id=given_up.public_id, visitor=visitor)
    assert board.arena_board()[1]["battles"] == 1
    assert services.pair_meetings()[frozenset((STRONG, WEAK))] == 3
    with pytest.raises(ApplicationError):
        services.battle_finish(public_id=given_up.public_id, visitor=visitor, word="dog")


def test_excluded_people_are_left_out_and_the_exclusion_is_recorded(arena, user):
    researcher = get_user_model().objects.create_user("rita", password="pw-rita-123456")
    stored_battle(STRONG, WEAK, "a", player=user)
    stored_battle(STRONG, WEAK, "b", guest_key="g1")
    stored_battle(STRONG, WEAK, "a")
    services.person_exclude(by=researcher, user=user, reason="answered at random")
    services.person_exclude(by=researcher, guest_key="g1")
    assert board.arena_board()[1]["battles"] == 1
    record = ArenaExclusion.objects.get(player=user)
    assert record.excluded_by == researcher and record.created_at is not None
    services.person_include(by=researcher, user=user)
    assert board.arena_board()[1]["battles"] == 2
    record.refresh_from_db()
    assert record.lifted_by == researcher and record.lifted_at is not None


def test_names_are_hidden_until_the_end(arena, user, drawn):
    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor, word_list="dbrl/paper_test")
    data = selectors.battle_api_data(battle)
    assert STRONG not in str(data) and WEAK not in str(data)
    assert str(battle.game_a.pk) not in str([s.get("game_id") for s in data["sides"]])
    battle = play_out(battle, visitor, "dog")
    data = selectors.battle_api_data(battle)
    assert {s["name"] for s in data["sides"]} == {STRONG, WEAK}
    assert any(t["top"] for s in data["sides"] for t in s["turns"])  # infogain's candidates


@override_settings(ARENA_START_LIMIT=(2, 3600))
def test_starting_battles_is_rate_limited_per_person(arena, user):
    visitor = visitor_of(user)
    for _ in range(2):
        services.battle_start(visitor=visitor)
    with pytest.raises(ApplicationError) as err:
        services.battle_start(visitor=visitor)
    assert err.value.status == 429
    other = get_user_model().objects.create_user("bo", password="pw-bo-1234567")
    services.battle_start(visitor=visitor_of(other))  # another person is not limited by it


def test_someone_else_cannot_answer_a_battle(arena, user):
    battle = services.battle_start(visitor=visitor_of(user))
    other = get_user_model().objects.create_user("eve", password="pw-eve-123456")
    with pytest.raises(ApplicationError) as err:
        services.battle_get(battle.public_id, visitor_of(other))
    assert err.value.status == 403


def test_training_bases_are_not_drawn(db):
    specs = seed_arena(("untrained-base", ModelKind.INFOGAIN))
    specs["untrained-base"].options = {"opponent": False}
    specs["untrained-base"].save()
    assert [s.name for s in services.arena_guessers()] == [WEAK, STRONG]


def test_including_nobody_lifts_no_ones_exclusion(arena, user):
    services.person_exclude(by=None, user=user, reason="spam")
    with pytest.raises(ApplicationError):
        services.person_include(by=None)  # no user, no guest key: not "every user"
    assert services.exclusion_active(user=user) is not None


def test_a_guesser_failing_mid_battle_is_not_named(arena, user, monkeypatch):
    from games.guessers.base import Guesser

    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor)

    def fail(self, states):
        raise RuntimeError("model server down")

    monkeypatch.setattr(Guesser, "ask", lambda self, state: fail(self, [state]))
    with pytest.raises(ApplicationError) as err:
        services.battle_answer(
            public_id=battle.public_id, visitor=visitor, side="a", verdict="no", expected_index=0
        )
    assert err.value.status == 502 and "Guesser A" in err.value.message
    assert STRONG not in err.value.message and WEAK not in err.value.message
    assert "server down" not in err.value.message  # its details may name the model it runs
    battle.game_a.refresh_from_db()
    assert battle.game_a.n_turns == 0  # as the message says: the answer was not stored


def _kept_battle_both_over(user):
    visitor = visitor_of(user)
    battle = services.battle_start(visitor=visitor)
    no = lambda secret, question: Verdict.NO.value  # noqa: E731
    return play_out(battle, visitor, "?", answer=no), visitor


def test_giving_up_while_the_word_is_checked_leaves_one_end_not_both(arena, user, monkeypatch):
    battle, visitor = _kept_battle_both_over(user)
    confirm = play_services.game_confirm_secret

    def abandon_meanwhile(**kwargs):  # the give-up click lands while finish checks the word
        if not services.battle_get(battle.public_id, visitor).abandoned:
            services.battle_abandon(public_id=battle.public_id, visitor=visitor)
        return confirm(**kwargs)

    monkeypatch.setattr(play_services, "game_confirm_secret", abandon_meanwhile)
    services.battle_finish(public_id=battle.public_id, visitor=visitor, word="teapot")
    battle = services.battle_get(battle.public_id, visitor)
    assert battle.abandoned and not battle.outcome


def test_giving_up_just_after_the_battle_finished_is_refused(arena, user, monkeypatch):
    battle, visitor = _kept_battle_both_over(user)
    from django.utils import timezone

    now, calls = timezone.now, []

    def finish_first():  # the finish lands between give-up's checks and its update
        if not calls:
            calls.append(1)
            services.battle_finish(public_id=battle.public_id, visitor=visitor, word="teapot")
        return now()

    monkeypatch.setattr(timezone, "now", finish_first)
    with pytest.raises(ApplicationError) as err:
        services.battle_abandon(public_id=battle.public_id, visitor=visitor)
    assert err.value.status == 409
    battle = services.battle_get(battle.public_id, visitor)
    assert battle.outcome == "tie" and not battle.abandoned


def test_a_guesser_failing_at_the_start_leaves_no_half_battle_and_is_not_named(
    arena, user, monkeypatch
):
    from games.guessers.base import Guesser
    from webapp.arena.models import Battle
    from webapp.play.models import Game

    asked = []
    real_ask = Guesser.ask

    def second_side_fails(self, state):
        asked.append(1)
        if len(asked) > 1:  # the first side's first question is asked, the second side's fails
            raise RuntimeError("model server down")
        return real_ask(self, state)

    monkeypatch.setattr(Guesser, "ask", second_side_fails)
    with pytest.raises(ApplicationError) as err:
        services.battle_start(visitor=visitor_of(user), rng=random.Random(0))
    assert err.value.status == 502 and "Guesser B failed to ask its first question" in (
        err.value.message
    )
    assert STRONG not in err.value.message and WEAK not in err.value.message
    assert Game.objects.count() == 0 and Battle.objects.count() == 0


def test_a_guesser_withdrawn_while_a_battle_starts_is_not_named(arena, user, monkeypatch):
    """A guesser deactivated between the draw and its game's start: the refusal (a 4xx) says
    which side, not which guesser, and no half battle is left."""
    from webapp.arena.models import Battle
    from webapp.catalog.models import ModelSpec
    from webapp.play.models import Game

    drawn_specs = services.arena_guessers()
    monkeypatch.setattr(services, "arena_guessers", lambda: drawn_specs)
    ModelSpec.objects.filter(name__in=[STRONG, WEAK]).update(is_active=False)
    with pytest.raises(ApplicationError) as err:
        services.battle_start(visitor=visitor_of(user), rng=random.Random(0))
    assert err.value.status < 500
    assert STRONG not in err.value.message and WEAK not in err.value.message, err.value.message
    assert Game.objects.count() == 0 and Battle.objects.count() == 0


def _waiting(game, turns: list[str]) -> None:
    """`game` asked one question per judge in `turns` ("human" or "rules") and waits on the next."""
    from webapp.play.models import Turn

    for index, judge in enumerate(turns):
        Turn.objects.create(
            game=game, index=index, question=f"Is it {index}?", verdict="no", extra={"judge": judge}
        )
    game.n_turns = len(turns)
    game.state = {"pending": {"index": len(turns), "question": "Is it an animal?"}}
    game.save()


def test_the_turn_alternates_though_the_rules_answered_a_repeat_on_one_side(arena):
    battle = stored_battle(STRONG, WEAK, "")
    _waiting(battle.game_a, ["human", "rules"])  # answered once, then its repeat was decided
    _waiting(battle.game_b, ["human"])  # answered once: A's turn again, not B's twice in a row
    context = selectors.battle_context(battle)
    assert context["active"] == "a"
    assert context["turn"] == {"label": "A", "number": 3, "alone": False}


def _pool_only(specs: dict, pools: dict[str, list[str]]) -> None:
    """Make each named guesser one that knows only its pool (options.pool_word_list)."""
    from webapp.catalog.services import word_list_version_create

    for name, words in pools.items():
        word_list_version_create(name=f"pool of {name}", entries=[{"word": w} for w in words])
        specs[name].options = {"pool_word_list": f"pool of {name}"}
        specs[name].save()


def test_a_drawn_word_is_one_a_side_can_name_and_none_is_refused(arena, user, monkeypatch):
    from webapp.catalog.services import word_list_version_create

    _pool_only(arena, {STRONG: ["dog"], WEAK: ["cat"]})
    word_list_version_create(name="mixed", entries=[{"word": w} for w in ("knife", "dog", "ox")])
    word_list_version_create(name="neither", entries=[{"word": "knife"}])
    offered = []
    monkeypatch.setattr(
        play_services, "draw_secret", lambda words, judge: offered.append(list(words)) or "dog"
    )
    services.battle_start(visitor=visitor_of(user), word_list="mixed")
    assert offered == [["dog"]]  # knife and ox: a certain tie of two pool-only guessers
    with pytest.raises(ApplicationError, match="No guesser can name") as err:
        services.battle_start(visitor=visitor_of(user), word_list="neither")
    assert err.value.status == 400


def test_a_tie_on_a_word_neither_side_can_name_counts_nowhere_and_says_so(arena):
    from django.template.loader import render_to_string

    from webapp.play.models import GameOutcome, GameStatus

    _pool_only(arena, {STRONG: ["dog"], WEAK: ["cat"]})
    ends = {}
    for word in ("knife", "dog"):
        battle = stored_battle(STRONG, WEAK, "")
        for game in (battle.game_a, battle.game_b):  # both failed
            game.status, game.outcome = GameStatus.FINISHED, GameOutcome.LOST
            game.save()
        battle = services._finish(battle, word)
        assert battle.outcome == "tie"
        page = render_to_string("arena/partials/reveal.html", selectors.battle_context(battle))
        ends[word] = " ".join(page.split())
    assert board.arena_board()[1]["battles"] == 1  # the tie on dog, which STRONG could name
    assert "it counts nowhere" in ends["knife"]
    assert "from their next refresh, within 5 minutes" in ends["dog"]
