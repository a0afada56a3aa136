"""Local models through transformers: batched, left-padded, KV-cached; CPU or GPU.

Generation is a small decode loop instead of `model.generate`, so that each chat samples from
its own seeded generator (a game's questions do not depend on which other games share the
batch) and so that a prefix cache can reuse the keys/values of earlier calls: in 20Q the prompt
of turn t+1 extends the prompt of turn t, so with the cache each turn only prefills the newly
appended tokens instead of the whole, growing history.

Reproducibility: the same calls with the same seeds give identical results. Reusing cached keys
and values changes how a sequence is split into forward passes, so on a warm cache logprobs can
differ in the last float bits (~1e-6) and, very rarely, a draw sitting on a probability boundary
can flip; call `clear_cache()` (or set `prefix_cache_mb=0`) for bitwise-repeatable runs.

Precision (games.precision): the weights, and so the keys/values and the attention masks, are in
`precision`; `auto` is bf16 on a bf16 CPU or GPU, except for a backend made for one-row decoding
(`one_row`, a person's game), which stays float32 on a CPU. Sampling (games.llm.sampling) takes
top-k before top-p, so top-p sorts the k candidates instead of the whole vocabulary (the same
distribution and draws).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from games.base_models import BaseModelError, resolve_model
from games.llm.base import (
    BackendError,
    Chat,
    Generation,
    LLMBackend,
    PromptEncoder,
    SamplingParams,
    cut_at_stop,
    encode_reply_spans,
    row_seeds,
)
from games.llm.memory import available_memory_bytes, kv_bytes_per_token
from games.llm.prefix_cache import BLOCK, BufferLayer, PrefixStore
from games.llm.sampling import choose_next_tokens
from games.precision import normalise, resolve, torch_dtype


@dataclass(frozen=True)
class TransformersConfig:
    """Where the model is and how to run it."""

    model: str  # a local folder, or a hub id when allow_hub (or when it is in the local hub cache)
    adapter: str | None = None  # a peft (LoRA) adapter folder, merged into the weights at load time
    device: str = "auto"  # "auto" = cuda when available, else cpu
    precision: str = "auto"  # games.precision: auto | float32 | bfloat16 (weights and KV cache)
    # decodes one chat at a time (a person's game): `auto` keeps float32 on a CPU, where bf16
    # decodes SmolLM2 at 0.9x float32's speed at batch 1 (1.34x at 32; bench.compute generation)
    one_row: bool = False
    allow_hub: bool = False  # False: never download (local_files_only)
    max_batch_size: int = 64  # chats per forward pass
    # keys/values of recent sequences kept for reuse (grown to hold a call's batch unless
    # prefix_cache_grows is off: then a hard cap); 0 disables
    prefix_cache_mb: float = 256.0
    prefix_cache_grows: bool = True

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model (a folder or hub id) is required")
        if self.max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if self.prefix_cache_mb < 0:
            raise ValueError("prefix_cache_mb must be >= 0")
        object.__setattr__(self, "precision", normalise(self.precision))


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def load_model(config: TransformersConfig) -> tuple[Any, Any]:
    """The tokenizer and the model in eval mode, with clear errors when they cannot be found."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        path = os.path.expanduser(resolve_model(config.model))  # a base model's name: its folder
    except BaseModelError as exc:
        raise BackendError(str(exc)) from exc
    if os.path.isdir(path):
        source, local_only = path, True
    elif os.path.exists(path) or not _HUB_ID.match(config.model):
        raise BackendError(f"model folder not found: {path}")
    else:
        source, local_only = config.model, not config.allow_hub
    device = (
        ("cuda" if torch.cuda.is_available() else "cpu")
        if config.device == "auto"
        else config.device
    )
    dtype = torch_dtype(resolve(config.precision, device, one_row=config.one_row))
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(
            source,
            local_files_only=local_only,
            dtype=torch.float32 if config.adapter else dtype,  # an adapter merges in float32
        )
    except OSError as exc:
        hint = (
            ""
            if config.allow_hub or os.path.isdir(path)
            else " (not a local folder; hub downloads are off)"
        )
        raise BackendError(f"cannot load model {config.model!r}{hint}: {exc}") from exc
    if config.adapter:
        if not os.path.isdir(config.adapter):
            raise BackendError(f"adapter folder not found: {config.adapter}")
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, config.adapter).merge_and_unload().to(dtype)
    return tokenizer, model.to(device).eval()


class TransformersBackend(LLMBackend):
    """Batched generation and scoring with a local transformers causal LM."""

    def __init__(self, config: TransformersConfig | str, **overrides: Any):
        self.config = (
            TransformersConfig(model=config, **overrides) if isinstance(config, str) else config
        )
        self.tokenizer, self.model = load_model(self.config)
        self._setup(self.config.prefix_cache_mb)
        self.name = f"transformers:{self.config.model}"

    @classmethod
    def from_model(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        prefix_cache_mb: float = 0.0,
        max_batch_size: int = 64,
        prefix_cache_grows: bool = True,
    ):
        """Wrap an already loaded model (e.g. the policy being trained; keep it in eval mode while
        sampling). The prefix cache is off by default here: if you turn it on, call
        `clear_cache()` whenever the weights change."""
        self = cls.__new__(cls)
        self.config = TransformersConfig(
            model=getattr(model, "name_or_path", "") or "in-memory",
            prefix_cache_mb=prefix_cache_mb,
            max_batch_size=max_batch_size,
            prefix_cache_grows=prefix_cache_grows,
        )
        self.tokenizer, self.model = tokenizer, model
        self._setup(prefix_cache_mb)
        self.name = f"transformers:{self.config.model}"
        return self

    def _setup(self, prefix_cache_mb: float) -> None:
        tok, gen = self.tokenizer, getattr(self.model, "generation_config", None)
        eos = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        extra = getattr(gen, "eos_token_id", None)
        eos.update(
            extra if isinstance(extra, (list, tuple)) else [extra] if extra is not None else []
        )
        if not eos:
            raise BackendError("the tokenizer has no end-of-sequence token")
        self.eos_ids = eos
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else min(eos)
        self.device = next(self.model.parameters()).device
        # what the weights (and so the KV cache) are in: the run's resolved precision
        self.precision = "bfloat16" if self.model.dtype == torch.bfloat16 else "float32"
        self._encode = PromptEncoder(tok)
        # Own preallocated cache layers (and prefix reuse) need plain full-attention layers.
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        layers = DynamicCache(config=self.model.config).layers
        self._buffered = bool(layers) and all(type(layer) is DynamicLayer for layer in layers)
        # our own 4D masks only where they cannot override a sliding-window or hybrid layout
        self._sdpa = (
            self._buffered and getattr(self.model.config, "_attn_implementation", None) == "sdpa"
        )
        self._call_bytes = 0
        self._cache = (
            PrefixStore(int(prefix_cache_mb * 2**20))
            if prefix_cache_mb > 0 and self._buffered
            else None
        )
        self.stats = {
            "prefilled_tokens": 0,
            "reused_tokens": 0,
            "generated_tokens": 0,
            "prefill_s": 0.0,
            "decode_s": 0.0,
        }

    def _hold(self, buffer_bytes: int) -> None:
        """Let the prefix store hold every batch buffer of this `generate` call (each chunk of
        `max_batch_size` prompts writes one), so that games played in lock step (an evaluation, a
        rollout) find their histories on their next turn instead of computing them again: its
        budget (`prefix_cache_mb`) grows to their sum, at most to a quarter of the memory
        available now. Called as each buffer is allocated, with its size."""
        self._call_bytes += buffer_bytes
        if self._cache is None or not self.config.prefix_cache_grows:
            return
        if self._call_bytes > self._cache.budget:
            available = available_memory_bytes(self.model)
            cap = available // 4 if available else self._call_bytes
            self._cache.budget = max(self._cache.budget, min(self._call_bytes, cap))

    def clear_cache(self) -> None:
        """Forget cached keys/values (required after the model's weights change)."""
        if self._cache is not None:
            self._cache.clear()

    # -- the batched forward with prefix reuse ---------------------------------------------
    def _prefill(
        self, rows: Sequence[Sequence[int]], reuse_limits: Sequence[int], keep: int, room: int = 0
    ):
        """Run `rows` (token lists) through the model, reusing stored prefixes of at most
        `reuse_limits[i]` tokens. Rows are right-aligned: [pad][reused][pad][new]. Returns the
        logits of the last `keep` positions, the cache (with `room` free positions for decoding)
        and the 2D attention mask."""
        from transformers import DynamicCache

        self._share_common_prefix(rows, reuse_limits)
        hits = self._cache.lookup(rows, reuse_limits) if self._cache else [(0, None)] * len(rows)
        width_reused = max(n for n, _ in hits)
        width_new = max(len(r) - n for r, (n, _) in zip(rows, hits))
        self.stats["reused_tokens"] += sum(n for n, _ in hits)
        self.stats["prefilled_tokens"] += sum(len(r) - n for r, (n, _) in zip(rows, hits))
        batch = len(rows)
        mask = torch.zeros(batch, width_reused + width_new, dtype=torch.long)
        input_ids = torch.full((batch, width_new), self.pad_id, dtype=torch.long)
        for i, (row, (n, _)) in enumerate(zip(rows, hits)):
            new = row[n:]
            mask[i, width_reused - n : width_reused] = 1
            mask[i, mask.shape[1] - len(new) :] = 1
            input_ids[i, width_new - len(new) :] = torch.tensor(new, dtype=torch.long)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, width_reused:]
        cache = DynamicCache(config=self.model.config)
        if self._buffered:
            capacity = width_reused + width_new + room
            self._hold(batch * capacity * kv_bytes_per_token(self.model))
            cache.layers = [BufferLayer(capacity) for _ in cache.layers]
            if width_reused:
                entry = next(e for _, e in hits if e is not None)
                # Uninitialised memory, except the reused part's left padding: masked keys must be
                # finite (weight 0 times NaN is NaN); everything from width_reused on is written
                # first.
                buffers = [
                    (
                        k.new_empty((batch, k.shape[1], capacity, k.shape[3])),
                        v.new_empty((batch, v.shape[1], capacity, v.shape[3])),
                    )
                    for k, v in entry.buffers
                ]
                for i, (n, e) in enumerate(hits):
                    for k, v in buffers:
                        k[i, :, : width_reused - n].zero_()
                        v[i, :, : width_reused - n].zero_()
                    if n:
                        e.copy_prefix(n, buffers, i, width_reused - n)
                cache.layers = [BufferLayer(capacity, k, v, width_reused) for k, v in buffers]
        out = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=self._attention_mask(mask, width_new),
            position_ids=positions.to(self.device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=keep,
        )
        width = width_reused + width_new
        segments = [
            [(width_reused - n, width_reused)] * bool(n) + [(width - len(r) + n, width)]
            for r, (n, _) in zip(rows, hits)
        ]
        return out.logits.float(), cache, mask, positions[:, -1:], segments

    def _share_common_prefix(
        self, rows: Sequence[Sequence[int]], reuse_limits: Sequence[int]
    ) -> None:
        """When many rows start alike (every game's first prompt, right after `clear_cache()`) and
        the store lacks that start, compute it once for one row so all rows can reuse it."""
        if self._cache is None or len(rows) < 2:
            return
        width = min(min(reuse_limits), min(len(r) for r in rows))
        first = np.asarray(rows[0][:width])
        for row in rows[1:]:
            same = first[:width] == np.asarray(row[:width])
            width = width if same.all() else int(same.argmin())
            if width < 2 * BLOCK:
                return
        if self._cache.lookup([rows[0]], [width])[0][0] < width - BLOCK:
            _, cache, _, _, segments = self._prefill([rows[0][:width]], [width - 1], keep=1)
            self._remember([rows[0][:width]], cache, segments)

    def _remember(
        self, rows: Sequence[Sequence[int]], cache: Any, segments: list[list[tuple[int, int]]]
    ) -> None:
        """Store where each row's tokens sit in the cache buffers (`segments`, in order)."""
        if self._cache is not None:
            self._cache.add(rows, [(layer.kbuf, layer.vbuf) for layer in cache.layers], segments)

    # -- generation -------------------------------------------------------------------------
    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        return self.generate_ids(self._encode(chats), sampling, seeds=seeds)

    def generate_ids(
        self,
        prompts: Sequence[Sequence[int]],
        sampling: SamplingParams,
        *,
        seeds: Sequence[int] | None = None,
    ) -> list[Generation]:
        """`generate` from prompts already tokenised (what a server's completions endpoint gets
        as token ids)."""
        seeds_ = row_seeds(sampling, len(prompts), seeds)
        prompts = [list(map(int, p)) for p in prompts]
        out: list[Generation] = []
        step = self.config.max_batch_size
        self._call_bytes = 0  # the batch buffers this call writes (see _hold)
        for start in range(0, len(prompts), step):
            out.extend(
                self._generate(
                    prompts[start : start + step], sampling, seeds_[start : start + step]
                )
            )
        return out

    @torch.inference_mode()
    def _generate(
        self, prompts: list[list[int]], sampling: SamplingParams, seeds: list[int | None]
    ) -> list[Generation]:
        batch, steps = len(prompts), sampling.max_new_tokens
        # One uniform per row and step, drawn up front from the row's own generator: a row's
        # tokens depend on its seed and its own logits only, not on its batch neighbours.
        uniforms = torch.stack(
            [
                torch.rand(steps, generator=torch.Generator().manual_seed(s))
                if s is not None
                else torch.rand(steps)
                for s in seeds
            ]
        )
        temperature = sampling.temperature or 1.0
        start = time.perf_counter()
        logits, cache, mask, position, segments = self._prefill(
            prompts, [len(p) - 1 for p in prompts], keep=1, room=steps - 1
        )
        self.stats["prefill_s"] += time.perf_counter() - start
        start = time.perf_counter()
        tokens: list[list[int]] = [[] for _ in range(batch)]
        logprobs: list[list[float]] = [[] for _ in range(batch)]
        texts, finish, done = [""] * batch, ["length"] * batch, [False] * batch
        fed = [0] * batch  # generated tokens whose keys/values are in the cache, per row
        for step in range(steps):
            scaled = logits[:, -1, :] if temperature == 1.0 else logits[:, -1, :] / temperature
            chosen, picked = self._choose(scaled, sampling, uniforms[:, step])
            for i, token in enumerate(chosen.tolist()):
                if done[i]:
                    continue
                tokens[i].append(token)
                logprobs[i].append(picked[i])
                if token in self.eos_ids:
                    done[i], finish[i] = True, "stop"
                elif sampling.stop:
                    texts[i], hit = cut_at_stop(
                        self.tokenizer.decode(tokens[i], skip_special_tokens=True), sampling.stop
                    )
                    if hit:
                        done[i], finish[i] = True, "stop"
            if all(done) or step == steps - 1:
                break
            live = torch.tensor([[0 if d else 1] for d in done])
            feed = torch.where(
                live.bool(), chosen.cpu()[:, None], torch.full_like(live, self.pad_id)
            )
            for i in range(batch):
                fed[i] += not done[i]
            mask = torch.cat([mask, live], dim=1)
            position = position + 1
            logits = self.model(
                input_ids=feed.to(self.device),
                attention_mask=self._attention_mask(mask, 1),
                position_ids=position.to(self.device),
                past_key_values=cache,
                use_cache=True,
            ).logits.float()
        self.stats["decode_s"] += time.perf_counter() - start
        for segs, n in zip(segments, fed):
            segs[-1] = (segs[-1][0], segs[-1][1] + n)  # fed tokens follow the prompt in the buffer
        self._remember([p + t[:n] for p, t, n in zip(prompts, tokens, fed)], cache, segments)
        self.stats["generated_tokens"] += sum(len(t) for t in tokens)
        results = []
        for i in range(batch):
            if finish[i] == "stop" and tokens[i][-1] not in self.eos_ids:
                text = texts[i]  # cut at the stop string
            else:
                body = [t for t in tokens[i] if t not in self.eos_ids]
                text = cut_at_stop(
                    self.tokenizer.decode(body, skip_special_tokens=True), sampling.stop
                )[0]
            results.append(Generation(text, tokens[i], logprobs[i], list(prompts[i]), finish[i]))
        return results

    def _attention_mask(self, mask: torch.Tensor, queries: int) -> torch.Tensor:
        """The mask for the last `queries` positions of `mask` (2D, 1 = a real token). For SDPA,
        a ready-made additive 4D mask: nothing rebuilt per step, and faster than a boolean mask
        on CPU. Pad queries see no key; the large finite negative keeps them NaN-free."""
        mask = mask.to(self.device)
        if not self._sdpa:
            return mask
        low = torch.finfo(self.model.dtype).min
        if queries == 1:
            return torch.where(mask.bool(), 0.0, low).to(self.model.dtype)[:, None, None, :]
        keys = mask.shape[1]
        causal = (
            torch.arange(keys, device=self.device)[None, :]
            <= torch.arange(keys - queries, keys, device=self.device)[:, None]
        )
        allowed = (mask[:, None, :] == 1) & causal[None]
        additive = torch.zeros(allowed.shape, dtype=self.model.dtype, device=self.device)
        return additive.masked_fill_(~allowed, low)[:, None]

    # the sampler (games.llm.sampling), an attribute so that one backend can be given another
    _choose = staticmethod(choose_next_tokens)

    # -- scoring ----------------------------------------------------------------------------
    def score_spans(
        self, chats: Sequence[Chat], replies: Sequence[str], spans: Sequence[tuple[int, int]]
    ) -> list[float]:
        encoded = encode_reply_spans(self.tokenizer, chats, replies, spans)
        out: list[float] = []
        step = self.config.max_batch_size
        self._call_bytes = 0  # the batch buffers this call writes (see _hold)
        for start in range(0, len(encoded), step):
            out.extend(self._score(encoded[start : start + step]))
        return out

    @torch.inference_mode()
    def _score(self, encoded: list[tuple[list[int], int, int]]) -> list[float]:
        rows = [ids for ids, _, _ in encoded]
        # logits at position p predict token p + 1: keep every position from the first scored
        # token - 1
        keep = max(len(ids) - first + 1 for ids, first, _ in encoded)
        logits, cache, _, _, segments = self._prefill(
            rows, [first - 1 for _, first, _ in encoded], keep=keep
        )
        logp = torch.log_softmax(logits, dim=-1)
        scores = []
        for i, (ids, first, end) in enumerate(encoded):
            offset = keep - len(ids)  # logits index of sequence position p is p + offset
            targets = torch.tensor(ids[first:end], device=logp.device)
            picked = logp[i, first - 1 + offset : end - 1 + offset].gather(-1, targets[:, None])
            scores.append(float(picked.sum()))
        self._remember(rows, cache, segments)
        return scores
