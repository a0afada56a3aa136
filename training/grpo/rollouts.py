"""The games of a GRPO step: which secrets a step plays, the seeds of its games, the policy
playing them (transformers; vLLM in process with the adapter synced each step; or a vLLM server
on other GPUs, the adapter loaded into it after every update) and validation (seeded, sampled as
the reference validates or greedily: `val_sampling`)."""

from __future__ import annotations

import random
import shutil
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from games.guessers.llm import LLMGuesser
from games.judges.base import Judge, playable_words
from games.llm.base import BackendError, SamplingParams, encode_prompt
from games.llm.chat import GuesserFormat
from games.llm.memory import KV_SLACK, available_memory_bytes, kv_bytes_per_token
from games.rollout import rollout
from games.types import GameConfig, Trajectory
from training.grpo.batch import end_of_turn_ids
from training.grpo.config import ALL_SECRETS, GRPOConfig
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
    """`val_secrets` fixed secrets (-1: every one, in list order): a seeded sample of `val_words`
    (or of config.val_word_list, read here on the command line) that the judge can play, else of
    the training secrets."""
    if not config.val_secrets:
        return []
    if val_words is None and config.val_word_list:
        from games.wordlists import read_words

        val_words = read_words(config.val_word_list)
    candidates = list(secrets) if val_words is None else playable_words(judge, val_words)[0]
    if not candidates:
        raise ValueError("no validation secret can be played with this judge")
    if config.val_secrets == ALL_SECRETS:
        return candidates
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
    games_per_secret: int = 1,
) -> dict[str, float]:
    """`games_per_secret` games per validation secret (config.val_games) with the policy as it is
    now, sampled as `val_sampling` says; the games' seeds are fixed, so a validation is
    reproducible and every one plays the same seeds. Across processes the secrets are shared out
    and the games gathered."""
    began = time.perf_counter()
    plan = [(i, j) for i in range(len(words)) for j in range(games_per_secret)]
    games = (ranks or Ranks()).play_shared(
        [i for i, _ in plan],
        lambda mine: rollouts.play(
            step,
            [words[plan[k][0]] for k in mine],
            [game_seed(0, 0, *plan[k]) for k in mine],
            judge,
            validation=True,
        ),
    )
    stats = rollout_metrics(games, [0.0] * len(games), list(range(len(games))))
    return {
        **{f"val/{k}": stats[k] for k in VALIDATION_METRICS},
        "time/val_s": time.perf_counter() - began,
    }


# -- the policy while it plays ---------------------------------------------------------------------
def _lora_layers(model: Any) -> list[Any]:
    """The plain LoRA linear layers of a peft model (none for any other model)."""
    try:
        from peft.tuners.lora import Linear as LoraLinear
    except ImportError:
        return []
    return [m for m in model.modules() if isinstance(m, LoraLinear)]


def merge_for_rollouts(model: Any) -> bool:
    """Whether the games sample from the LoRA merged into the base weights: a peft model of plain
    LoRA layers. On a float32 base the merge is exact to float32 rounding. On a bf16 base W + ΔW
    is rounded once to bf16: measured on SmolLM2-135M (LoRA r 16 on every linear layer, 4 prompts
    of ~250 tokens), the merged bf16 policy's log-probs are closer to the float32 policy's than the
    unmerged bf16 one's (max |Δ| 0.28 against 0.46-0.51 over tokens with p ≥ 1%), so the merge
    is within bf16's own rollout noise, and decoding is 1.2× faster merged (docs/explanation/
    grpo.md)."""
    layers = _lora_layers(model)
    return bool(layers) and not any(layer.lora_variant for layer in layers)


@contextmanager
def merged_lora(model: Any) -> Iterator[None]:
    """The active LoRA adapters merged into the base weights inside the block (one matmul per
    layer instead of three), the base weights put back bit for bit after it (not W + ΔW - ΔW)."""
    import torch

    saved = []
    try:
        with torch.no_grad():
            for layer in _lora_layers(model):
                if layer.merged or layer.disable_adapters:
                    continue
                active = [a for a in layer.active_adapters if a in layer.lora_A]
                if not active:
                    continue
                base = layer.get_base_layer()
                weight = base.weight.data
                merged = weight.float()
                for adapter in active:
                    merged = merged + layer.get_delta_weight(adapter).float()
                saved.append((layer, base, weight))
                base.weight.data = merged.to(weight.dtype)  # rounded once
                layer.merged_adapters.extend(active)  # peft's forward: the base layer alone
        yield
    finally:
        for layer, base, weight in saved:
            base.weight.data = weight
            layer.merged_adapters.clear()


ANSWER_TOKENS = 24  # a judge's answer with its chat-template tokens, per turn


def rollout_cache_mb(
    model: Any, config: GRPOConfig, prompt_tokens: int, available: int | None = None
) -> float:
    """The rollout prefix cache: every game of a step held until its next turn (games ×
    (prompt + turns × (question + answer)) tokens × KV bytes per token, with slack), at most a
    quarter of the memory available now, on the model's GPU or in RAM (a call briefly holds its
    old and its new buffers), at least 128 MB (what it was fixed at)."""
    tokens = prompt_tokens + config.max_turns * (config.max_completion_length + ANSWER_TOKENS)
    want = config.games_per_step * tokens * kv_bytes_per_token(model) * KV_SLACK
    available = available_memory_bytes(model) if available is None else available
    cap = available / 4 if available else want
    return max(128.0, min(want, cap) / 2**20)


# -- rollout backends ----------------------------------------------------------------------------
class RolloutServerError(RuntimeError):
    """The generation server (rollout_backend=server) is down or answered wrongly; the message
    names its URL. The run's checkpoints stand: resume once the server is back."""


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
        # the token that closes a question: context, not trained (config.mask_end_of_turn)
        self.end_of_turn = end_of_turn_ids(tokenizer, model) if config.mask_end_of_turn else ()
        self._engine = None
        self.server = None  # rollout_backend=server: the generation server's client
        self.served: str | None = None  # the adapter name the server samples from
        if config.rollout_backend in ("transformers", "server"):
            from games.llm.transformers_backend import TransformersBackend

            # transformers: the policy generates; server: the policy only scores ΔBelief
            prompt = len(encode_prompt(tokenizer, chat_format.messages([])))
            self.cache_mb = rollout_cache_mb(model, config, prompt)
            self.backend = TransformersBackend.from_model(
                model,
                tokenizer,
                prefix_cache_mb=self.cache_mb,
                max_batch_size=config.games_per_step,
            )
        if config.rollout_backend == "server":
            from games.llm.vllm_server import VLLMServerBackend

            self.server = VLLMServerBackend(config.rollout_server, tokenizer)
            self._check_server()

    # -- rollout_backend=server ----------------------------------------------------------------
    def _server_failed(self, exc: Exception, doing: str) -> RolloutServerError:
        return RolloutServerError(
            f"the generation server at {self.server.url} failed while {doing}: {exc}. "
            "Start it again (same base model) and resume the run: it continues from its last "
            "checkpoint"
        )

    def _check_server(self) -> None:
        """Fail early, naming the server, when it is down or serves another base model than the
        policy's (the adapter is trained on the trainer's base: both must be the same)."""
        try:
            base = self.server.base()
        except BackendError as exc:
            raise self._server_failed(exc, "listing its models") from exc
        ours = Path(self.base_path).name
        served = {Path(str(base.get(k) or "")).name for k in ("id", "root")}
        if ours not in served:
            raise RolloutServerError(
                f"the generation server at {self.server.url} serves {base.get('root')!r}, not "
                f"the policy's base model {self.base_path!r}: start it with that model folder "
                "(a run that starts from an adapter merges it first: serve the merged folder)"
            )

    def push_weights(self, step: int, ranks: Ranks | None = None) -> float:
        """rollout_backend=server: after the update of `step` (0: the start), save the adapter
        where the server can read it, load it there under a name of its own and send the next
        rollouts to it; the adapter it replaces is unloaded. Rank 0 pushes, every rank then
        samples from it. The seconds it took (0 for the other backends)."""
        if self.server is None:
            return 0.0
        began = time.perf_counter()
        ranks = ranks or Ranks()
        tag = zlib.crc32(str(self.output_dir.resolve()).encode()) & 0xFFFFFF
        prefix = f"grpo-{tag:06x}-step-"  # unique per run: several runs can share one server
        name = f"{prefix}{step}"
        folders = self.output_dir / "rollout-adapters"
        failure = None
        if ranks.is_main:
            folder = folders / f"step-{step}"
            self.model.save_pretrained(folder)
            try:
                if self.served is None:  # a resumed run: its earlier attempt's adapters go
                    for entry in self.server.models():
                        if entry.get("parent") and str(entry.get("id")).startswith(prefix):
                            self.server.unload_adapter(str(entry["id"]))
                self.server.load_adapter(name, str(folder.resolve()))
                if self.served and self.served != name:
                    self.server.unload_adapter(self.served)
            except BackendError as exc:
                failure = self._server_failed(exc, f"loading the adapter of step {step}")
            for old in folders.glob("step-*"):
                if old != folder and old.name.split("-")[-1].isdigit():
                    shutil.rmtree(old, ignore_errors=True)
        if ranks.main_says(failure is not None):  # every rank stops, none waits for rank 0
            raise failure or RolloutServerError(
                f"the generation server at {self.server.url} failed to load the adapter of "
                f"step {step} (rank 0 has the details); resume once it is back"
            )
        self.served = name
        return time.perf_counter() - began

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
        elif self.server is not None:
            if self.served is None:
                raise RuntimeError("rollout_backend=server: push_weights before the first play")
            backend = self.server.with_model(self.served)
            self.backend.clear_cache()  # ΔBelief is scored by the policy itself
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
        belief = self.backend if self.server is not None else backend
        local = self.config.rollout_backend in ("transformers", "server")  # the policy runs here
        merged = merged_lora(self.model) if local and merge_for_rollouts(self.model) else None
        was_training = self.model.training
        self.model.eval()
        try:
            with merged or nullcontext():
                return rollout(
                    guesser,
                    judge,
                    secrets,
                    seeds=seeds,
                    config=game,
                    belief_backend=belief
                    if self.config.belief_coef > 0 and not validation
                    else None,
                )
        except BackendError as exc:
            if self.server is None or self.server.url not in str(exc):
                raise  # not the generation server's (an LLM judge's, say)
            raise self._server_failed(exc, f"generating the games of step {step}") from exc
        finally:
            self.model.train(was_training)
