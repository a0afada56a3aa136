"""The shipped pretrained judge (games/data/judges/pretrained): what it ships, how it answers the
reference's questions about secrets it never saw, its precisions, and the errors of a damaged
folder."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest

from games.judge_eval import REFERENCE_TRIPLES, agreement, precision_flips, read_triples
from games.judges.base import JudgeRequest
from games.judges.cross_encoder import (
    DEFAULT_DIR,
    PretrainedJudge,
    PretrainedJudgeError,
    merge_lora,
    read_meta,
)
from games.precision import ENV_CPU_BF16
from games.registry import build_judge
from training.judge.data import split_of


@pytest.fixture(scope="module")
def judge():
    return build_judge("pretrained")


def test_what_ships_is_an_adapter_and_a_head_beside_the_bases_name():
    meta = read_meta()
    files = [p for p in DEFAULT_DIR.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 25_000_000  # MiniLM alone is 91 MB
    assert sorted(p.name for p in files) == [
        "adapter_config.json",
        "adapter_model.safetensors",
        "judge.json",
    ]
    adapter = json.loads((DEFAULT_DIR / "adapter" / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == meta["base_model"] == "minilm-l6"
    assert meta["combine"]["fitted_on"] == meta["calibration"]["fitted_on"] == "val"
    # the figures it ships with: the targets, on secrets it never saw
    test = meta["held_out"]["test"]
    assert test["coverage"] == 1.0 and test["accuracy"] >= 0.90 and test["kappa"] >= 0.68


def test_it_agrees_with_the_reference_on_test_secrets(judge):
    """A sample of the reference's answers about test secrets (never trained on): the shipped
    accuracy (0.907) within the sample's noise, far above answering No to everything (0.80)."""
    rows = [
        r
        for r in read_triples(REFERENCE_TRIPLES)
        if r["answer"] in ("yes", "no") and split_of(r["secret"], 10, 10) == "test"
    ]
    sample = random.Random(0).sample(rows, 600)
    answers = [a.verdict.value for a in judge.judge_batch([_request(r) for r in sample])]
    figures = agreement(answers, [r["answer"] for r in sample])
    assert figures["accuracy"] >= 0.87 and figures["kappa"] >= 0.6, figures


def _request(row):
    return JudgeRequest(row["secret"], row["question"])


def test_everyday_answers(judge):
    for secret, question, verdict in [
        ("dog", "Is it an animal?", "yes"),
        ("dog", "Is it a pet?", "yes"),  # the knowledge base cannot say; the judge can
        ("dog", "Is it a plant?", "no"),
        ("apple", "Can you eat it?", "yes"),
        ("hammer", "Is it a tool?", "yes"),
        ("hammer", "Is it alive?", "no"),
    ]:
        answer = judge.judge(secret, question)
        assert answer.verdict.value == verdict, (secret, question, answer)
        sure = answer.p_yes if verdict == "yes" else 1 - answer.p_yes
        assert sure > 0.6 and answer.raw.startswith("pretrained: p(yes)=")


def test_a_damaged_folder_is_refused_with_what_to_do(tmp_path):
    folder = tmp_path / "judge"
    shutil.copytree(DEFAULT_DIR, folder)
    (folder / "adapter" / "adapter_model.safetensors").write_bytes(b"truncated")
    with pytest.raises(PretrainedJudgeError, match=r"cannot be loaded.*retrain it with"):
        PretrainedJudge(folder)
    meta = json.loads((folder / "judge.json").read_text())
    (folder / "judge.json").write_text(json.dumps({**meta, "format": 99}))
    with pytest.raises(PretrainedJudgeError, match="format 99"):
        PretrainedJudge(folder)
    with pytest.raises(PretrainedJudgeError, match="does not exist"):
        PretrainedJudge(tmp_path / "nowhere")


def test_merging_refuses_what_it_does_not_compute(tmp_path):
    folder = tmp_path / "adapter"
    shutil.copytree(DEFAULT_DIR / "adapter", folder)
    settings = json.loads((folder / "adapter_config.json").read_text())
    (folder / "adapter_config.json").write_text(json.dumps({**settings, "use_dora": True}))
    with pytest.raises(ValueError, match="not a plain LoRA adapter"):
        merge_lora(object(), folder)


def test_auto_reads_at_bf16_on_a_cpu_with_bf16_units_and_float32_without(monkeypatch):
    import torch

    monkeypatch.setenv(ENV_CPU_BF16, "1")
    fast = PretrainedJudge()
    monkeypatch.setenv(ENV_CPU_BF16, "0")
    plain = PretrainedJudge()
    assert (fast.precision, plain.precision) == ("bfloat16", "float32")
    assert {p.dtype for p in fast.model.model.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in plain.model.model.parameters()} == {torch.float32}
    assert fast.model.logits([("dog", "Is it an animal?")]).dtype == np.float32
    for judge in (fast, plain):
        assert judge.judge("dog", "Is it an animal?").verdict.value == "yes"
    assert build_judge("pretrained?precision=fp32").precision == "float32"
    assert build_judge("pretrained", precision="bf16").precision == "bfloat16"


def test_bf16_changes_no_answer_about_the_validation_secrets():
    """The hidden-style check: the reference's pairs about the secrets the judge was calibrated
    on (never trained on), answered at float32 and at bf16: at most 0.1% of the answers differ
    (none here), and the logits differ by a few hundredths at most (bench.compute: 0 of 1,536)."""
    config = read_meta()["config"]
    pairs = sorted(
        {
            (r["secret"], r["question"])
            for r in read_triples(REFERENCE_TRIPLES)
            if split_of(r["secret"], config["val_percent"], config["test_percent"]) == "val"
        }
    )
    sample = random.Random(1).sample(pairs, 400)
    flips = precision_flips(sample)
    assert flips["precisions"] == ["float32", "bfloat16"]
    assert flips["flipped"] <= 0.001 * len(sample), flips
    assert 0 < flips["max_abs_logit_delta"] < 0.2, flips  # > 0: the two did read differently
    assert flips["max_abs_p_yes_delta"] < 0.05, flips
