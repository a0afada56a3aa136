"""Training the pretrained judge (training.judge.cross_encoder) on the real MiniLM base: a short
run on a slice of the reference answers writes a folder that the product's judge reads back with
the same logits, calibration by likelihood, the combination with the learned judge, and the
checks of the config."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from games.judges.base import JudgeRequest
from games.judges.cross_encoder import CrossEncoder, PretrainedJudge, combined_p_yes
from training.common.config import build_checked
from training.judge.config import PretrainedJudgeJobConfig
from training.judge.cross_encoder import (
    Texts,
    batches,
    calibration_error,
    check_combination,
    fit_combination,
    fit_temperature,
    predict,
    run,
    split_rows,
)
from training.judge.data import Row, reference_rows
from training.reporting import ConsoleReporter


@pytest.fixture(scope="module")
def rows():
    """Every reference row of about 60 secrets: a few hundred rows in each split."""
    everything = reference_rows()
    keep = set(sorted({r.secret for r in everything})[::50])
    return [r for r in everything if r.secret in keep]


@pytest.fixture(scope="module")
def trained(rows, tmp_path_factory):
    """A short run (96 training rows, LoRA r=4), kept in memory and on disk."""
    out = tmp_path_factory.mktemp("pretrained-judge")
    config = PretrainedJudgeJobConfig(max_rows=96, lora_rank=4, eval_every=2, eval_rows=40)
    with open(out / "log.jsonl", "w") as log:
        reporter = ConsoleReporter(out, stream=log)
        result = run(config, reporter, rows=rows)
    return config, reporter, result


def test_a_run_writes_a_folder_the_product_judge_reads(trained, rows):
    config, reporter, result = trained
    folder = result["weights"]
    meta = json.loads((reporter.output_dir / "pretrained-judge" / "judge.json").read_text())
    assert meta["base_model"] == "minilm-l6" and meta["input"] == "word" and meta["format"] == 1
    assert (
        result["rows"]["train"] == 96 and result["rows"]["val"] > 0 and result["rows"]["test"] > 0
    )
    assert meta["held_out"] == {"val": result["val"], "test": result["test"]}
    assert result["test"]["coverage"] == 1.0 and result["test"]["questions"] > 100
    metrics = [r for r in reporter.records if r["event"] == "metrics"]
    assert [m["step"] for m in metrics[:-1]] == [2, 3]  # every 2 steps, and the last (3 = 96/32)
    assert "val/accuracy" in metrics[0] and "test/accuracy" in metrics[-1]
    assert reporter.last_checkpoint()["path"] == folder
    # an adapter and a head, not a copy of the base (MiniLM is 90 MB)
    assert result["bytes"] < 2_000_000
    judge = PretrainedJudge(folder)
    answer = judge.judge("dog", "Is it an animal?")
    assert answer.verdict.value in ("yes", "no") and 0.0 < answer.p_yes < 1.0
    assert answer.raw.startswith("pretrained: p(yes)=0.")


def test_the_written_folder_gives_the_trained_models_logits(trained, rows):
    """What ships is what was trained: the LoRA merged into the base and the trained head give the
    in-memory model's logits."""
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    from games.base_models import resolve_model
    from games.judges.cross_encoder import load_cross_encoder

    config, reporter, result = trained
    split = split_rows(rows, config)
    sample = split["test"][:40]
    texts = Texts("word")
    model, tokenizer = load_cross_encoder(resolve_model("minilm-l6"), None)
    model = get_peft_model(
        model,
        LoraConfig(
            r=4,
            lora_alpha=config.lora_alpha,
            target_modules=["query", "key", "value", "dense"],
            modules_to_save=["classifier", "pooler"],
            task_type="SEQ_CLS",
        ),
    )
    adapter = load_file(f"{result['weights']}/adapter/adapter_model.safetensors")
    set_peft_model_state_dict(model, adapter)
    expected = predict(model, tokenizer, texts, sample, config.max_length)
    got = CrossEncoder(Path(result["weights"])).logits([(r.secret, r.question) for r in sample])
    assert np.abs(got - expected).max() < 1e-4
    assert expected.std() > 1e-3  # not a constant head


def test_the_judge_caches_pairs_and_answers_a_batch_as_one_by_one(trained):
    folder = trained[2]["weights"]
    judge = PretrainedJudge(folder)
    judge.model.clear_cache()
    questions = ["Is it an animal?", "Is it bigger than a car?", "Can you eat it?", "Is it alive?"]
    batch = judge.judge_batch([JudgeRequest("apple", q) for q in questions + questions[:1]])
    single = [judge.judge("apple", q) for q in questions]
    assert [a.p_yes for a in batch] == [a.p_yes for a in single + single[:1]]
    assert len(judge.model._cache) == len(questions)
    odd = judge.judge_batch(
        [JudgeRequest("apple", ""), JudgeRequest("apple", "?!"), JudgeRequest("", "Is it red?")]
    )
    assert [a.verdict.value for a in odd] == ["unknown"] * 3
    # any secret: the pretrained judge needs no knowledge-base entry
    assert judge.judge("zorblaxian teapot", "Is it an animal?").verdict.value in ("yes", "no")


def test_temperature_scaling_recovers_a_known_temperature():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, 20000)
    y = (rng.random(len(z)) < 1 / (1 + np.exp(-z / 2.5))).astype(float)  # true p = sigmoid(z/2.5)
    assert fit_temperature(z, y) == pytest.approx(2.5, rel=0.05)
    before = calibration_error(1 / (1 + np.exp(-z)), y)
    after = calibration_error(1 / (1 + np.exp(-z / fit_temperature(z, y))), y)
    assert after < 0.02 < before


def test_the_combination_recovers_known_weights_and_is_what_the_judge_computes():
    rng = np.random.default_rng(1)
    z, w = rng.normal(0, 2, 30000), rng.normal(0, 2, 30000)
    learned_p = 1 / (1 + np.exp(-w))
    truth = {"pretrained": 0.7, "learned": 0.4, "bias": -1.0}
    p = combined_p_yes(z, learned_p, truth)
    assert p[0] == pytest.approx(1 / (1 + math.exp(-(0.7 * z[0] + 0.4 * w[0] - 1.0))))
    y = (rng.random(len(z)) < p).astype(float)
    fitted = fit_combination(z, learned_p, y)
    for key, value in truth.items():
        assert fitted[key] == pytest.approx(value, abs=0.06), key


def test_a_run_that_combines_calibrates_the_shipped_answers(trained):
    meta = json.loads((trained[1].output_dir / "pretrained-judge" / "judge.json").read_text())
    assert meta["combine"]["judge"] == "learned" and meta["combine"]["fitted_on"] == "val"
    assert set(meta["combine"]["weights"]) == {"pretrained", "learned", "bias"}
    assert meta["temperature"] > 0 and "cross_encoder_alone" in meta
    assert meta["calibration"]["ece_after"] <= meta["calibration"]["ece_before"] + 1e-9


def test_batches_keep_every_row_once_and_pad_little():
    import random

    rows = [Row(f"s{i}", "q" * (i % 37), 1, 0) for i in range(1000)]
    plan = batches(rows, 32, random.Random(0), lambda r: len(r.question))
    assert sorted(r.secret for b in plan for r in b) == sorted(r.secret for r in rows)
    spread = np.mean(
        [max(len(r.question) for r in b) - min(len(r.question) for r in b) for b in plan]
    )
    assert spread < 5  # unsorted batches would span about 36 characters


def test_bad_configs_are_refused_before_anything_runs():
    with pytest.raises(ValueError) as err:
        build_checked(
            PretrainedJudgeJobConfig,
            lora_rank=0,
            input="poem",
            learning_rate=2.0,
            combine="all",
            max_length=4,
            base_model=" ",
        )
    text = str(err.value)
    for part in (
        "lora_rank",
        "input must be one of",
        "learning_rate",
        "combine",
        "max_length",
        "base_model",
    ):
        assert part in text
    with pytest.raises(ValueError, match="held-out split"):
        check_combination(PretrainedJudgeJobConfig(val_percent=20))
    check_combination(PretrainedJudgeJobConfig(val_percent=20, combine="none"))
