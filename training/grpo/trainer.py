"""Multi-turn GRPO: `run(config, reporter)` plays G games per secret in lock-step, turns them into
masked multi-turn sequences and takes clipped policy-gradient steps.

One step:
1. rollouts: `secrets_per_step` secrets × `num_generations` games through `games.rollout` with
   the policy as guesser (transformers: the model being trained, batched, prefix-cached;
   vLLM on GPU: the adapter saved this step and passed per request), ΔBelief scored by the
   same policy when `belief_coef` > 0;
2. rewards and advantages (training.grpo.advantages; with `infogain_coef` every turn also earns
   μ·bits of the knowledge base's candidate narrowing), StarPO-S keeps the top groups by std;
3. sequences (training.grpo.batch) and `num_iterations` × `mini_batches` optimizer steps.
   Old log-probs: on the first inner step they are the current forward's own values, detached
   (the ratio is exactly 1, as in TRL with one iteration); when there are later inner steps,
   a no-grad forward with the same weights before any update provides them for those. The
   sampler's log-probs only feed the `logprob_diff/rollout_abs_mean` diagnostic;
4. diagnostics, collapse warnings, checkpoints (adapter or full weights + optimizer + monitor
   state + the resolved config), cooperative stop.
With `val_secrets`, a fixed set of secrets is played greedily before step 1 (logged as step 0)
and every `val_steps` steps (`val/success_rate`, `val/valid_rate`, `val/mean_turns`).
"""

from __future__ import annotations

import json
import random
import time
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import torch

from games.guessers.llm import LLMGuesser
from games.judges.base import Judge
from games.llm.base import SamplingParams
from games.llm.chat import GuesserFormat
from games.rollout import rollout
from games.types import GameConfig, Trajectory
from training.common.data import playable_words
from training.common.models import (
    count_parameters, cpu_threads, device_setup, load_model, lora_config, merge_adapter, quiet_libraries,
    run_guesser_format,
)
from training.common.trainer import resolved_config, resume_checkpoint, write_run_config
from training.grpo.advantages import (
    RewardRule, add_info_gain, group_stds, groups_to_keep, trajectory_advantages, trajectory_return,
    turn_advantages, turn_rewards,
)
from training.grpo.batch import build_rows, collate
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import CollapseMonitor, rollout_metrics
from training.grpo.loss import action_logps, aggregation_weights, grpo_loss
from training.reporting import Reporter, StopRequested

STATE_FILE = "trainer_state.json"  # training.common.trainer.resume_checkpoint looks for it
OPTIMIZER_FILE = "optimizer.pt"


# -- schedule ----------------------------------------------------------------------------------
def step_secrets(words: Sequence[str], step: int, k: int, seed: int) -> list[str]:
    """The k secrets of a step (1-based): consecutive slices of a fresh seeded permutation per
    pass over the words, so a resumed run plays exactly the secrets it would have played."""
    n = len(words)
    out = []
    for p in range((step - 1) * k, step * k):
        epoch, i = divmod(p, n)
        order = list(range(n))
        random.Random(f"grpo:{seed}:{epoch}").shuffle(order)
        out.append(words[order[i]])
    return out


def game_seed(seed: int, step: int, group: int, sample: int) -> int:
    return zlib.crc32(f"grpo:{seed}:{step}:{group}:{sample}".encode()) & 0x7FFFFFFF


def reward_rule(config: GRPOConfig) -> RewardRule:
    return RewardRule(belief_coef=config.belief_coef, penalty_at=config.turn_penalty_at,
                      finishing_belief=config.belief_on_finishing_turn)


def step_advantages(config: GRPOConfig, trajectories: Sequence[Trajectory], groups: Sequence[int]) -> list[list[float]]:
    """Per-turn advantage lists (trajectory mode: the game's advantage on every turn)."""
    scale, rule = config.scale_rewards == "group", reward_rule(config)
    if config.advantage == "turn":
        rewards = [turn_rewards(t, rule) for t in trajectories]
        return turn_advantages(rewards, groups, scale=scale, normalisation=config.turn_normalisation)
    returns = [trajectory_return(t, rule) for t in trajectories]
    adv = trajectory_advantages(returns, groups, scale=scale)
    return [[a] * t.n_turns for a, t in zip(adv, trajectories)]


def validation_secrets(config: GRPOConfig, judge: Judge, secrets: Sequence[str],
                       val_words: Sequence[str] | None) -> list[str]:
    """`val_secrets` fixed secrets: a seeded sample of `val_words` (or of config.val_word_list, read
    here on the command line) that the judge can play, else of the training secrets."""
    if not config.val_secrets:
        return []
    if val_words is None and config.val_word_list:
        from games.wordlists import read_words

        val_words = read_words(config.val_word_list)
    candidates = list(secrets) if val_words is None else playable_words(judge, val_words)[0]
    if not candidates:
        raise ValueError("no validation secret can be played with this judge")
    return random.Random(f"grpo-val:{config.seed}").sample(candidates, min(config.val_secrets, len(candidates)))


VALIDATION_METRICS = ("success_rate", "valid_rate", "mean_turns")


def infogain_model(config: GRPOConfig, judge: Judge, secrets: Sequence[str], pool: Sequence[str] | None):
    """The knowledge base's CandidateModel over the pool (+ the secrets: each must be a candidate),
    in the judge's sense mode when the judge is the KB's."""
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.kb.knowledge import DEFAULT_SENSE

    if pool is None and config.pool_word_list:
        from games.wordlists import read_words

        pool = read_words(config.pool_word_list)
    words = list(dict.fromkeys([*pool, *secrets])) if pool else None
    return candidate_model(getattr(judge, "kb", None) or load_kb(), words, getattr(judge, "sense", DEFAULT_SENSE))


def validate(rollouts: "Rollouts", words: Sequence[str], judge: Judge, step: int) -> dict[str, float]:
    """One greedy game per validation secret with the policy as it is now."""
    began = time.perf_counter()
    games = rollouts.play(step, words, [game_seed(0, 0, i, 0) for i in range(len(words))], judge, greedy=True)
    stats = rollout_metrics(games, [0.0] * len(games), list(range(len(games))))
    return {**{f"val/{k}": stats[k] for k in VALIDATION_METRICS}, "time/val_s": time.perf_counter() - began}


# -- rollout backends ----------------------------------------------------------------------------
class Rollouts:
    """Plays a step's games with the current policy (transformers) or a synced vLLM adapter."""

    def __init__(self, config: GRPOConfig, model: Any, tokenizer: Any, base_path: str, output_dir: Path,
                 chat_format: GuesserFormat):
        self.config, self.model, self.tokenizer = config, model, tokenizer
        self.base_path, self.output_dir = base_path, Path(output_dir)
        self.sampling = SamplingParams(max_new_tokens=config.max_completion_length, temperature=config.temperature)
        self.chat_format = chat_format
        self._engine = None
        if config.rollout_backend == "transformers":
            from games.llm.transformers_backend import TransformersBackend

            self.backend = TransformersBackend.from_model(model, tokenizer, prefix_cache_mb=128,
                                                          max_batch_size=config.games_per_step)

    def _vllm_backend(self, name: str):
        """Save the adapter as it is now and point a (lazily started) vLLM engine at it."""
        from games.llm.vllm_backend import VLLMBackend

        folder = self.output_dir / "rollout-adapters" / name
        self.model.save_pretrained(folder)
        if self._engine is None:
            self._engine = VLLMBackend(self.base_path, adapter=str(folder), max_lora_rank=self.config.lora_rank,
                                       gpu_memory_utilization=self.config.vllm_gpu_memory_utilization,
                                       logprobs_mode="processed_logprobs")
        return self._engine.with_adapter(str(folder))

    def play(self, step: int, secrets: Sequence[str], seeds: Sequence[int], judge: Judge, *,
             greedy: bool = False) -> list[Trajectory]:
        """The step's games; `greedy`: at temperature 0 and without belief scoring (validation)."""
        if self.config.rollout_backend == "vllm":
            backend = self._vllm_backend(f"step-{step}" + ("-val" if greedy else ""))  # after the update
        else:
            backend = self.backend
            backend.clear_cache()  # the weights changed since the last step
        sampling = replace(self.sampling, temperature=0.0) if greedy else self.sampling
        guesser = LLMGuesser(backend, sampling=sampling, chat_format=self.chat_format, name="grpo-policy")
        game = GameConfig(max_turns=self.config.max_turns, win_reward=self.config.win_reward,
                          invalid_penalty=self.config.invalid_penalty, repeated_penalty=self.config.repeated_penalty,
                          unknown_penalty=self.config.unknown_penalty,
                          turn_penalty=self.config.turn_penalty, win_rule=self.config.win_rule)
        was_training = self.model.training
        self.model.eval()
        try:
            return rollout(guesser, judge, secrets, seeds=seeds, config=game,
                           belief_backend=backend if self.config.belief_coef > 0 and not greedy else None)
        finally:
            self.model.train(was_training)


# -- the update ----------------------------------------------------------------------------------
class Updater:
    """`num_iterations` × `mini_batches` clipped policy-gradient steps on one batch of rows."""

    def __init__(self, config: GRPOConfig, model: Any, optimizer: Any, accelerator: Any, pad_id: int):
        self.config, self.model, self.optimizer = config, model, optimizer
        self.accelerator, self.pad_id = accelerator, pad_id
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.ref_model = None  # full fine-tuning with beta > 0: a frozen copy of the start

    def _chunks(self, rows: list) -> list[dict]:
        """The rows collated once (so aggregation weights see the whole mini-batch), then cut into
        forward chunks of similar length, each trimmed to its own longest row."""
        rows = sorted(rows, key=len)
        batch = collate(rows, self.pad_id)
        batch["weights"] = aggregation_weights(batch["mask"], self.config.aggregation, batch["games"])
        full = batch["input_ids"].shape[1]
        chunks = []
        for a in range(0, len(rows), self.config.forward_batch_size):
            b = min(a + self.config.forward_batch_size, len(rows))
            width = max(len(r) for r in rows[a:b])
            chunk = {}
            for key, value in batch.items():
                if value.dim() == 2:  # input positions (width) or target positions (width - 1)
                    value = value[a:b, : width if value.shape[1] == full else width - 1]
                else:
                    value = value[a:b]
                chunk[key] = value.to(self.accelerator.device)
            chunks.append(chunk)
        return chunks

    def _logps(self, model, chunk: dict, with_entropy: bool = False):
        with self.accelerator.autocast():
            return action_logps(model, chunk["input_ids"], chunk["attention_mask"], chunk["action_mask"],
                                temperature=self.config.temperature, with_entropy=with_entropy)

    @torch.no_grad()
    def _reference(self, chunk: dict) -> torch.Tensor:
        if self.ref_model is not None:
            return self._logps(self.ref_model, chunk)[0]
        with self.model.disable_adapter():  # LoRA: the start model is the base without the adapter
            return self._logps(self.model, chunk)[0]

    def update(self, rows: list, games: list[int], step: int) -> dict[str, float]:
        config = self.config
        order = list(games)
        random.Random(f"grpo-minibatch:{config.seed}:{step}").shuffle(order)
        parts = [set(order[i:: config.mini_batches]) for i in range(config.mini_batches)]
        minibatches = [self._chunks([r for r in rows if r.game in part]) for part in parts
                       if any(r.game in part for r in rows)]
        inner_steps = config.num_iterations * len(minibatches)
        if inner_steps > 1 or config.beta:
            with torch.no_grad():
                for chunks in minibatches:
                    for chunk in chunks:
                        if inner_steps > 1:
                            chunk["old_logps"] = self._logps(self.model, chunk)[0]
                        if config.beta:
                            chunk["ref_logps"] = self._reference(chunk)
        sums = {k: 0.0 for k in ("tokens", "low", "high", "kl", "entropy", "diff", "first_tokens", "loss")}
        norms = []
        first = True  # the first inner step: old log-probs are this forward's own, detached
        for iteration in range(config.num_iterations):
            for chunks in minibatches:
                for chunk in chunks:
                    logps, entropy = self._logps(self.model, chunk, with_entropy=iteration == 0)
                    old = logps.detach() if first else chunk["old_logps"]
                    loss, lp = grpo_loss(logps, old, chunk["advantages"], chunk["mask"], weights=chunk["weights"],
                                         epsilon_low=config.epsilon, epsilon_high=config.epsilon_high,
                                         ref_logps=chunk.get("ref_logps"), beta=config.beta,
                                         kl_ratio_correction=config.use_bias_correction_kl)
                    self.accelerator.backward(loss)
                    mask = chunk["mask"].bool()
                    sums["tokens"] += float(mask.sum())
                    sums["low"] += float(lp.low_clipped.sum())
                    sums["high"] += float(lp.high_clipped.sum())
                    sums["loss"] += float(loss.detach())
                    if lp.kl is not None:
                        sums["kl"] += float(lp.kl.detach().sum())
                    if iteration == 0:  # entropy of the first pass; sampler vs. trainer log-probs
                        sums["first_tokens"] += float(mask.sum())
                        sums["entropy"] += float(entropy[mask].sum())
                        sums["diff"] += float((old - chunk["rollout_logps"]).abs()[mask].sum())
                first = False
                limit = config.max_grad_norm or float("inf")
                norms.append(float(self.accelerator.clip_grad_norm_(self.params, limit)))
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
        tokens, first_tokens = max(sums["tokens"], 1.0), max(sums["first_tokens"], 1.0)
        out = {
            "loss": sums["loss"] / max(inner_steps, 1),
            "entropy": sums["entropy"] / first_tokens,
            "clip_ratio/low_mean": sums["low"] / tokens,
            "clip_ratio/high_mean": sums["high"] / tokens,
            "clip_ratio/region_mean": (sums["low"] + sums["high"]) / tokens,
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


# -- checkpoints ---------------------------------------------------------------------------------
def save_checkpoint(folder: Path, *, model: Any, tokenizer: Any, optimizer: Any, step: int, monitor: CollapseMonitor,
                    run_config: dict, history: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)  # a peft model saves only its adapter
    tokenizer.save_pretrained(folder)
    torch.save(optimizer.state_dict(), folder / OPTIMIZER_FILE)
    write_run_config(folder, {**run_config, "step": step})
    state = {"global_step": step, "monitor": monitor.state(), "history": history[-200:]}
    (folder / STATE_FILE).write_text(json.dumps(state, default=float) + "\n", encoding="utf-8")
    return folder


def load_policy(config: GRPOConfig, base_path: str, resume: str | None):
    """(model, tokenizer): the base with a fresh or resumed LoRA adapter, or full weights."""
    if config.lora:
        from peft import PeftModel, get_peft_model

        model, tokenizer = load_model(base_path)
        if resume:
            return PeftModel.from_pretrained(model, resume, is_trainable=True), tokenizer
        return get_peft_model(model, lora_config(rank=config.lora_rank, alpha=config.lora_alpha,
                                                 dropout=config.lora_dropout,
                                                 target_modules=config.target_modules)), tokenizer
    return load_model(resume or base_path)


# -- the run ---------------------------------------------------------------------------------------
def run(
    config: GRPOConfig, reporter: Reporter, *, model_path: str | None = None, adapter_path: str | None = None,
    judge: Judge | None = None, words: Sequence[str] | None = None, val_words: Sequence[str] | None = None,
    pool: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Train; `model_path` (+ `adapter_path`, merged first) is the start policy (default
    config.base_model as a folder / hub id); `judge`, `words`, `val_words` and `pool` are resolved
    by the web app, else built from config.judge (games registry spec) and read from
    config.word_list, config.val_word_list and config.pool_word_list."""
    from accelerate import Accelerator

    quiet_libraries()
    setup = device_setup("fp32" if config.precision == "fp32" else config.precision)
    if setup.world_size > 1:
        raise ValueError("GRPO runs as one process (one GPU or the CPU); multi-GPU data parallel is not implemented")
    out = Path(reporter.output_dir)
    base_path = model_path or config.base_model
    chat_format, prompt_name = run_guesser_format(config.guesser_prompt, adapter_path, base_path,
                                                  max_turns=config.max_turns)
    if adapter_path:
        base_path = str(merge_adapter(base_path, adapter_path, out / "base-merged"))
    if judge is None:
        from games.registry import build_judge

        judge = build_judge(config.judge)
    if words is None:
        from games.wordlists import read_words

        words = read_words(config.word_list)
    secrets, skipped = playable_words(judge, words)
    if config.limit_words:
        secrets = secrets[: config.limit_words]
    if skipped:
        reporter.log(f"skipped {len(skipped)} words the judge cannot play: {', '.join(skipped[:20])}", level="warning")
    if not secrets:
        raise ValueError("no training secret can be played with this judge")
    val_secrets = validation_secrets(config, judge, secrets, val_words)
    narrowing = infogain_model(config, judge, secrets, pool) if config.infogain_coef > 0 else None

    resume = resume_checkpoint(reporter)
    with cpu_threads(config.cpu_threads if setup.device == "cpu" else 0):
        accelerator = Accelerator(cpu=setup.device == "cpu", mixed_precision="bf16" if setup.bf16 else "no")
        model, tokenizer = load_policy(config, base_path, resume)
        ref_model = None
        if config.beta and not config.lora:
            ref_model = load_model(base_path)[0].eval().requires_grad_(False).to(accelerator.device)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay,
                                      betas=(config.adam_beta1, config.adam_beta2))
        model, optimizer = accelerator.prepare(model, optimizer)
        monitor = CollapseMonitor(config.warn_window, config.warn_drop_fraction, config.warn_grad_norm_factor,
                                  val_drop=config.warn_val_drop)
        start, history = 0, []
        if resume:
            optimizer.load_state_dict(torch.load(Path(resume) / OPTIMIZER_FILE, weights_only=True))
            state = json.loads((Path(resume) / STATE_FILE).read_text(encoding="utf-8"))
            start, history = int(state["global_step"]), list(state.get("history", []))
            monitor.load(state.get("monitor"))
            reporter.log(f"resuming from {resume} (step {start})")
        model.train()
        policy = accelerator.unwrap_model(model)
        updater = Updater(config, policy, optimizer, accelerator, tokenizer.pad_token_id)
        updater.ref_model = ref_model
        rollouts = Rollouts(config, policy, tokenizer, base_path, out, chat_format)
        trainable, total = count_parameters(policy)
        run_config = resolved_config("grpo", config, base_model_path=base_path, adapter_path=adapter_path,
                                     device=setup.device, precision="bf16" if setup.bf16 else "fp32",
                                     secrets=len(secrets), parameters_trained=trainable, parameters=total,
                                     guesser_prompt=prompt_name)
        write_run_config(out, run_config)
        reporter.log(f"grpo: {len(secrets)} secrets, {config.secrets_per_step}×{config.num_generations} games per "
                     f"step, advantage={config.advantage}, λ={config.belief_coef}, {trainable:,} of {total:,} "
                     f"parameters trained on {setup.device}")

        def checkpoint(step: int, metrics: dict) -> Path:
            folder = save_checkpoint(out / f"checkpoint-{step}", model=policy, tokenizer=tokenizer,
                                     optimizer=optimizer, step=step, monitor=monitor, run_config=run_config,
                                     history=history)
            reporter.checkpoint(step, folder, metrics=metrics, config=run_config, is_adapter=config.lora)
            return folder

        last_saved, folder, warnings = start, (Path(resume) if resume else None), 0
        if val_secrets and monitor.val_baseline is None:  # before any update (a resumed run has it)
            before = validate(rollouts, val_secrets, judge, start)
            monitor.check(before)
            reporter.metrics(start, before)
            reporter.log(f"validation on {len(val_secrets)} secrets before training: success "
                         f"{before['val/success_rate']:.0%}, valid questions {before['val/valid_rate']:.0%}")
        tokens_seen = float(history[-1].get("num_tokens", 0.0)) if history else 0.0
        for step in range(start + 1, config.steps + 1):
            if reporter.should_stop():
                if step - 1 > last_saved:
                    checkpoint(step - 1, history[-1] if history else {})
                raise StopRequested()
            began = time.perf_counter()
            chosen = step_secrets(secrets, step, config.secrets_per_step, config.seed)
            plan = [(g, s) for g in range(len(chosen)) for s in range(config.num_generations)]
            trajectories = rollouts.play(step, [chosen[g] for g, _ in plan],
                                         [game_seed(config.seed, step, g, s) for g, s in plan], judge)
            rolled = time.perf_counter()
            groups = [g for g, _ in plan]
            bits = add_info_gain(trajectories, narrowing, config.infogain_coef) if narrowing else None
            returns = [trajectory_return(t, reward_rule(config)) for t in trajectories]
            metrics = rollout_metrics(trajectories, returns, groups)
            if bits is not None:
                metrics["rollout/info_gain_bits"] = sum(bits) / len(bits)
                metrics["rollout/candidates_left"] = sum(t.turns[-1].candidates_left for t in trajectories
                                                         if t.turns) / len(trajectories)
            kept = set(groups_to_keep(group_stds(returns, groups), config.rollout_filter_ratio))
            idx = [i for i, g in enumerate(groups) if g in kept]
            kept_trajs = [trajectories[i] for i in idx]
            advantages = step_advantages(config, kept_trajs, [groups[i] for i in idx])
            rows = build_rows(kept_trajs, advantages)
            metrics.update(updater.update(rows, list(range(len(kept_trajs))), step) if rows else {})
            done = time.perf_counter()
            generated = sum(len(t.extra.get("token_ids") or []) for traj in trajectories for t in traj.turns)
            trained = metrics.get("train/sequence_tokens", 0.0) * config.num_iterations
            tokens_seen += generated + trained
            flat_adv = [a for adv in advantages for a in adv]
            metrics.update({
                "filter/kept_groups": float(len(kept)), "filter/kept_games": float(len(idx)),
                "advantages/abs_mean": sum(abs(a) for a in flat_adv) / max(len(flat_adv), 1),
                "learning_rate": config.learning_rate, "num_tokens": tokens_seen,
                "rollout/tokens_per_second": generated / max(rolled - began, 1e-9),
                "train/tokens_per_second": trained / max(done - rolled, 1e-9),
                "tokens_per_second": (generated + trained) / max(done - began, 1e-9),
                "time/rollout_s": rolled - began, "time/update_s": done - rolled, "time/step_s": done - began,
            })
            if val_secrets and (step % config.val_steps == 0 or step == config.steps):
                metrics.update(validate(rollouts, val_secrets, judge, step))
            flags, messages = monitor.check(metrics)
            metrics.update(flags)
            for message in messages:
                warnings += 1
                reporter.log(f"step {step}: {message}", level="warning")
            reporter.metrics(step, metrics)
            history.append({"step": step, **metrics})
            reporter.progress(step / config.steps, f"step {step}/{config.steps}: success {metrics['success_rate']:.0%}, "
                                                   f"reward {metrics['reward']:.3f}")
            if step % config.save_steps == 0 or step == config.steps:
                folder, last_saved = checkpoint(step, metrics), step
    first, last = (history[0], history[-1]) if history else ({}, {})
    keys = ("reward", "success_rate", "valid_rate", "entropy", "rollout/in_group_std")
    return {
        "global_step": config.steps, "resumed_from": start, "final_checkpoint": str(folder) if folder else None,
        "is_adapter": config.lora, "base_model_path": base_path, "warnings": warnings,
        "first": {k: first.get(k) for k in keys}, "last": {k: last.get(k) for k in keys},
        "parameters_trained": trainable,
        "validation": {"secrets": len(val_secrets), "before": monitor.val_baseline,
                       "last": next((h["val/success_rate"] for h in reversed(history) if "val/success_rate" in h),
                                    None)} if val_secrets else None,
    }
