"""Our GRPO loss equals TRL's on a batch where both apply: single-turn completions, one advantage
per sequence, the same tokens and the same old log-probs.

Dual clip (clip_ratio_c = c, verl's) is TRL's two-sided clipping with `delta` = c whenever
c > 1 + ε_high: TRL caps the ratio at δ before −min(r·A, clip(r)·A), which for A < 0 caps the
loss at −A·δ and for A > 0 changes nothing (clip(r) ≤ 1 + ε_high < δ already wins the min). With
clip_ratio_c = 0 (off) the loss is TRL's default objective.

TRL computes the loss in `GRPOTrainer._compute_loss(model, inputs)` (trl 1.16); it is a method,
so the test builds the smallest trainer object that method needs (TRL's own GRPOConfig provides
its attributes, a real Accelerator does the reductions) and calls it on the tiny model patched
with TRL's fused LM head, exactly as GRPOTrainer.__init__ does.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import torch

from training.grpo.loss import action_logps, grpo_loss

TEMPERATURE = 0.9


def _trl_trainer(model, *, loss_type: str, beta: float, correction: bool, delta: float | None):
    from accelerate import Accelerator
    from trl import GRPOConfig as TRLGRPOConfig
    from trl import GRPOTrainer
    from trl.trainer.utils import add_fused_lm_head

    args = TRLGRPOConfig(
        output_dir="unused",
        use_cpu=True,
        report_to="none",
        loss_type=loss_type,
        beta=beta,
        epsilon=0.2,
        epsilon_high=0.28,
        temperature=TEMPERATURE,
        num_generations=2,
        use_bias_correction_kl=correction,
        delta=delta,
    )
    trainer = GRPOTrainer.__new__(GRPOTrainer)
    trainer.args, trainer.model, trainer.accelerator = args, model, Accelerator(cpu=True)
    trainer.loss_type, trainer.beta, trainer.temperature = (
        args.loss_type,
        args.beta,
        args.temperature,
    )
    trainer.epsilon_low, trainer.epsilon_high = args.epsilon, args.epsilon_high
    trainer.importance_sampling_level = args.importance_sampling_level
    trainer.off_policy_mask_threshold = args.off_policy_mask_threshold
    trainer.top_entropy_quantile = args.top_entropy_quantile
    trainer.use_vllm, trainer.vllm_importance_sampling_correction = (
        args.use_vllm,
        args.vllm_importance_sampling_correction,
    )
    trainer.aux_loss_enabled, trainer._entropy_bonus_enabled = False, False
    trainer.current_gradient_accumulation_steps = 1
    trainer._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
    add_fused_lm_head(model, temperature=TEMPERATURE, outputs=("log_probs", "entropy"))
    return trainer


@pytest.fixture(scope="module")
def batch(grpo_tiny_dir):
    """Four completions of different lengths after equal-length prompts, right-padded; old
    log-probs perturbed so that some ratios fall outside [0.8, 1.28]."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(grpo_tiny_dir).train()
    g = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    prompt = torch.randint(10, vocab, (4, 7), generator=g)
    lengths = [5, 3, 6, 1]
    completion = torch.randint(10, vocab, (4, 6), generator=g)
    completion_mask = torch.zeros(4, 6, dtype=torch.long)
    for i, n in enumerate(lengths):
        completion_mask[i, :n] = 1
    completion = torch.where(completion_mask.bool(), completion, torch.zeros_like(completion))
    noise = (torch.rand(4, 6, generator=g) - 0.5) * 1.6  # ratios between exp(-0.8) and exp(0.8)
    advantages = torch.tensor([1.3, -0.7, 0.4, -1.1])
    return model, prompt, completion, completion_mask, noise, advantages


@pytest.mark.parametrize(
    "loss_type, mode, beta, correction, dual",
    [
        ("bnpo", "token-mean", 0.0, False, 0.0),
        ("grpo", "seq-mean-token-mean", 0.0, False, 0.0),
        ("bnpo", "token-mean", 0.04, False, 0.0),  # plain k3
        ("grpo", "seq-mean-token-mean", 0.04, True, 0.0),  # TRL's default: k3 times the ratio
        ("bnpo", "token-mean", 0.0, False, 1.5),  # dual clip = TRL's delta
        ("grpo", "seq-mean-token-mean", 0.04, True, 1.5),
    ],
)
def test_loss_and_gradients_equal_trl(
    grpo_tiny_dir, batch, loss_type, mode, beta, correction, dual
):
    from transformers import AutoModelForCausalLM

    model, prompt, completion, completion_mask, noise, advantages = batch
    ids = torch.cat([prompt, completion], dim=1)
    attention = torch.cat([torch.ones_like(prompt), completion_mask], dim=1)
    action = torch.cat([torch.zeros_like(prompt), completion_mask], dim=1)
    mask = action[:, 1:]
    P = prompt.shape[1]
    ref_model = AutoModelForCausalLM.from_pretrained(grpo_tiny_dir)
    with torch.no_grad():
        for p in ref_model.parameters():  # a reference that differs from the policy
            p.add_(0.05 * torch.randn_like(p))
        current, _ = action_logps(model, ids, attention, action, temperature=TEMPERATURE)
        ref, _ = action_logps(ref_model, ids, attention, action, temperature=TEMPERATURE)
    old_completion = current[:, P - 1 :] + noise * completion_mask  # completion positions only
    old = torch.zeros_like(current)
    old[:, P - 1 :] = old_completion

    # ours
    model.zero_grad()
    logps, _ = action_logps(model, ids, attention, action, temperature=TEMPERATURE)
    ours, parts = grpo_loss(
        logps,
        old,
        advantages,
        mask,
        mode=mode,
        epsilon_low=0.2,
        epsilon_high=0.28,
        clip_ratio_c=dual,
        ref_logps=ref if beta else None,
        beta=beta,
        kl_ratio_correction=correction,
    )
    ours.backward()
    our_grads = [p.grad.clone() for p in model.parameters()]
    low = float(parts.low_clipped.sum()) / float(mask.sum())
    high = float(parts.high_clipped.sum()) / float(mask.sum())
    assert low > 0 and high > 0, "the batch should exercise both clip sides"
    assert bool(parts.dual_clipped.any()) == bool(dual), "the dual clip should bind when on"

    # TRL's own loss on the same tensors
    from copy import deepcopy

    trl_model = deepcopy(model)
    trl_model.zero_grad()
    trainer = _trl_trainer(
        trl_model, loss_type=loss_type, beta=beta, correction=correction, delta=dual or None
    )
    inputs = {
        "prompt_ids": prompt,
        "prompt_mask": torch.ones_like(prompt),
        "completion_ids": completion,
        "completion_mask": completion_mask,
        "advantages": advantages,
        "old_per_token_logps": old_completion,
    }
    if beta:
        inputs["ref_per_token_logps"] = ref[:, P - 1 :]
    theirs = trainer._compute_loss(trl_model, inputs)
    theirs.backward()

    assert float(ours.detach()) == pytest.approx(float(theirs.detach()), abs=1e-6)
    for mine, other in zip(our_grads, (p.grad for p in trl_model.parameters())):
        assert torch.allclose(mine, other, atol=1e-6, rtol=1e-4)
    metrics = trainer._metrics["train"]
    assert metrics["clip_ratio/low_mean"][0] == pytest.approx(low, abs=1e-7)
    assert metrics["clip_ratio/high_mean"][0] == pytest.approx(high, abs=1e-7)
    if beta:
        kl = float((parts.kl * (parts.ratio if correction else 1)).sum()) / float(mask.sum())
        assert metrics["kl"][0] == pytest.approx(kl, abs=1e-6)
