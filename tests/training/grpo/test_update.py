"""The GRPO update's old log-probs: the first mini-batch's come from its first pass (issue 43)."""

from __future__ import annotations

import copy
import random

import pytest
import torch

from training.grpo import update as grpo_update
from training.grpo.batch import Row
from training.grpo.config import GRPOConfig


def _rows(games: int, vocab: int, seed: int = 0) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for game in range(games):
        row = Row(game=game)
        for turn in range(2):
            row.extend([rng.randrange(vocab) for _ in range(rng.randint(3, 6))], action=False)
            row.extend(
                [rng.randrange(vocab) for _ in range(rng.randint(2, 5))],
                action=True,
                advantage=rng.uniform(-1, 1),
                logps=[-2.0] * 5,
                turn=turn,
            )
        row.rollout_logps = row.rollout_logps[: len(row)]
        rows.append(row)
    return rows


class PrecomputedOld(grpo_update.Updater):
    """The update as it was: every mini-batch's old log-probs from a no-grad forward first."""

    def _chunks(self, rows, own=None):
        chunks = super()._chunks(rows, own)
        with torch.no_grad():
            for chunk in chunks:
                chunk["old_logps"] = self._logps(self.model, chunk)[0]
        return chunks


@pytest.mark.parametrize("lora", [True, False])
def test_the_first_mini_batch_skips_its_old_log_prob_forward_and_updates_the_same(
    grpo_tiny, monkeypatch, lora
):
    from accelerate import Accelerator
    from peft import LoraConfig, get_peft_model

    base, tokenizer = grpo_tiny
    config = GRPOConfig(
        base_model="unused",
        num_iterations=2,
        mini_batches=2,
        forward_batch_size=2,
        learning_rate=1e-2,
        beta=0.0,
        lora=lora,
    )
    forwards = {"no_grad": 0, "grad": 0}
    real = grpo_update.action_logps

    def counting(*args, **kwargs):
        forwards["grad" if torch.is_grad_enabled() else "no_grad"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(grpo_update, "action_logps", counting)
    rows = _rows(games=8, vocab=base.config.vocab_size)
    results, counts = [], []
    for updater_class in (grpo_update.Updater, PrecomputedOld):
        torch.manual_seed(0)
        model = copy.deepcopy(base)
        if lora:
            lora_config = LoraConfig(r=4, lora_alpha=8, target_modules="all-linear")
            model = get_peft_model(model, lora_config)
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=config.learning_rate)
        accelerator = Accelerator(cpu=True)
        updater = updater_class(config, model, optimizer, accelerator, tokenizer.pad_token_id)
        start = [p.detach().clone() for p in params]
        forwards.update(no_grad=0, grad=0)
        out = updater.update(rows, list(range(8)), step=1)
        assert out["train/optimizer_steps"] == 4.0  # 2 iterations × 2 mini-batches
        results.append([p.detach().clone() for p in params])
        counts.append(dict(forwards))
        assert any(not torch.equal(a, b) for a, b in zip(start, results[-1]))
    new, old = counts
    # 8 games in 2 mini-batches of 4, forward chunks of 2 rows: 2 chunks a mini-batch, each
    # trained twice; no-grad forwards only for the second mini-batch's 2 chunks (were 4: all)
    assert new == {"grad": 2 * 2 * 2, "no_grad": 2}
    assert old == {"grad": 2 * 2 * 2, "no_grad": 4 + 2}  # its own 4 first, then the update's
    for a, b in zip(*results):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)
