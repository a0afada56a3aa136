"""Shared-prompt SFT: a micro-batch's common prompt is encoded once, not once per row.

Turn-level rows all open with the guesser's system prompt and instruction (207 tokens of the
paper's ~380-token rows with SmolLM2), and TRL's collator pads them on the right, so every row of
a micro-batch starts with the same tokens. `shared_prefix_length` finds the longest run of
columns that every row shares, that no row pads and whose next tokens no row trains (so no
scored position needs the prefix's own output). `SharedPrefixSFTTrainer.compute_loss` then

1. runs the model's backbone once on that prefix (batch 1, with its KV cache),
2. repeats the cache across the rows (`repeat_interleave`: differentiable, so the gradients of
   every row flow back through the prefix into the LoRA or full weights),
3. hands TRL's own compute_loss the suffixes with that cache and the full attention mask: the
   positions follow on from the cache, and TRL's fused LM head scores only the trained tokens.

Loss, gradients and TRL's metrics (loss, num_tokens counts every real token as before,
mean_token_accuracy, entropy) equal the plain path's up to float rounding (tested on SmolLM2 and
the paper's rows). With LoRA dropout on, the rows of a micro-batch share one dropout draw on the
prompt (the same expected loss, not the same draw). Batches it cannot take exactly go the plain
way: rows sharing fewer than MIN_SHARED_TOKENS tokens, one row, left padding, gradient
checkpointing (it drops the cache), extra inputs (padding-free position ids, images), custom
losses (compute_loss_func, label smoothing), MoE auxiliary losses, sequence parallelism, or a
caller that wants the logits.
"""

from __future__ import annotations

from typing import Any

from trl import SFTTrainer

IGNORE = -100
MIN_SHARED_TOKENS = 16  # below this the second forward costs more than the rows share
PLAIN_KEYS = {"input_ids", "attention_mask", "labels"}


def _cache_key() -> str:
    """The KV cache's keyword and output field: `cache` in this transformers, `past_key_values` in
    older ones (e.g. vLLM's pinned GPU workers)."""
    from transformers.modeling_outputs import BaseModelOutputWithPast

    return "cache" if "cache" in BaseModelOutputWithPast.__dataclass_fields__ else "past_key_values"


CACHE_KEY = _cache_key()


def shared_prefix_length(input_ids: Any, attention_mask: Any, labels: Any) -> int:
    """The largest P such that columns [0, P) hold the same real token in every row and no row
    trains a token at columns [0, P] (column P, the suffix's first, is predicted by the prefix's
    last output, which is not scored); at most the length minus one; 0 for one row."""
    import torch

    rows, length = input_ids.shape
    if rows < 2 or length < 2:
        return 0
    shared = (input_ids == input_ids[:1]).all(0) & (attention_mask != 0).all(0)
    untrained = (labels == IGNORE).all(0)

    def first_false(flags: torch.Tensor) -> int:
        off = (~flags).nonzero()
        return int(off[0]) if len(off) else length

    # the first trained column's token is predicted by the column before it: both in the suffix
    return max(0, min(first_false(shared), first_false(untrained) - 1, length - 1))


def backbone_of(model: Any) -> Any:
    """The transformer under the LM head of a (PEFT-wrapped) causal LM: its LoRA layers are the
    ones the full model runs."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner.base_model


class SharedPrefixSFTTrainer(SFTTrainer):
    """TRL's SFTTrainer that encodes a micro-batch's shared prompt once (module docstring);
    `shared_prefix=False` is TRL's plain path."""

    def __init__(self, *args: Any, shared_prefix: bool = True, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.shared_prefix = shared_prefix
        self.prefix_batches = 0  # micro-batches that took the shared-prefix path (for tests, logs)

    def _can_share(self, inputs: dict, return_outputs: bool) -> bool:
        parallelism = getattr(self.accelerator, "parallelism_config", None)
        return (
            self.shared_prefix
            and not return_outputs
            and set(inputs) == PLAIN_KEYS
            and self.compute_loss_func is None
            and self.label_smoother is None
            and not self.aux_loss_enabled
            and not self.args.gradient_checkpointing
            and not (parallelism is not None and parallelism.sp_enabled)
        )

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if not self._can_share(inputs, return_outputs):
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        input_ids, mask, labels = inputs["input_ids"], inputs["attention_mask"], inputs["labels"]
        length = shared_prefix_length(input_ids, mask, labels)
        if length < MIN_SHARED_TOKENS:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        # the prefix through the unwrapped model (under DDP the suffix's call is the wrapped one)
        backbone = backbone_of(self.accelerator.unwrap_model(model))
        with self.accelerator.autocast():  # bf16 runs: as the wrapped model's forward autocasts
            out = backbone(
                input_ids=input_ids[:1, :length], attention_mask=mask[:1, :length], use_cache=True
            )
        cache = getattr(out, CACHE_KEY)
        cache.batch_repeat_interleave(input_ids.shape[0])
        self.prefix_batches += 1
        suffix = {
            "input_ids": input_ids[:, length:],
            "attention_mask": mask,  # prefix and suffix: the positions follow the cache's
            "labels": labels[:, length:],
            CACHE_KEY: cache,
        }
        return super().compute_loss(model, suffix, return_outputs, num_items_in_batch)
