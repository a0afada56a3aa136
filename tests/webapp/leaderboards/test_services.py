"""leaderboards_refresh on hand-built games: exact numbers for every board, keys, history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from games.metrics import mean_at_k_interval, wilson_interval
from webapp.leaderboards.models import LeaderboardSnapshot
from webapp.leaderboards.models_board import PRELIMINARY_GAMES, models_key
from webapp.leaderboards.selectors import leaderboard_latest, leaderboard_model_keys
from webapp.leaderboards.services import leaderboards_refresh

from .conftest import T0

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_guessers(spec, word_list, make_game):
    """alpha and beta, 3 words x k=2 samples, judged by kb at 20 turns; plus games that must not
    count."""
    alpha, beta, kb = spec("alpha"), spec("beta"), spec("kb", role="judge", kind="kb")
    common = {"judge": kb, "word_list": word_list}
    # alpha: apple 2/2, bread 1/2, chair 0/2
    for secret, won, turns in [
        ("apple", True, 5),
        ("apple", True, 7),
        ("bread", True, 9),
        ("bread", False, 20),
        ("chair", False, 20),
        ("chair", False, 20),
    ]:
        make_game(secret, won, turns, guesser=alpha, **common)
    # beta: apple 2/2, bread 2/2, chair 1/2
    for secret, won, turns in [
        ("apple", True, 10),
        ("apple", True, 10),
        ("bread", True, 10),
        ("bread", True, 10),
        ("chair", True, 10),
        ("Chair ", False, 20),
    ]:
        make_game(secret, won, turns, guesser=beta, **common)
    # not on this board: another max_turns, a game still playing, an abandoned one, a person's game
    make_game("apple", False, 50, max_turns=50, guesser=alpha, **common)
    make_game("apple", None, 3, outcome="playing", guesser=alpha, finished_at=None, **common)
    make_game("bread", None, 4, outcome="abandoned", guesser=alpha, **common)
    make_game("apple", True, 3, mode="human_guesser", judge=kb, word_list=word_list)
    return alpha, beta, kb, word_list


def test_models_board_numbers_on_two_guessers_three_words_k2(two_guessers):
    alpha, beta, kb, wl = two_guessers
    summary = leaderboards_refresh()
    assert summary["models_keys"] == 2  # 20 turns and 50 turns

    snapshot = leaderboard_latest("models", models_key(wl.pk, kb.pk, 20))
    first, second = snapshot.rows
    assert [first["name"], second["name"]] == ["beta", "alpha"]  # sorted by success
    assert [first["rank"], second["rank"]] == [1, 2]

    # alpha: per-word rates 1, 1/2, 0 -> mean@2 = 1/2; pass@2 per word 1, 1, 0 -> 2/3
    assert second["success"] == pytest.approx(0.5)
    assert (second["success_lo"], second["success_hi"]) == pytest.approx(
        mean_at_k_interval([1.0, 0.5, 0.0])
    )
    assert second["pass_at_k"] == pytest.approx(2 / 3, abs=1e-6)
    assert second["k"] == 2
    assert second["mean_turns"] == pytest.approx((5 + 7 + 9 + 20 + 20 + 20) / 6, abs=1e-6)
    assert second["mean_turns_solved"] == pytest.approx(7.0)
    assert (second["games"], second["wins"], second["words"]) == (6, 3, 3)

    # beta: rates 1, 1, 1/2 -> 5/6; pass@2 = 1 for every word ("Chair " is the same word as "chair")
    assert first["success"] == pytest.approx(5 / 6, abs=1e-6)
    assert (first["success_lo"], first["success_hi"]) == pytest.approx(
        mean_at_k_interval([1.0, 1.0, 0.5]), abs=1e-6
    )
    assert first["pass_at_k"] == pytest.approx(1.0)
    assert first["mean_turns"] == pytest.approx(70 / 6, abs=1e-6)
    assert first["mean_turns_solved"] == pytest.approx(10.0)
    assert first["words"] == 3
    assert first["preliminary"] and second["preliminary"]  # 6 < PRELIMINARY_GAMES
    assert first["last_game_at"] == (T0 + timedelta(minutes=12)).isoformat()

    assert snapshot.meta["label"] == "test/words v2 · judge kb · 20 turns · reference rule"
    assert (snapshot.meta["k_min"], snapshot.meta["k_max"]) == (2, 2)
    assert snapshot.meta["games"] == 12 and snapshot.meta["max_turns"] == 20
    assert snapshot.meta["judge"] == {"id": kb.pk, "name": "kb"}

    other = leaderboard_latest("models", models_key(wl.pk, kb.pk, 50))
    assert [(r["name"], r["games"], r["success"]) for r in other.rows] == [("alpha", 1, 0.0)]
    # the default board is the most played 20-turn one, and the index lists both
    assert leaderboard_latest("models").key == snapshot.key
    assert [k["max_turns"] for k in leaderboard_model_keys()] == [20, 50]


def test_uneven_samples_use_the_smallest_count_as_k(spec, make_game):
    g = spec("gamma")
    for won in (True, False, False):
        make_game("apple", won, guesser=g)
    for won in (True, False):
        make_game("bread", won, guesser=g)
    leaderboards_refresh()
    (row,) = leaderboard_latest("models").rows
    assert row["k"] == 2
    # apple: n=3, c=1 -> pass@2 = 1 - C(2,2)/C(3,2) = 2/3; bread: n=2, c=1 -> 1
    assert row["pass_at_k"] == pytest.approx((2 / 3 + 1) / 2, abs=1e-6)
    assert row["success"] == pytest.approx((1 / 3 + 1 / 2) / 2, abs=1e-6)
    assert row["mean_turns_solved"] == 10.0
    # no word list and no judge still make a board (a game config without max_turns counts as 20)
    assert leaderboard_latest("models").key == models_key(None, None, 20)


def test_preliminary_mark_goes_at_the_threshold(spec, make_game):
    from webapp.jobs.models import Job
    from webapp.play.models import Game

    many, few = spec("many"), spec("few")
    job = Job.objects.create(kind="evaluation", status="finished")
    Game.objects.bulk_create(
        [
            Game(
                mode="model",
                secret=f"w{i % 50}",
                guesser=many,
                outcome="won" if i % 3 else "lost",
                status="finished",
                n_turns=12,
                config={"max_turns": 20},
                finished_at=T0,
                job=job,
                sample_index=i,
            )
            for i in range(PRELIMINARY_GAMES)
        ]
    )
    for i in range(PRELIMINARY_GAMES - 1):
        make_game(f"w{i % 50}", i % 2 == 0, guesser=few)
    leaderboards_refresh()
    rows = {r["name"]: r for r in leaderboard_latest("models").rows}
    assert rows["many"]["games"] == PRELIMINARY_GAMES and rows["many"]["preliminary"] is False
    assert rows["few"]["games"] == PRELIMINARY_GAMES - 1 and rows["few"]["preliminary"] is True
    assert rows["many"]["k"] == 4 and rows["many"]["words"] == 50


def test_humans_board_win_rates_wilson_ranking_and_pooled_guests(make_user, spec, make_game):
    kb = spec("kb", role="judge", kind="kb")
    ann, bob, cat = (
        make_user("player", username="ann"),
        make_user("player", username="bob"),
        make_user(username="cat"),
    )
    human = {"mode": "human_guesser", "judge": kb}
    for won, turns in [(True, 6), (True, 8), (True, 10), (False, 20)]:
        make_game("apple", won, turns, player=ann, **human)
    make_game("bread", None, 3, outcome="abandoned", player=ann, **human)
    make_game("apple", True, 4, player=bob, **human)
    make_game(
        "apple", None, 2, outcome="abandoned", player=cat, **human
    )  # only abandoned: not on the board
    make_game("apple", True, 12, guest_key="abc", **human)
    make_game("apple", False, 20, guest_key="def", **human)
    make_game("apple", True, 5, guesser=spec("m"))  # a model game

    leaderboards_refresh()
    rows = leaderboard_latest("humans").rows
    assert [r["name"] for r in rows] == ["ann", "bob", "guests"]
    a, b, guests = rows
    # ann 3/4 outranks bob 1/1: ranked by the lower end of the Wilson interval, not the raw rate
    assert (a["rank"], b["rank"], guests["rank"]) == (1, 2, None)
    assert a["win_rate"] == 0.75 and b["win_rate"] == 1.0
    assert (a["win_rate_lo"], a["win_rate_hi"]) == pytest.approx(wilson_interval(3, 4), abs=1e-6)
    assert (b["win_rate_lo"], b["win_rate_hi"]) == pytest.approx(wilson_interval(1, 1), abs=1e-6)
    assert a["win_rate_lo"] > b["win_rate_lo"]
    assert (a["games"], a["wins"], a["abandoned"], a["mean_questions_solved"]) == (4, 3, 1, 8.0)
    assert (
        a["last_played_at"] == (T0 + timedelta(minutes=5)).isoformat()
    )  # the abandoned game was the last
    assert (guests["kind"], guests["games"], guests["wins"], guests["mean_questions_solved"]) == (
        "guests",
        2,
        1,
        12.0,
    )
    assert leaderboard_latest("humans").meta["players"] == 2


def test_ability_board_ranks_people_and_models_on_one_scale(make_user, spec, make_game):
    kb = spec("kb", role="judge", kind="kb")
    ace, novice = make_user("player", username="ace"), make_user("player", username="novice")
    strong, weak = spec("strong-model"), spec("weak-model")
    words = [f"word{i}" for i in range(10)]
    for i, w in enumerate(words):
        make_game(w, i != 0, 9, mode="human_guesser", player=ace, judge=kb)  # 9/10
        make_game(w, i == 0, 20, mode="human_guesser", player=novice, judge=kb)  # 1/10
        for s in range(2):
            make_game(w, not (i == 0 and s == 0), 8, guesser=strong, judge=kb)  # 19/20
            make_game(w, i < 3 and s == 0, 20, guesser=weak, judge=kb)  # 3/20
    # 50-turn games are another game: they stay out of the ability fit
    for w in words:
        make_game(w, True, 40, max_turns=50, guesser=weak, judge=kb)

    leaderboards_refresh()
    snapshot = leaderboard_latest("ability")
    rows = {r["name"]: r for r in snapshot.rows}
    assert rows["ace"]["kind"] == "human" and rows["weak-model"]["kind"] == "model"
    assert rows["ace"]["theta"] > rows["weak-model"]["theta"]  # a strong person above a weak model
    assert (
        rows["strong-model"]["theta"] > rows["novice"]["theta"]
    )  # a strong model above a weak person
    assert rows["weak-model"]["theta"] > rows["novice"]["theta"]
    assert [r["rank"] for r in snapshot.rows] == [1, 2, 3, 4]
    assert (
        snapshot.rows[0]["theta"]
        >= snapshot.rows[1]["theta"]
        >= snapshot.rows[2]["theta"]
        >= snapshot.rows[3]["theta"]
    )
    assert rows["weak-model"]["games"] == 20 and rows["weak-model"]["wins"] == 3  # no 50-turn games
    for r in snapshot.rows:
        assert r["theta_lo"] < r["theta"] < r["theta_hi"]
        assert r["preliminary"] == (r["games"] < 20)
    assert snapshot.meta["responses"] == 60 and snapshot.meta["words"] == 10
    assert (
        snapshot.meta["humans"] == 2 and snapshot.meta["models"] == 2 and snapshot.meta["converged"]
    )


def test_refresh_keeps_history_and_only_adds_a_snapshot_when_numbers_change(spec, make_game):
    g = spec("delta")
    make_game("apple", True, guesser=g)
    first = leaderboards_refresh()
    assert first["snapshots_written"] == 5  # models (one key), models index, humans, ability, arena
    old = leaderboard_latest("models")

    again = leaderboards_refresh(now=old.computed_at + timedelta(minutes=5))
    assert again["snapshots_written"] == 0
    assert LeaderboardSnapshot.objects.count() == 5
    old.refresh_from_db()
    assert old.meta["checked_at"] == (old.computed_at + timedelta(minutes=5)).isoformat()

    make_game("apple", False, guesser=g)
    third = leaderboards_refresh()
    assert (
        third["snapshots_written"] == 3
    )  # models board, its index (games count) and ability; humans unchanged
    assert LeaderboardSnapshot.objects.filter(board="models").count() == 2  # history is kept
    newest = leaderboard_latest("models")
    assert newest.pk != old.pk and newest.rows[0]["games"] == 2 and newest.rows[0]["success"] == 0.5


def test_empty_database_gives_empty_boards(db):
    leaderboards_refresh()
    assert leaderboard_latest("humans").rows == [] and leaderboard_latest("ability").rows == []
    assert leaderboard_latest("models") is None and leaderboard_model_keys() == []


def test_the_queries_do_not_grow_with_players(
    django_assert_max_num_queries, make_user, spec, make_game
):
    kb = spec("kb", role="judge", kind="kb")
    for i in range(15):
        user = make_user("player")
        guesser = spec(f"m{i}")
        make_game("apple", i % 2 == 0, mode="human_guesser", player=user, judge=kb)
        make_game("apple", i % 3 == 0, guesser=guesser, judge=kb)
    with django_assert_max_num_queries(23):  # 20, and the arena board's battles, snapshot, words
        leaderboards_refresh()


def test_the_beat_task_runs_the_refresh(spec, make_game, settings):
    from workers.tasks import leaderboards_refresh_task

    entry = next(
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "leaderboards.refresh"
    )
    assert entry["schedule"] == 300
    assert leaderboards_refresh_task.name == "leaderboards.refresh"
    make_game("apple", True, guesser=spec("epsilon"))
    result = leaderboards_refresh_task.apply().get()
    assert result["models_keys"] == 1
    assert leaderboard_latest("models").rows[0]["name"] == "epsilon"


def test_usernames_come_from_the_user_table(make_game, spec):
    user = get_user_model().objects.create_user(
        username="renamed-later", password="x-long-password-1"
    )
    make_game("apple", True, mode="human_guesser", player=user)
    leaderboards_refresh()
    assert leaderboard_latest("humans").rows[0]["name"] == "renamed-later"
    assert leaderboard_latest("ability").rows[0]["name"] == "renamed-later"


def _won_by(make_game, secret, question, **fields):
    from webapp.play.models import Turn

    game = make_game(secret, True, 2, **fields)
    Turn.objects.create(game=game, index=0, question="Is it alive?", verdict="no")
    Turn.objects.create(game=game, index=1, question=question, verdict="finished")
    return game


def test_models_board_reports_success_under_both_win_rules(spec, word_list, make_game):
    kb, mentions = spec("kb", role="judge", kind="kb"), spec("mentions")
    common = {"guesser": mentions, "judge": kb, "word_list": word_list}
    _won_by(
        make_game, "jacket", "Is it related to jacket?", **common
    )  # a mention: not a strict win
    _won_by(make_game, "jacket", "Is it a jacket?", **common)
    _won_by(make_game, "city", "Does it have a city center?", **common)
    make_game("city", False, 20, **common)
    make_game(
        "bread", True, 4, **common
    )  # no stored turns: nothing to re-judge, a success under both
    make_game("bread", True, 4, **common)
    # a board of strict-rule games: won by a synonym, which the reference rule does not count
    for question in ("Is it a sofa?", "Is it a couch?"):
        _won_by(
            make_game, "couch", question, config={"max_turns": 20, "win_rule": "strict"}, **common
        )
    leaderboards_refresh()

    reference = leaderboard_latest("models", models_key(word_list.pk, kb.pk, 20))
    (row,) = reference.rows
    assert (
        reference.meta["win_rule"] == "reference"
        and reference.meta["label"] == "test/words v2 · judge kb · 20 turns · reference rule"
    )
    # per word (jacket, city, bread): reference 1, 1/2, 1; strict 1/2, 0, 1
    assert row["success"] == row["reference_success"] == pytest.approx(2.5 / 3, abs=1e-6)
    assert row["strict_success"] == pytest.approx(1.5 / 3, abs=1e-6)
    assert (row["strict_success_lo"], row["strict_success_hi"]) == pytest.approx(
        mean_at_k_interval([0.5, 0.0, 1.0]), abs=1e-6
    )

    strict_key = models_key(word_list.pk, kb.pk, 20, "strict")
    assert strict_key.endswith("|rule:strict")
    strict = leaderboard_latest("models", strict_key)
    (row,) = strict.rows
    assert strict.meta["win_rule"] == "strict" and strict.meta["label"].endswith(
        "20 turns · strict rule"
    )
    assert row["success"] == row["strict_success"] == 1.0 and row["reference_success"] == 0.5
    keys = leaderboard_model_keys()
    assert [(k["win_rule"], k["key"]) for k in keys] == [
        ("reference", reference.key),
        ("strict", strict_key),
    ]
