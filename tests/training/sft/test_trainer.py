"""SFT runs on the tiny model: learning, checkpoints with their config, stop and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from games.types import Verdict
from tests.training.sft.helpers import StoppingReporter, trajectory
from training.common.trainer import RUN_CONFIG, code_version
from training.reporting import ConsoleReporter, StopRequested
from training.sft.config import SFTJobConfig

WORDS = ["dog", "apple", "car"]
POOL = ["dog", "cat", "apple", "pear", "car", "bus", "chair", "table"]


def config(**overrides) -> SFTJobConfig:
    base = dict(
        base_model="unused",
        learning_rate=5e-3,
        warmup_ratio=0.0,
        lr_scheduler="constant",
        global_batch_size=8,
        per_device_batch_size=8,
        max_steps=4,
        seed=0,
    )
    return SFTJobConfig(**{**base, **overrides})


def weights(folder) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(Path(folder) / "model.safetensors"))


def quiet(path, **kw):
    import io

    return ConsoleReporter(path, stream=io.StringIO(), **kw)


@pytest.fixture(scope="module")
def finished(tiny_dir, tmp_path_factory):
    """An uninterrupted 4-step run on the teacher's games."""
    from training.sft.trainer import run

    reporter = quiet(tmp_path_factory.mktemp("sft-full"))
    result = run(config(), reporter, model_path=str(tiny_dir), words=WORDS, pool=POOL)
    return reporter, result


def test_loss_falls_parameters_change_and_metrics_use_trl_names(finished, tiny_dir):
    reporter, result = finished
    assert result["global_step"] == 4 and result["games"] == 3 and result["words"] == 3
    assert (
        result["examples"] >= 2 * result["games"] and not result["is_adapter"]
    )  # a guess needs a question first
    assert result["last_loss"] < result["first_loss"] - 0.1
    steps = [r for r in reporter.records if r["event"] == "metrics" and "loss" in r]
    assert [r["step"] for r in steps] == [1, 2, 3, 4]
    for r in steps:
        assert {
            "loss",
            "grad_norm",
            "learning_rate",
            "num_tokens",
            "mean_token_accuracy",
            "entropy",
            "tokens_per_second",
        } <= set(r)
        assert r["tokens_per_second"] > 0
    before, after = weights(tiny_dir), weights(result["final_checkpoint"])
    assert any(not torch.equal(before[k], after[k]) for k in before)


def test_checkpoint_stores_its_resolved_config_and_loads_as_a_guesser(finished, tiny_dir):
    reporter, result = finished
    folder = Path(result["final_checkpoint"])
    saved = json.loads((folder / RUN_CONFIG).read_text())
    assert saved["kind"] == "sft" and saved["step"] == 4
    assert saved["config"] == config().to_dict()
    assert (
        saved["resolved"]["model_path"] == str(tiny_dir)
        and saved["resolved"]["examples"] == result["examples"]
    )
    assert saved["resolved"]["gradient_accumulation_steps"] == 1 and "trl" in saved["versions"]
    assert saved["code"] == code_version() and len(saved["code"]["commit"]) == 40
    assert (
        json.loads((folder / "config.json").read_text())["model_type"] == "llama"
    )  # HF's own config untouched
    checkpoints = [r for r in reporter.records if r["event"] == "checkpoint"]
    assert [c["step"] for c in checkpoints] == [4] and checkpoints[0]["path"] == str(folder)
    from games.guessers.llm import LLMGuesser
    from games.llm.transformers_backend import TransformersBackend

    guesser = LLMGuesser(TransformersBackend(str(folder)))
    assert isinstance(guesser.ask(guesser.start(seed=1)).question, str)


def test_stop_saves_then_resume_continues_to_the_same_weights(finished, tiny_dir, tmp_path):
    from training.sft.trainer import run

    out = tmp_path / "run"
    stopping = quiet(
        out, stop_after_progress=0.5
    )  # progress 2/4 is logged after step 2: stops in step 3
    with pytest.raises(StopRequested):
        run(config(), stopping, model_path=str(tiny_dir), words=WORDS, pool=POOL)
    assert (
        stopping.last_checkpoint()["step"] == 3
        and (out / "checkpoint-3" / "optimizer.pt").is_file()
    )
    assert not (out / "checkpoint-4").exists()

    resumed = quiet(out)  # a new reporter: the newest complete checkpoint folder is found
    result = run(config(), resumed, model_path=str(tiny_dir), words=["unused"], pool=POOL)
    logs = " ".join(r.get("message", "") for r in resumed.records)
    assert "reusing" in logs and "resuming from" in logs  # same examples, same optimizer state
    assert [r["step"] for r in resumed.records if r["event"] == "metrics" and "loss" in r] == [4]
    assert result["global_step"] == 4
    full = weights(finished[1]["final_checkpoint"])
    again = weights(result["final_checkpoint"])
    assert all(torch.allclose(full[k], again[k], atol=1e-6) for k in full)


def test_stored_games_and_lora(tiny_dir, tmp_path):
    from training.sft.trainer import run

    games = [
        trajectory("dog", [("Is it an animal?", Verdict.YES), ("Is it a dog?", Verdict.FINISHED)]),
        trajectory("cat", [("Is it an animal?", Verdict.YES), ("Is it small?", Verdict.NO)]),
    ]
    reporter = StoppingReporter(tmp_path)
    result = run(
        config(source="games", lora=True, lora_rank=4, max_steps=2, learning_rate=1e-2),
        reporter,
        model_path=str(tiny_dir),
        trajectories=games,
    )
    assert result["games"] == 1 and result["examples"] == 2  # the lost game is not selected
    assert result["is_adapter"] and result["parameters_trained"] < 50_000
    folder = Path(result["final_checkpoint"])
    assert (folder / "adapter_config.json").is_file() and not (
        folder / "model.safetensors"
    ).exists()
    assert reporter.last_checkpoint()["is_adapter"]


def test_command_line_builds_the_config_and_runs(tiny_dir, tmp_path, capsys):
    from training.sft.__main__ import main

    out = tmp_path / "cli"
    flags = [
        "--base",
        str(tiny_dir),
        "--out",
        str(out),
        "--word-list",
        "dbrl/train_sft",
        "--limit-words",
        "2",
        "--pool-word-list",
        "dbrl/paper_val",
        "--max-steps",
        "1",
        "--global-batch-size",
        "8",
        "--per-device-batch-size",
        "8",
        "--lora",
        "false",
    ]
    assert main(flags) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["global_step"] == 1 and result["words"] == 2
    saved = json.loads((out / "checkpoint-1" / RUN_CONFIG).read_text())
    assert saved["config"]["base_model"] == str(tiny_dir) and saved["config"]["limit_words"] == 2
    assert (
        main(["--base", str(tiny_dir), "--out", str(out), "--epochs", "0"]) == 2
    )  # refused config
    assert "epochs" in capsys.readouterr().err


def test_recovery_rows_join_the_teachers_examples(tiny_dir, tmp_path):
    from training.common.data import read_jsonl
    from training.sft.trainer import EXAMPLES_FILE, run

    result = run(
        config(recovery_per_game=2, max_steps=1),
        quiet(tmp_path),
        model_path=str(tiny_dir),
        words=WORDS,
        pool=POOL,
    )
    rows = read_jsonl(tmp_path / EXAMPLES_FILE)
    recovery = [r for r in rows if r.get("recovery")]
    games = {r["game"] for r in rows if not r.get("recovery")}
    # two per game, less those cut where the teacher thought nothing but the secret likely
    assert 0 < len(recovery) <= 2 * len(games) and {r["game"] for r in recovery} <= games
    assert result["examples"] == len(rows) and {r["secret"] for r in recovery} <= set(WORDS)


def test_short_prompt_is_recorded_and_its_checkpoints_play_and_train_on_with_it(tiny_dir, tmp_path):
    from games.llm.chat import GuesserFormat, model_guesser_prompt
    from games.registry import build_guesser
    from training.common.data import read_jsonl
    from training.common.models import merge_adapter, run_guesser_format
    from training.sft.trainer import EXAMPLES_FILE, run, train_sft

    result = run(
        config(guesser_prompt="short", lora=True, lora_rank=4, max_steps=1),
        quiet(tmp_path / "sft"),
        model_path=str(tiny_dir),
        words=WORDS,
        pool=POOL,
    )
    rows = read_jsonl(tmp_path / "sft" / EXAMPLES_FILE)
    assert {r["prompt"][0]["content"] for r in rows} == {
        GuesserFormat.named("short").messages([])[0]["content"]
    }
    adapter = result["final_checkpoint"]
    assert (
        json.loads((Path(adapter) / RUN_CONFIG).read_text())["resolved"]["guesser_prompt"]
        == "short"
    )
    guesser = build_guesser(
        f"hf:{tiny_dir}", adapter=adapter
    )  # the model spec of a LoRA checkpoint
    assert guesser.chat_format == GuesserFormat.named("short")
    # a later run from it (GRPO, DPO, SFT) keeps the prompt unless its config names one
    merged = merge_adapter(str(tiny_dir), adapter, tmp_path / "merged")
    assert model_guesser_prompt(merged) == "short"
    assert run_guesser_format("", None, merged, max_turns=9)[1] == "short"
    assert run_guesser_format("paper", None, merged, max_turns=9) == (
        GuesserFormat(max_turns=9),
        "paper",
    )
    assert (
        run_guesser_format("", None, tiny_dir, max_turns=9)[1] == "paper"
    )  # a model not trained here
    # train_sft records it too when a caller builds the rows itself (bench.learning)
    reporter = quiet(tmp_path / "direct")
    direct = train_sft(
        config(guesser_prompt="short", max_steps=1),
        reporter,
        rows[:4],
        kind="sft",
        model_path=str(tiny_dir),
    )
    saved = json.loads((Path(direct["final_checkpoint"]) / RUN_CONFIG).read_text())
    assert saved["resolved"]["guesser_prompt"] == "short"


def test_micro_batches_are_cut_by_length_within_a_random_step(tiny_dir, tmp_path):
    """batch_rebalance: every row once per epoch, each optimizer step a fixed-size set of rows,
    split into micro-batches by length (less padding than a plain random split)."""
    from training.common.models import device_setup, load_model
    from training.sft.trainer import build_sft_trainer

    model, tokenizer = load_model(str(tiny_dir))
    rows = [
        {
            "prompt": [{"role": "user", "content": "Ask." + " Yes." * (i * 7 % 40)}],
            "completion": [{"role": "assistant", "content": "Is it a dog?"}],
        }
        for i in range(32)
    ]
    trainer = build_sft_trainer(
        config(global_batch_size=8, per_device_batch_size=2),
        model,
        tokenizer,
        rows,
        output_dir=tmp_path,
        setup=device_setup("fp32"),
    )
    batches = list(trainer._get_train_sampler())
    assert sorted(i for b in batches for i in b) == list(range(32))
    steps = [sum(batches[k : k + 4], []) for k in range(0, len(batches), 4)]
    assert len(batches) == 16 and all(len(s) == 8 for s in steps)
    lengths = [len(x) for x in trainer.train_dataset["input_ids"]]

    def padded(groups):
        return sum(len(g) * max(lengths[i] for i in g) for g in groups)

    plain = [
        sorted(s)[k : k + 2] for s in steps for k in range(0, 8, 2)
    ]  # the same steps, cut in row order
    assert padded(batches) < 0.95 * padded(plain)


def test_the_code_version_is_the_checkouts_commit_and_whether_it_was_changed(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    assert code_version(tmp_path) == {}  # not a git checkout
    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    assert code_version(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert code_version(tmp_path)["dirty"] is False
    (tmp_path / "a.py").write_text("x = 2\n")
    assert code_version(tmp_path) == {"commit": head, "dirty": True}
