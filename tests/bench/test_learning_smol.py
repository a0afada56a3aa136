"""bench.learning's pretrained-base world (bench.learning.smol), run end to end on the tiny
from-scratch model in the base's place: every stage stored and resumable, the ordering object as
the miniature's, the belief diagnostic in the test games."""

from __future__ import annotations

import json

import pytest
from safetensors.torch import load_file

from bench.learning.__main__ import Stages
from bench.learning.ordering import ARMS
from bench.learning.scale import with_settings
from bench.learning.ship_smol import ship
from bench.learning.smol import CUDA, SmolScale, smol_pipeline
from games.registry import build_guesser


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    from training.tiny import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("smol") / "base", seed=0))


def test_the_pipeline_runs_every_stage_and_resumes_them(tiny_base, tmp_path):
    scale = SmolScale(
        base=tiny_base,
        judge="kb",
        check_judge="kb:any",
        max_turns=2,
        sft_rows=6,
        sft_global_batch=2,
        sft_device_batch=2,
        grpo_steps=1,
        grpo_secrets=1,
        grpo_generations=2,
        grpo_forward_batch=4,
        test_words=3,
        val_words=2,
        check_words=2,
        eval_samples=1,
        eval_batch=8,
        latency_games=1,
    )
    out = smol_pipeline(scale, Stages(tmp_path, scale, resume=False), None)

    assert out["world"]["base"] == tiny_base and out["world"]["test"] == 3
    assert out["sft"]["examples"] == 6
    latency = out["sft"]["latency"]
    assert 1 <= latency["questions"] <= 2 and 0 < latency["p50_s"] <= latency["p95_s"]
    saved = tmp_path / "games" / "eval-cia-s0-test-kb.jsonl.gz"
    assert saved.is_file() and (tmp_path / "games" / "eval-sft-s0-test-kb_any.jsonl.gz").is_file()
    for arm in ARMS:
        run = out["runs"][arm][0]
        test = run["test"]
        assert test["judge"] == "kb" and run["test_check"]["judge"] == "kb:any"
        assert test["sampling"] == {"name": "paper", "temperature": 0.7, "top_p": 0.8, "top_k": 20}
        assert 0 <= test["valid_questions"]["rate"] <= 1 and test["mean_turns"] <= 2
        assert test["belief"]["games"] == len(test["per_word"])  # ΔBelief scored in every game
        assert run["val"]["belief"] is None
    assert set(out["runs"]["cia"][0]["training"]) >= {"final_checkpoint", "global_step"}
    for key in ("ordering", "ordering_strict", "ordering_val", "ordering_bits"):
        assert set(out[key]["paired"]) == {"starpo_minus_sft", "cia_minus_starpo", "cia_minus_sft"}
    assert out["ordering"]["seeds"] == [0]

    # the SFT guesser ships: a float16 adapter people play, its games on the boards' index
    models = tmp_path / "models"
    (models / "evaluation").mkdir(parents=True)
    (models / "evaluation" / "evaluation.json").write_text('{"guessers": {}}')
    settings = ship(tmp_path, models=models, name="smol-test")
    folder = models / "smol-test"
    assert settings["base"] == tiny_base and settings["results"]["cli"]["n_words"] >= 1
    assert {p.name for p in folder.iterdir()} == {
        "adapter_config.json",
        "adapter_model.safetensors",
        "training_config.json",
        "guesser.json",
        "MODEL_CARD.md",
    }
    assert {
        str(t.dtype) for t in load_file(str(folder / "adapter_model.safetensors")).values()
    } == {"torch.float16"}
    index = json.loads((models / "evaluation" / "evaluation.json").read_text())["guessers"]
    assert (
        index["smol-test"]["judge_spec"] == "kb"
        and (models / "evaluation" / "smol-test.jsonl.gz").is_file()
    )
    guesser = build_guesser(f"hf:{tiny_base}", adapter=str(folder))
    assert guesser.chat_format.prompt.startswith("Ask a question")  # the paper's, as trained
    assert guesser.ask(guesser.start(seed=0)).question

    # every stage is stored: a resumed pipeline runs none again and gives the same object
    again = Stages(tmp_path, scale, resume=True)
    assert json.dumps(smol_pipeline(scale, again, None), sort_keys=True) == json.dumps(
        out, sort_keys=True
    )
    assert (
        "sft" in again.reused
        and "cia-s0" in again.reused
        and not again.seconds.keys() - set(again.reused)
    )


def test_the_gpu_scale_is_the_full_study_and_settings_are_typed():
    assert CUDA.device == "cuda" and CUDA.seed_list == [0, 1, 2]
    assert CUDA.test_words == 0 and CUDA.eval_samples == 8 and CUDA.sft_rows == 0  # all of it
    scale = with_settings(SmolScale(), ["grpo_steps=6", "belief=false", "sft_lr=1e-4"])
    assert (scale.grpo_steps, scale.belief, scale.sft_lr) == (6, False, 1e-4)
    with pytest.raises(SystemExit):
        with_settings(SmolScale(), ["pool=3"])


def test_main_keeps_the_test_rates_and_drops_the_others(tmp_path, monkeypatch, capsys):
    """The results drop per-word rates except the test split's (the smol world has no rl split:
    the miniature's clean-up used to fail on it)."""
    import bench.learning.smol as smol
    from bench.learning.__main__ import main

    rates = {"per_word": {"dog": 0.5}, "strict_per_word": {"dog": 0.0}}
    runs = {"sft": {0: {"training": {}, "test": dict(rates), "val": dict(rates)}}}
    runs["sft"][0]["test_check"] = dict(rates)
    monkeypatch.setattr(smol, "smol_pipeline", lambda scale, stage, until: {"runs": runs})
    args = ["--base", "smollm2-135m-instruct", "--work", str(tmp_path), "--until", "sft"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out.split("\n", 0)[0])
    run = out["runs"]["sft"]["0"]
    assert run["test"]["per_word"] == {"dog": 0.5}
    assert "per_word" not in run["val"] and "per_word" not in run["test_check"]
    assert out["world_name"] == "smollm2" and out["device"] == "cpu"


def test_a_stage_reports_its_progress_on_stderr_not_stdout(tmp_path, capsys):
    stages = Stages(tmp_path, SmolScale(), resume=False)
    assert stages("answer", lambda: {"x": 1}) == {"x": 1}
    out, err = capsys.readouterr()
    assert out == ""  # the benchmark's stdout is its results' JSON alone
    assert json.loads(err.strip())["stage"] == "answer"
