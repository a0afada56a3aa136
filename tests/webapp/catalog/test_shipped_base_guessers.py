"""Seeding a shipped guesser on a pretrained base (issue 32): an adapter folder whose
guesser.json names its base, registered as a guesser with the base by name and the folder as its
adapter, offered to play, and its stored evaluation on the paper's words against the judge it
names imported onto the boards."""

from __future__ import annotations

import gzip
import json

import pytest

from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict
from webapp.catalog import shipped
from webapp.catalog.builders import spec_string
from webapp.catalog.models import ModelSpec, WordList
from webapp.catalog.selectors import model_specs_to_play
from webapp.catalog.services import seed_model_specs, seed_word_lists

pytestmark = pytest.mark.django_db

SETTINGS = {
    "base": "smollm2-135m-instruct",
    "guesser_prompt": "paper",
    "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_new_tokens": 48},
    "judge": "pretrained",
    "word_list": "dbrl/paper_test",
    "max_turns": 20,
    "win_rule": "reference",
    "provenance": {
        "arm": "sft",
        "seed": 0,
        "trained": "SFT on 768 of the paper's SFT turns",
        "bench_commit": "0" * 40,
        "command": "python -m bench.learning --base smollm2-135m-instruct --until sft",
    },
    "results": {"cli": {"success_rate": 0.05, "success_ci95": [0.01, 0.09], "n_words": 2}},
}


def ship(tmp_path):
    folder = tmp_path / "smol-20q-test"
    folder.mkdir()
    (folder / "guesser.json").write_text(json.dumps(SETTINGS))
    (folder / "MODEL_CARD.md").write_text("# smol-20q-test\n")
    config = GameConfig(max_turns=20, win_rule="reference")
    games = [
        Trajectory("apple", 1, config, [Turn(0, "Is it an apple?", Verdict.FINISHED, "")]),
        Trajectory("tiger", 2, config, [Turn(0, "Is it a fruit?", Verdict.NO, "No.")]),
    ]
    games[0].outcome, games[1].outcome = Outcome.WON, Outcome.LOST
    evaluation = tmp_path / "evaluation"
    evaluation.mkdir()
    with gzip.open(evaluation / "smol-20q-test.jsonl.gz", "wt") as out:
        out.writelines(json.dumps(g.to_dict()) + "\n" for g in games)
    meta = {
        "file": "smol-20q-test.jsonl.gz",
        "digest": "digest",
        "command": "python -m bench.learning ...",
        "commit": "0" * 40,
        "samples": 1,
        "max_turns": 20,
        "win_rule": "reference",
        "seed": 0,
        "judge_spec": "pretrained",
        "word_list": "dbrl/paper_test",
        "split": "",
        "summary": {"success_rate": 0.5, "n_games": 2},
    }
    (evaluation / "evaluation.json").write_text(json.dumps({"guessers": {folder.name: meta}}))
    return folder, evaluation


def test_a_snapshot_whose_word_list_is_not_seeded_is_skipped(tmp_path, no_word_lists):
    from webapp.jobs.models import Job

    seed_model_specs()  # no word lists
    _, evaluation = ship(tmp_path)
    shipped.seed_guesser_specs(tmp_path)
    assert shipped.seed_shipped_evaluations(evaluation) == []
    assert not Job.objects.filter(kind="evaluation").exists()


def test_an_adapter_on_a_base_is_registered_offered_and_its_evaluation_imported(tmp_path):
    from webapp.jobs.models import Job

    seed_model_specs()
    seed_word_lists()
    folder, evaluation = ship(tmp_path)
    assert shipped.seed_pool_word_list(tmp_path) is None  # no pool: it names any word
    assert shipped.seed_guesser_specs(tmp_path) == ["smol-20q-test"]
    spec = ModelSpec.objects.get(name="smol-20q-test")
    assert (spec.kind, spec.role, spec.path) == ("transformers", "guesser", SETTINGS["base"])
    assert spec.adapter_path == str(folder) and spec_string(spec) == "hf:smollm2-135m-instruct"
    assert spec.options["judge"] == "pretrained"
    assert spec.options["held_out_success"] == {"rate": 0.05, "ci95": [0.01, 0.09], "words": 2}
    assert "LoRA adapter" in spec.description and "dbrl/paper_test" in spec.description
    assert shipped.is_shipped_spec(spec)
    assert "smol-20q-test" in set(model_specs_to_play("guesser").values_list("name", flat=True))

    assert shipped.seed_shipped_evaluations(evaluation) == ["smol-20q-test"]
    job = Job.objects.get(kind="evaluation")
    assert (job.config["judge"], job.config["word_list"]) == ("pretrained", "dbrl/paper_test")
    assert job.games.count() == 2 and job.games.filter(outcome="won").count() == 1
    newest = WordList.objects.filter(name="dbrl/paper_test").order_by("-version").first()
    assert set(job.games.values_list("word_list", flat=True)) == {newest.pk}
    assert shipped.seed_guesser_specs(tmp_path) == []  # idempotent
