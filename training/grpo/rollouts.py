"""The games of a GRPO step: which secrets a step plays, the seeds of its games, the policy
playing them (transformers, or vLLM with the adapter synced each step) and validation (seeded,
sampled as the reference validates or greedily: `val_sampling`)."""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from games.guessers.llm import LLMGuesser
from games.judges.base import Judge, playable_words
from games.llm.base import SamplingParams
from games.llm.chat import GuesserFormat
from games.rollout import rollout
from games.types import GameConfig, Trajectory
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import rollout_metrics
from training.grpo.distributed import Ranks


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


def validation_secrets(
    config: GRPOConfig, judge: Judge, secrets: Sequence[str], val_words: Sequence[str] | None
) -> list[str]:
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
    return random.Random(f"grpo-val:{config.seed}").sample(
        candidates, min(config.val_secrets, len(candidates))
    )


VALIDATION_METRICS = ("success_rate", "valid_rate", "mean_turns")


def infogain_model(
    config: GRPOConfig, judge: Judge, secrets: Sequence[str], pool: Sequence[str] | None
):
    """The knowledge base's CandidateModel over the pool (+ the secrets: each must be a candidate),
    in the judge's sense mode when the judge is the KB's."""
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.kb.knowledge import DEFAULT_SENSE

    if pool is None and config.pool_word_list:
        from games.wordlists import read_words

        pool = read_words(config.pool_word_list)
    words = list(dict.fromkeys([*pool, *secrets])) if pool else None
    return candidate_model(
        getattr(judge, "kb", None) or load_kb(), words, getattr(judge, "sense", DEFAULT_SENSE)
    )


def validate(
    rollouts: Rollouts,
    words: Sequence[str],
    judge: Judge,
    step: int,
    ranks: Ranks | None = None,
) -> dict[str, float]:
    """One game per validation secret with the policy as it is now, sampled as `val_sampling`
    says; the games' seeds are fixed, so a validation is reproducible and every one plays the
    same seeds. Across processes the secrets are shared out and the games gathered."""
    began = time.perf_counter()
    seeds = [game_seed(0, 0, i, 0) for i in range(len(words))]
    games = (ranks or Ranks()).play_shared(
        list(range(len(words))),
        lambda mine: rollouts.play(
            step, [words[i] for i in mine], [seeds[i] for i in mine], judge, validation=True
        ),
    )
    stats = rollout_metrics(games, [0.0] * len(games), list(range(len(games))))
    return {
        **{f"val/{k}": stats[k] for k in VALIDATION_METRICS},
        "time/val_s": time.perf_counter() - began,
    }


# -- rollout backends ----------------------------------------------------------------------------
class Rollouts:
    """Plays a step's games with the current policy (transformers) or a synced vLLM adapter."""

    def __init__(
        self,
        config: GRPOConfig,
        model: Any,
        tokenizer: Any,
        base_path: str,
        output_dir: Path,
        chat_format: GuesserFormat,
    ):
        self.config, self.model, self.tokenizer = config, model, tokenizer
        self.base_path, self.output_dir = base_path, Path(output_dir)
        self.sampling = SamplingParams(
            max_new_tokens=config.max_completion_length, temperature=config.temperature
        )
        self.val_sampling = SamplingParams(
            max_new_tokens=config.max_completion_length, **config.val_sampling_params
        )
        self.chat_format = chat_format
        self._engine = None
        if config.rollout_backend == "transformers":
            from games.llm.transformers_backend import TransformersBackend

            self.backend = TransformersBackend.from_model(
                model, tokenizer, prefix_cache_mb=128, max_batch_size=config.games_per_step
            )

    def _vllm_backend(self, name: str):
        """Save the adapter as it is now and point a (lazily started) vLLM engine at it."""
        from games.llm.vllm_backend import VLLMBackend

        folder = self.output_dir / "rollout-adapters" / name
        self.model.save_pretrained(folder)
        if self._engine is None:
            self._engine = VLLMBackend(
                self.base_path,
                adapter=str(folder),
                max_lora_rank=self.config.lora_rank,
                gpu_memory_utilization=self.config.vllm_gpu_memory_utilization,
                logprobs_mode="processed_logprobs",
            )
        return self._engine.with_adapter(str(folder))

    def play(
        self,
        step: int,
        secrets: Sequence[str],
        seeds: Sequence[int],
        judge: Judge,
        *,
        validation: bool = False,
    ) -> list[Trajectory]:
        """The step's games; `validation`: sampled as config.val_sampling says and without belief
        scoring."""
        if self.config.rollout_backend == "vllm":
            backend = self._vllm_backend(
                f"step-{step}" + ("-val" if validation else "")
            )  # after the update
        else:
            backend = self.backend
            backend.clear_cache()  # the weights changed since the last step
        sampling = self.val_sampling if validation else self.sampling
        guesser = LLMGuesser(
            backend, sampling=sampling, chat_format=self.chat_format, name="grpo-policy"
        )
        game = GameConfig(
            max_turns=self.config.max_turns,
            win_reward=self.config.win_reward,
            invalid_penalty=self.config.invalid_penalty,
            repeated_penalty=self.config.repeated_penalty,
            unknown_penalty=self.config.unknown_penalty,
            turn_penalty=self.config.turn_penalty,
            win_rule=self.config.win_rule,
        )
        was_training = self.model.training
        self.model.eval()
        try:
            return rollout(
                guesser,
                judge,
                secrets,
                seeds=seeds,
                config=game,
                belief_backend=backend if self.config.belief_coef > 0 and not validation else None,
            )
        finally:
            self.model.train(was_training)
