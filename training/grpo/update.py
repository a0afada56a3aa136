"""The GRPO update: `num_iterations` × `mini_batches` clipped policy-gradient steps on a batch.

The step's games (those with rows) are cut, in order (verl's: each mini-batch a run of whole
groups where the sizes allow), into min(`mini_batches`, games) mini-batches of whole games, so no
mini-batch is empty and their sizes differ by at most one game: 2 games and mini_batches 3 take 2
steps; 10 games take 4 + 3 + 3. `shuffle_mini_batches` deals them in an order shuffled by
(seed, step) instead.
Across processes (training.grpo.distributed) every rank deals the same mini-batches, weighs them
whole, back-propagates only its own games' rows and sums the gradients with the others before
clipping, so the step is the one-process step."""

from __future__ import annotations

import random
from typing import Any

import torch

from training.common.models import lora_inputs_uncast
from training.grpo.batch import collate
from training.grpo.config import GRPOConfig
from training.grpo.distributed import Ranks
from training.grpo.loss import action_logps, aggregation_weights, grpo_loss


def contiguous_parts(order: list[int], parts: int) -> list[list[int]]:
    """`order` cut into min(`parts`, len) runs in order, the first ones one longer where the sizes
    do not divide (10 into 3: 4 + 3 + 3); one empty run for an empty order."""
    n = max(min(parts, len(order)), 1)
    size, extra = divmod(len(order), n)
    bounds = [i * size + min(i, extra) for i in range(n + 1)]
    return [order[bounds[i] : bounds[i + 1]] for i in range(n)]


class Updater:
    """`num_iterations` × `mini_batches` clipped policy-gradient steps on one batch of rows."""

    def __init__(
        self,
        config: GRPOConfig,
        model: Any,
        optimizer: Any,
        accelerator: Any,
        pad_id: int,
        ranks: Ranks | None = None,
    ):
        self.config, self.model, self.optimizer = config, model, optimizer
        self.accelerator, self.pad_id = accelerator, pad_id
        self.ranks = ranks or Ranks()
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.ref_model = None  # full fine-tuning with beta > 0: a frozen copy of the start
        self.bf16 = getattr(accelerator, "mixed_precision", "no") == "bf16"

    def _chunks(self, rows: list, own: set[int] | None = None) -> list[dict]:
        """The rows collated once (so aggregation weights see the whole mini-batch), then cut into
        forward chunks of similar length, each trimmed to its own longest row; across processes
        only the rows of this rank's games (`own`) are kept."""
        rows = sorted(rows, key=len)
        batch = collate(rows, self.pad_id)
        batch["weights"] = aggregation_weights(
            batch["mask"], self.config.aggregation, batch["games"]
        )
        keep = [i for i, r in enumerate(rows) if own is None or r.game in own]
        full = batch["input_ids"].shape[1]
        chunks = []
        for a in range(0, len(keep), self.config.forward_batch_size):
            picked = keep[a : a + self.config.forward_batch_size]
            width = max(len(rows[i]) for i in picked)
            index = torch.tensor(picked, dtype=torch.long)
            chunk = {}
            for key, value in batch.items():
                value = value[index]
                if value.dim() == 2:  # input positions (width) or target positions (width - 1)
                    value = value[:, : width if value.shape[1] == full else width - 1]
                chunk[key] = value.to(self.accelerator.device)
            chunks.append(chunk)
        return chunks

    def _logps(self, model, chunk: dict, with_entropy: bool = False):
        with self.accelerator.autocast():
            return action_logps(
                model,
                chunk["input_ids"],
                chunk["attention_mask"],
                chunk["action_mask"],
                temperature=self.config.temperature,
                with_entropy=with_entropy,
            )

    @torch.no_grad()
    def _reference(self, chunk: dict) -> torch.Tensor:
        if self.ref_model is not None:
            return self._logps(self.ref_model, chunk)[0]
        with self.model.disable_adapter():  # LoRA: the start model is the base without the adapter
            return self._logps(self.model, chunk)[0]

    def update(
        self, rows: list, games: list[int], step: int, own: set[int] | None = None
    ) -> dict[str, float]:
        """The update on the step's `rows` of `games`; `own`: the games this rank back-propagates
        (None: all of them, one process)."""
        config = self.config
        with_rows = {r.game for r in rows}
        order = [g for g in games if g in with_rows]
        if config.shuffle_mini_batches:
            random.Random(f"grpo-minibatch:{config.seed}:{step}").shuffle(order)
        parts = [set(part) for part in contiguous_parts(order, config.mini_batches)]
        minibatches = [
            self._chunks([r for r in rows if r.game in part], own)
            for part in parts
            if any(r.game in part for r in rows)
        ]
        inner_steps = config.num_iterations * len(minibatches)
        with lora_inputs_uncast(self.model, self.bf16):
            return self._steps(minibatches, rows, inner_steps)

    def _steps(self, minibatches: list[list[dict]], rows: list, inner_steps: int) -> dict:
        config = self.config
        if inner_steps > 1 or config.beta:
            with torch.no_grad():
                for index, chunks in enumerate(minibatches):
                    for chunk in chunks:
                        # the first mini-batch's old log-probs are its first pass's own (below)
                        if inner_steps > 1 and index > 0:
                            chunk["old_logps"] = self._logps(self.model, chunk)[0]
                        if config.beta:
                            chunk["ref_logps"] = self._reference(chunk)
        sums = {
            k: 0.0
            for k in (
                "tokens",
                "low",
                "high",
                "dual",
                "kl",
                "entropy",
                "diff",
                "first_tokens",
                "loss",
            )
        }
        norms = []
        first = True  # the first inner step: old log-probs are this forward's own, detached
        for iteration in range(config.num_iterations):
            for chunks in minibatches:
                for chunk in chunks:
                    logps, entropy = self._logps(self.model, chunk, with_entropy=iteration == 0)
                    old = logps.detach() if first else chunk["old_logps"]
                    if first:  # the weights are the rollout's yet: its later passes' old log-probs
                        chunk.setdefault("old_logps", old)
                    loss, lp = grpo_loss(
                        logps,
                        old,
                        chunk["advantages"],
                        chunk["mask"],
                        weights=chunk["weights"],
                        epsilon_low=config.epsilon,
                        epsilon_high=config.epsilon_high,
                        clip_ratio_c=config.clip_ratio_c,
                        ref_logps=chunk.get("ref_logps"),
                        beta=config.beta,
                        kl_ratio_correction=config.use_bias_correction_kl,
                        log_ratio_clamp=config.log_ratio_clamp,
                    )
                    self.accelerator.backward(loss)
                    mask = chunk["mask"].bool()
                    sums["tokens"] += float(mask.sum())
                    sums["low"] += float(lp.low_clipped.sum())
                    sums["high"] += float(lp.high_clipped.sum())
                    sums["dual"] += float(lp.dual_clipped.sum())
                    sums["loss"] += float(loss.detach())
                    if lp.kl is not None:
                        sums["kl"] += float(lp.kl.detach().sum())
                    if iteration == 0:  # entropy of the first pass; sampler vs. trainer log-probs
                        sums["first_tokens"] += float(mask.sum())
                        sums["entropy"] += float(entropy[mask].sum())
                        sums["diff"] += float((old - chunk["rollout_logps"]).abs()[mask].sum())
                first = False
                self.ranks.sum_gradients(self.params)
                limit = config.max_grad_norm or float("inf")
                norms.append(float(self.accelerator.clip_grad_norm_(self.params, limit)))
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
        sums = self.ranks.sum_floats(sums)
        tokens, first_tokens = max(sums["tokens"], 1.0), max(sums["first_tokens"], 1.0)
        out = {
            "loss": sums["loss"] / max(inner_steps, 1),
            "entropy": sums["entropy"] / first_tokens,
            "clip_ratio/low_mean": sums["low"] / tokens,
            "clip_ratio/high_mean": sums["high"] / tokens,
            "clip_ratio/region_mean": (sums["low"] + sums["high"]) / tokens,
            "clip_ratio/dual_mean": sums["dual"] / tokens,
            "grad_norm": sum(norms) / max(len(norms), 1),
            "grad_norm_max": max(norms, default=0.0),
            "logprob_diff/rollout_abs_mean": sums["diff"] / first_tokens,
            "train/action_tokens": sums["first_tokens"],
            "train/sequence_tokens": float(sum(len(r) for r in rows)),
            "train/optimizer_steps": float(len(norms)),
        }
        if config.beta:
            out["kl"] = sums["kl"] / tokens
        return out
