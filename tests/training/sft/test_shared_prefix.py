"""Shared-prompt SFT (training.sft.prefix): where a micro-batch splits, and that the split gives
the plain path's loss, gradients and metrics: the mechanics on the tiny model, the real thing on
SmolLM2 and the paper's rows."""

from __future__ import annotations

import copy
import io

import pytest
import torch

from games.llm.chat import GuesserFormat
from games.types import Verdict
from tests.training.sft.helpers import trajectory
from training.common.models import device_setup, load_model
from training.sft.config import SFTJobConfig
from training.sft.data import turn_examples
from training.sft.prefix import MIN_SHARED_TOKENS, shared_prefix_length

Y, N, F = Verdict.YES, Verdict.NO, Verdict.FINISHED
X = -100


def _split(ids, mask, labels):
    return shared_prefix_length(torch.tensor(ids), torch.tensor(mask), torch.tensor(labels))


def test_the_prefix_is_the_shared_untrained_unpadded_columns():
    # right-padded rows of different lengths: columns 0-2 shared, the rows differ at 3
    ids = [[5, 6, 7, 8, 9, 1], [5, 6, 7, 4, 0, 0]]
    mask = [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]
    labels = [[X, X, X, X, 9, 1], [X, X, X, X, X, X]]
    assert _split(ids, mask, labels) == 3
    # a token trained at column 2 is predicted at column 1: the suffix starts there
    labels_early = [[X, X, 7, 8, 9, 1], [X, X, X, X, X, X]]
    assert _split(ids, mask, labels_early) == 1
    # rows that share nothing, one row, left padding: no split
    assert _split([[1, 2, 3], [4, 2, 3]], [[1] * 3] * 2, [[X, X, 3]] * 2) == 0
    assert _split([[5, 6, 7, 8]], [[1] * 4], [[X, X, X, 8]]) == 0
    assert _split([[0, 5, 6, 7], [5, 6, 7, 8]], [[0, 1, 1, 1], [1] * 4], [[X, X, X, 7]] * 2) == 0
    # identical rows that train nothing: every row keeps at least one token of its own
    assert _split([[5, 6, 7]] * 2, [[1] * 3] * 2, [[X] * 3] * 2) == 2


def _rows() -> list[dict]:
    games = [
        trajectory("dog", [("Is it an animal?", Y), ("Is it a pet?", Y), ("Is it a dog?", F)]),
        trajectory("apple", [("Is it an animal?", N), ("Is it a fruit?", Y), ("Is it red?", Y)]),
        trajectory("car", [("Is it big?", Y)]),
    ]
    return turn_examples(games, GuesserFormat())


def _loss_and_grads(trainer, batch):
    model = trainer.model
    model.train()
    model.zero_grad()
    loss = trainer.compute_loss(model, {k: v.clone() for k, v in batch.items()})
    loss.backward()
    grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.requires_grad])
    return loss.item(), grads


def _trainer(model, tokenizer, rows, tmp_path, **config):
    from training.sft.trainer import build_sft_trainer

    settings = dict(base_model="x", global_batch_size=8, per_device_batch_size=8, max_steps=1)
    return build_sft_trainer(
        SFTJobConfig(**{**settings, **config}),
        model,
        tokenizer,
        rows,
        output_dir=tmp_path,
        setup=device_setup("float32"),
        shared_prefix=True,
    )


def test_tiny_model_split_equals_the_plain_path(tiny_dir, tmp_path):
    """Full fine-tuning of the tiny model on rows of different lengths (right-padded): the same
    loss, gradients of every weight and TRL metrics either way; rows that share too little go
    the plain way."""
    model, tokenizer = load_model(str(tiny_dir))
    rows = _rows()
    trainer = _trainer(copy.deepcopy(model), tokenizer, rows, tmp_path)
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(len(rows))])
    lengths = batch["attention_mask"].sum(1)
    assert lengths.min() < lengths.max()  # padded rows
    shared = shared_prefix_length(batch["input_ids"], batch["attention_mask"], batch["labels"])
    assert shared >= MIN_SHARED_TOKENS

    trainer.shared_prefix = False
    plain_loss, plain_grads = _loss_and_grads(trainer, batch)
    plain_metrics = {k: list(v) for k, v in trainer._metrics["train"].items()}
    trainer.shared_prefix = True
    split_loss, split_grads = _loss_and_grads(trainer, batch)
    assert trainer.prefix_batches == 1
    assert split_loss == pytest.approx(plain_loss, rel=1e-6)
    assert torch.allclose(split_grads, plain_grads, rtol=1e-4, atol=1e-7)
    metrics = trainer._metrics["train"]
    # num_tokens (tokens_per_second) counts every real token, the shared ones once per row
    assert metrics["num_tokens"] == [2 * int(batch["attention_mask"].sum())]
    for name in ("mean_token_accuracy", "entropy"):
        assert metrics[name][-1] == pytest.approx(plain_metrics[name][-1], rel=1e-5)

    # a prompt that differs from the first token on: nothing to share, the plain path
    other = copy.deepcopy(batch)
    other["input_ids"][1, 1] = (other["input_ids"][0, 1] + 1) % len(tokenizer)
    _loss_and_grads(trainer, other)
    assert trainer.prefix_batches == 1


@pytest.mark.parametrize("on", [True, False])
def test_the_jobs_shared_prefix_field_reaches_the_trainer(on, tiny_dir, tmp_path, monkeypatch):
    import training.sft.prefix as prefix
    from training.reporting import ConsoleReporter
    from training.sft.trainer import train_sft

    looked = []
    real = prefix.shared_prefix_length
    monkeypatch.setattr(prefix, "shared_prefix_length", lambda *a: looked.append(1) or real(*a))
    config = SFTJobConfig(
        base_model="x", global_batch_size=4, per_device_batch_size=4, max_steps=1, shared_prefix=on
    )
    reporter = ConsoleReporter(tmp_path, stream=io.StringIO())
    result = train_sft(config, reporter, _rows(), kind="sft", model_path=str(tiny_dir))
    assert result["global_step"] == 1 and bool(looked) is on


@pytest.mark.slow
def test_smollm2_lora_on_paper_rows_split_equals_the_plain_path(tmp_path):
    """SmolLM2-135M with LoRA r16 on 4 of the paper's rows, float32: the loss within 1e-4
    relative and the LoRA gradients' cosine above 0.9999."""
    from games.base_models import resolve_model
    from training.sft.reference_data import read_reference, reference_examples, sample_turns

    torch.manual_seed(0)
    short = [t for t in read_reference() if len(t.history) <= 3]
    rows = reference_examples(sample_turns(short, rows=4, seed=0), GuesserFormat.named("paper"))
    model, tokenizer = load_model(resolve_model("smollm2-135m-instruct"))
    trainer = _trainer(
        model, tokenizer, rows, tmp_path, lora=True, lora_rank=16, lora_alpha=32, lora_dropout=0.0
    )
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(len(rows))])
    assert shared_prefix_length(batch["input_ids"], batch["attention_mask"], batch["labels"]) >= 200
    with torch.no_grad():  # LoRA's B starts at zero: give the adapters a say
        for name, p in trainer.model.named_parameters():
            if p.requires_grad and "lora_B" in name:
                p.normal_(std=0.02)
    trainer.shared_prefix = False
    plain_loss, plain_grads = _loss_and_grads(trainer, batch)
    trainer.shared_prefix = True
    split_loss, split_grads = _loss_and_grads(trainer, batch)
    assert trainer.prefix_batches == 1
    assert split_loss == pytest.approx(plain_loss, rel=1e-4)
    assert torch.nn.functional.cosine_similarity(split_grads, plain_grads, dim=0) > 0.9999
