"""Seeding the shipped trained guessers (issue 23): model specs with provenance, their pool as a
word list, their stored evaluation on the boards, and the untrained tiny model kept out of play."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict
from webapp.catalog import shipped
from webapp.catalog.builders import guesser_for
from webapp.catalog.models import ModelSpec, WordList
from webapp.catalog.selectors import model_specs_for, model_specs_to_play
from webapp.catalog.services import seed_model_specs

pytestmark = pytest.mark.django_db


def test_seeding_registers_the_shipped_guessers_with_provenance_and_their_pool(tmp_path):
    seed_model_specs(tmp_path / "tiny")
    assert shipped.seed_pool_word_list() == shipped.POOL_LIST
    created = shipped.seed_guesser_specs()
    assert {"tiny-20q-sft", "tiny-20q-starpo"} <= set(created)
    pool = WordList.objects.get(name=shipped.POOL_LIST)
    splits = dict(pool.entries.values_list("word__text", "split"))
    assert len(splits) == 400 and list(splits.values()).count("test") == 150
    assert pool.provenance["bench_commit"]
    spec = ModelSpec.objects.get(name="tiny-20q-sft")
    assert spec.kind == "transformers" and Path(spec.path, "model.safetensors").is_file()
    assert spec.sampling == {"temperature": 1.0, "max_new_tokens": 24}
    assert spec.options["pool_word_list"] == shipped.POOL_LIST
    assert spec.options["provenance"]["seed"] == 0
    assert "knows only its pool of 400 words" in spec.description
    assert shipped.seed_guesser_specs() == [] and shipped.seed_pool_word_list() is None
    # people play the trained guessers, not the untrained tiny model (a training base still)
    to_play = set(model_specs_to_play("guesser").values_list("name", flat=True))
    assert {"tiny-20q-sft", "infogain"} <= to_play and "tiny-llama" not in to_play
    assert "tiny-llama" in set(model_specs_for("guesser").values_list("name", flat=True))


def test_an_earlier_seeds_tiny_model_becomes_a_training_base(tmp_path):
    ModelSpec.objects.create(name="tiny-llama", kind="transformers", path=str(tmp_path))
    seed_model_specs(tmp_path)
    assert ModelSpec.objects.get(name="tiny-llama").options == {"opponent": False}


def test_a_shipped_guesser_plays_with_its_sampling_and_reports_its_pool_candidates(tmp_path):
    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    guesser = guesser_for(ModelSpec.objects.get(name="tiny-20q-sft"))
    assert (guesser.sampling.temperature, guesser.sampling.max_new_tokens) == (1.0, 24)
    assert guesser.chat_format.prompt == "Your question:"  # the benchmark's short prompt
    assert len(guesser.candidate_pool) == 400
    ask = guesser.ask(guesser.start(seed=3))
    assert ask.question and len(ask.top_candidates) == 5


def snapshot(directory: Path, name: str) -> dict:
    """A two-game stored evaluation of `name` on held-out words (one won, one lost)."""
    config = GameConfig(max_turns=20, win_rule="reference")
    games = [
        Trajectory(
            "rocket",
            1,
            config,
            [
                Turn(0, "Is it a kind of device?", Verdict.YES, "Yes."),
                Turn(1, "Is it a rocket?", Verdict.FINISHED, "Finished."),
            ],
            Outcome.WON,
        ),
        Trajectory(
            "anatomy",
            2,
            config,
            [Turn(i, f"Is it a kind of thing {i}?", Verdict.NO, "No.") for i in range(20)],
            Outcome.LOST,
        ),
    ]
    with gzip.open(directory / f"{name}.jsonl.gz", "wt") as out:
        out.writelines(json.dumps(g.to_dict()) + "\n" for g in games)
    meta = {
        "file": f"{name}.jsonl.gz",
        "digest": f"digest-of-{name}",
        "command": "python -m games eval ...",
        "commit": "0" * 40,
        "samples": 1,
        "max_turns": 20,
        "win_rule": "reference",
        "seed": 0,
        "summary": {"success_rate": 0.5, "n_games": 2},
    }
    (directory / "evaluation.json").write_text(json.dumps({"guessers": {name: meta}}))
    return meta


def test_the_stored_evaluation_is_imported_once_and_puts_the_guesser_on_the_boards(tmp_path):
    from webapp.jobs.models import Job
    from webapp.leaderboards.selectors import leaderboard_latest, leaderboard_model_keys

    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    snapshot(tmp_path, "tiny-20q-sft")
    assert shipped.seed_shipped_evaluations(tmp_path) == ["tiny-20q-sft"]
    job = Job.objects.get(kind="evaluation")
    assert (job.status, job.config["guesser"], job.config["split"]) == (
        "finished",
        "tiny-20q-sft",
        "test",
    )
    assert job.result["snapshot"]["commit"] == "0" * 40
    assert job.games.count() == 2 and job.games.get(secret="rocket").turns.count() == 2
    key = next(k for k in leaderboard_model_keys() if k["word_list"]["name"] == shipped.POOL_LIST)
    rows = leaderboard_latest("models", key["key"]).rows
    assert [(r["name"], r["success"]) for r in rows] == [("tiny-20q-sft", 0.5)]
    ability = leaderboard_latest("ability").rows
    assert [r["name"] for r in ability] == ["tiny-20q-sft"]
    assert shipped.seed_shipped_evaluations(tmp_path) == []  # idempotent
    assert Job.objects.filter(kind="evaluation").count() == 1


def test_a_shipped_evaluation_whose_games_file_is_missing_is_skipped_not_a_crash(tmp_path):
    from webapp.jobs.models import Job

    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    snapshot(tmp_path, "tiny-20q-sft")
    (tmp_path / "tiny-20q-sft.jsonl.gz").unlink()
    assert shipped.seed_shipped_evaluations(tmp_path) == []
    assert not Job.objects.filter(kind="evaluation").exists()


def test_a_reshipped_evaluation_replaces_the_imported_one_instead_of_counting_twice(tmp_path):
    from webapp.jobs.models import Job
    from webapp.play.models import Game

    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    meta = snapshot(tmp_path, "tiny-20q-sft")
    assert shipped.seed_shipped_evaluations(tmp_path) == ["tiny-20q-sft"]
    first = Job.objects.get(kind="evaluation")
    meta["digest"] = "digest-of-a-new-snapshot"
    (tmp_path / "evaluation.json").write_text(json.dumps({"guessers": {"tiny-20q-sft": meta}}))
    assert shipped.seed_shipped_evaluations(tmp_path) == ["tiny-20q-sft"]
    job = Job.objects.get(kind="evaluation")  # one job: the new snapshot's
    assert job.pk != first.pk and job.result["snapshot"]["digest"] == "digest-of-a-new-snapshot"
    assert Game.objects.count() == 2 and set(Game.objects.values_list("job", flat=True)) == {job.pk}


def test_a_persons_spec_with_a_shipped_guessers_name_is_left_alone(tmp_path):
    from webapp.jobs.models import Job

    mine = ModelSpec.objects.create(
        name="tiny-20q-sft", kind="openai", path="http://127.0.0.1:9/v1", options={"model": "m"}
    )
    seed_model_specs()
    shipped.seed_pool_word_list()
    assert "tiny-20q-sft" not in shipped.seed_guesser_specs()
    mine.refresh_from_db()
    assert (mine.kind, mine.path, mine.options) == (
        "openai",
        "http://127.0.0.1:9/v1",
        {"model": "m"},
    )
    snapshot(tmp_path, "tiny-20q-sft")
    assert (
        shipped.seed_shipped_evaluations(tmp_path) == []
    )  # its games are not the person's model's
    assert not Job.objects.filter(kind="evaluation").exists()
