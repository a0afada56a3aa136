"""Local models through transformers: batched, left-padded, KV-cached; CPU or GPU.

Generation is a small decode loop instead of `model.generate`, so that each chat samples from
its own seeded generator (a game's questions do not depend on which other games share the
batch) and so that a prefix cache can reuse the keys/values of earlier calls: in 20Q the prompt
of turn t+1 extends the prompt of turn t, so with the cache each turn only prefills the newly
appended tokens instead of the whole, growing history.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from games.llm.base import (
    BackendError,
    Chat,
    Generation,
    LLMBackend,
    SamplingParams,
    cut_at_stop,
    encode_prompt,
    encode_reply_span,
    row_seeds,
)


@dataclass(frozen=True)
class TransformersConfig:
    """Where the model is and how to run it."""

    model: str  # a local folder, or a hub id when allow_hub (or when it is in the local hub cache)
    adapter: str | None = None  # a peft (LoRA) adapter folder, merged into the weights at load time
    device: str = "auto"  # "auto" = cuda when available, else cpu
    dtype: str = "auto"  # "auto" = bfloat16 on a bf16-capable GPU, else float32
    allow_hub: bool = False  # False: never download (local_files_only)
    max_batch_size: int = 64  # chats per forward pass
    prefix_cache_mb: float = 256.0  # keys/values of recent sequences kept for reuse; 0 disables

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model (a folder or hub id) is required")
        if self.max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if self.prefix_cache_mb < 0:
            raise ValueError("prefix_cache_mb must be >= 0")
        if self.dtype not in ("auto", "float32", "float16", "bfloat16"):
            raise ValueError(f"unknown dtype {self.dtype!r}")


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def load_model(config: TransformersConfig) -> tuple[Any, Any]:
    """The tokenizer and the model in eval mode, with clear errors when they cannot be found."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = os.path.expanduser(config.model)
    if os.path.isdir(path):
        source, local_only = path, True
    elif os.path.exists(path) or not _HUB_ID.match(config.model):
        raise BackendError(f"model folder not found: {path}")
    else:
        source, local_only = config.model, not config.allow_hub
    device = ("cuda" if torch.cuda.is_available() else "cpu") if config.device == "auto" else config.device
    if config.dtype == "auto":
        dtype = torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported() else torch.float32
    else:
        dtype = getattr(torch, config.dtype)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(source, local_files_only=local_only, dtype=dtype)
    except OSError as exc:
        hint = "" if config.allow_hub or os.path.isdir(path) else " (not a local folder; hub downloads are off)"
        raise BackendError(f"cannot load model {config.model!r}{hint}: {exc}") from exc
    if config.adapter:
        if not os.path.isdir(config.adapter):
            raise BackendError(f"adapter folder not found: {config.adapter}")
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, config.adapter).merge_and_unload()
    return tokenizer, model.to(device).eval()


class _PrefixCache:
    """Keys/values of recently processed token sequences, reused for any later sequence that
    starts with the same tokens. Least recently used entries go first when over budget."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.entries: dict[int, tuple[np.ndarray, list[tuple[torch.Tensor, torch.Tensor]]]] = {}
        self._next = 0
        self._bytes = 0
        self._matrix: np.ndarray | None = None  # entries' tokens stacked, -1 padded
        self._keys: list[int] = []

    def clear(self) -> None:
        self.entries.clear()
        self._bytes, self._matrix, self._keys = 0, None, []

    @staticmethod
    def _size(kv: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
        return sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in kv)

    def lookup(self, ids: Sequence[int], limit: int) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """The longest cached prefix of `ids` (at most `limit` tokens) and its keys/values."""
        if not self.entries or limit <= 0:
            return 0, None
        if self._matrix is None:
            self._keys = list(self.entries)
            width = max(len(self.entries[k][0]) for k in self._keys)
            self._matrix = np.full((len(self._keys), width), -1, dtype=np.int64)
            for row, key in enumerate(self._keys):
                tokens = self.entries[key][0]
                self._matrix[row, : len(tokens)] = tokens
        n = min(limit, len(ids), self._matrix.shape[1])
        same = self._matrix[:, :n] == np.asarray(ids[:n], dtype=np.int64)
        common = np.where(same.all(axis=1), n, same.argmin(axis=1))
        best = int(common.argmax())
        if common[best] == 0:
            return 0, None
        key = self._keys[best]
        self.entries[key] = self.entries.pop(key)  # most recently used last
        self._keys, self._matrix = [], None
        return int(common[best]), self.entries[key][1]

    def add(self, ids: Sequence[int], kv: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        tokens = np.asarray(ids, dtype=np.int64)
        for key, (old, old_kv) in list(self.entries.items()):  # drop entries this one extends
            if len(old) <= len(tokens) and np.array_equal(old, tokens[: len(old)]):
                self._bytes -= self._size(old_kv)
                del self.entries[key]
        size = self._size(kv)
        if size > self.budget:
            return
        self.entries[self._next] = (tokens, kv)
        self._next += 1
        self._bytes += size
        while self._bytes > self.budget:
            oldest = next(iter(self.entries))
            self._bytes -= self._size(self.entries.pop(oldest)[1])
        self._keys, self._matrix = [], None


class TransformersBackend(LLMBackend):
    """Batched generation and scoring with a local transformers causal LM."""

    def __init__(self, config: TransformersConfig | str, **overrides: Any):
        self.config = TransformersConfig(model=config, **overrides) if isinstance(config, str) else config
        self.tokenizer, self.model = load_model(self.config)
        self._setup(self.config.prefix_cache_mb)
        self.name = f"transformers:{self.config.model}"

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, *, prefix_cache_mb: float = 0.0, max_batch_size: int = 64):
        """Wrap an already loaded model (e.g. the policy being trained). The prefix cache is off by
        default here: call `clear_cache()` whenever the weights change if you turn it on."""
        self = cls.__new__(cls)
        self.config = TransformersConfig(
            model=getattr(model, "name_or_path", "") or "in-memory", prefix_cache_mb=prefix_cache_mb,
            max_batch_size=max_batch_size,
        )
        self.tokenizer, self.model = tokenizer, model
        self._setup(prefix_cache_mb)
        self.name = f"transformers:{self.config.model}"
        return self

    def _setup(self, prefix_cache_mb: float) -> None:
        tok, gen = self.tokenizer, getattr(self.model, "generation_config", None)
        eos = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        extra = getattr(gen, "eos_token_id", None)
        eos.update(extra if isinstance(extra, (list, tuple)) else [extra] if extra is not None else [])
        if not eos:
            raise BackendError("the tokenizer has no end-of-sequence token")
        self.eos_ids = eos
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else min(eos)
        self.device = next(self.model.parameters()).device
        self._cache = _PrefixCache(int(prefix_cache_mb * 2**20)) if prefix_cache_mb > 0 else None
        self.stats = {"prefilled_tokens": 0, "reused_tokens": 0, "generated_tokens": 0}

    def clear_cache(self) -> None:
        """Forget cached keys/values (required after the model's weights change)."""
        if self._cache is not None:
            self._cache.clear()

    # -- the batched forward with prefix reuse ---------------------------------------------
    def _prefill(self, rows: Sequence[Sequence[int]], reuse_limits: Sequence[int], keep: int):
        """Run `rows` (token lists) through the model, reusing cached prefixes of at most
        `reuse_limits[i]` tokens. Returns the logits of the last `keep` positions (rows are
        right-aligned), the cache, the 2D attention mask and the last position ids."""
        from transformers import DynamicCache

        hits = [self._cache.lookup(r, lim) if self._cache else (0, None) for r, lim in zip(rows, reuse_limits)]
        width_cached = max(n for n, _ in hits)
        self.stats["reused_tokens"] += sum(n for n, _ in hits)
        self.stats["prefilled_tokens"] += sum(len(r) - n for r, (n, _) in zip(rows, hits))
        width_new = max(len(r) - n for r, (n, _) in zip(rows, hits))
        batch = len(rows)
        mask = torch.zeros(batch, width_cached + width_new, dtype=torch.long)
        input_ids = torch.full((batch, width_new), self.pad_id, dtype=torch.long)
        for i, (row, (n, _)) in enumerate(zip(rows, hits)):
            new = row[n:]
            mask[i, width_cached - n : width_cached] = 1
            mask[i, mask.shape[1] - len(new) :] = 1
            input_ids[i, width_new - len(new) :] = torch.tensor(new, dtype=torch.long)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, width_cached:]
        cache = DynamicCache(config=self.model.config)
        if width_cached:
            cache = DynamicCache(ddp_cache_data=self._stack(hits, width_cached), config=self.model.config)
        out = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=keep,
        )
        return out.logits.float(), out.past_key_values, mask, positions[:, -1:]

    def _stack(self, hits, width: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Cached keys/values of each row, right-aligned into zero-padded batch tensors."""
        some = next(kv for _, kv in hits if kv is not None)
        layers = []
        for layer, (k0, v0) in enumerate(some):
            keys = k0.new_zeros((len(hits), k0.shape[0], width, k0.shape[2]))
            values = v0.new_zeros((len(hits), v0.shape[0], width, v0.shape[2]))
            for i, (n, kv) in enumerate(hits):
                if n:
                    keys[i, :, width - n :] = kv[layer][0][:, :n]
                    values[i, :, width - n :] = kv[layer][1][:, :n]
            layers.append((keys, values))
        return layers

    def _remember(self, rows: Sequence[Sequence[int]], cache: Any, mask: torch.Tensor) -> None:
        """Store each row's keys/values (the positions its mask marks valid) for later reuse."""
        if self._cache is None:
            return
        valid = mask.bool().to(self.device)
        for i, row in enumerate(rows):
            kv = [(layer.keys[i][:, valid[i]].clone(), layer.values[i][:, valid[i]].clone()) for layer in cache.layers]
            self._cache.add(row, kv)

    # -- generation -------------------------------------------------------------------------
    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        seeds_ = row_seeds(sampling, len(chats), seeds)
        prompts = [encode_prompt(self.tokenizer, chat) for chat in chats]
        out: list[Generation] = []
        step = self.config.max_batch_size
        for start in range(0, len(prompts), step):
            out.extend(self._generate(prompts[start : start + step], sampling, seeds_[start : start + step]))
        return out

    @torch.inference_mode()
    def _generate(self, prompts: list[list[int]], sampling: SamplingParams, seeds: list[int | None]) -> list[Generation]:
        batch = len(prompts)
        generators = [torch.Generator().manual_seed(s) if s is not None else None for s in seeds]
        temperature = sampling.temperature or 1.0
        logits, cache, mask, position = self._prefill(prompts, [len(p) - 1 for p in prompts], keep=1)
        tokens: list[list[int]] = [[] for _ in range(batch)]
        logprobs: list[list[float]] = [[] for _ in range(batch)]
        texts = [""] * batch
        finish = ["length"] * batch
        done = [False] * batch
        fed = [list(p) for p in prompts]  # tokens whose keys/values are in the cache, per row
        for step in range(sampling.max_new_tokens):
            scaled = logits[:, -1, :] / temperature
            logp = torch.log_softmax(scaled, dim=-1).cpu()
            chosen = self._choose(scaled, sampling, generators)
            for i in range(batch):
                if done[i]:
                    continue
                token = int(chosen[i])
                tokens[i].append(token)
                logprobs[i].append(float(logp[i, token]))
                if token in self.eos_ids:
                    done[i], finish[i] = True, "stop"
                elif sampling.stop:
                    text = self.tokenizer.decode(tokens[i], skip_special_tokens=True)
                    texts[i], hit = cut_at_stop(text, sampling.stop)
                    if hit:
                        done[i], finish[i] = True, "stop"
            if all(done) or step == sampling.max_new_tokens - 1:
                break
            feed = torch.tensor([[self.pad_id if done[i] else tokens[i][-1]] for i in range(batch)])
            live = torch.tensor([[0 if done[i] else 1] for i in range(batch)])
            for i in range(batch):
                if not done[i]:
                    fed[i].append(tokens[i][-1])
            mask = torch.cat([mask, live], dim=1)
            position = position + 1
            logits = self.model(
                input_ids=feed.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=position.to(self.device),
                past_key_values=cache,
                use_cache=True,
            ).logits.float()
        self._remember(fed, cache, mask)
        self.stats["generated_tokens"] += sum(len(t) for t in tokens)
        results = []
        for i in range(batch):
            if finish[i] == "stop" and tokens[i][-1] not in self.eos_ids:
                text = texts[i]  # cut at the stop string
            else:
                body = [t for t in tokens[i] if t not in self.eos_ids]
                text = cut_at_stop(self.tokenizer.decode(body, skip_special_tokens=True), sampling.stop)[0]
            results.append(Generation(text, tokens[i], logprobs[i], list(prompts[i]), finish[i]))
        return results

    @staticmethod
    def _choose(scaled: torch.Tensor, sampling: SamplingParams, generators: list) -> list[int]:
        if sampling.greedy:
            return scaled.argmax(dim=-1).tolist()
        scaled = scaled.clone()
        if sampling.top_k and sampling.top_k < scaled.shape[-1]:
            kth = torch.topk(scaled, sampling.top_k, dim=-1).values[:, -1:]
            scaled[scaled < kth] = float("-inf")
        if sampling.top_p < 1.0:
            sorted_logits, order = scaled.sort(dim=-1, descending=True)
            cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
            drop = cumulative - sorted_logits.softmax(dim=-1) >= sampling.top_p  # keep the token that crosses
            scaled.scatter_(-1, order, sorted_logits.masked_fill(drop, float("-inf")))
        probs = scaled.softmax(dim=-1).cpu()
        return [int(torch.multinomial(probs[i], 1, generator=g)) for i, g in enumerate(generators)]

    # -- scoring ----------------------------------------------------------------------------
    def score_spans(
        self, chats: Sequence[Chat], replies: Sequence[str], spans: Sequence[tuple[int, int]]
    ) -> list[float]:
        if not len(chats) == len(replies) == len(spans):
            raise ValueError("chats, replies and spans must have the same length")
        encoded = [encode_reply_span(self.tokenizer, c, r, s) for c, r, s in zip(chats, replies, spans)]
        out: list[float] = []
        step = self.config.max_batch_size
        for start in range(0, len(encoded), step):
            out.extend(self._score(encoded[start : start + step]))
        return out

    @torch.inference_mode()
    def _score(self, encoded: list[tuple[list[int], int, int]]) -> list[float]:
        rows = [ids for ids, _, _ in encoded]
        # logits at position p predict token p + 1: keep every position from the first scored token - 1
        keep = max(len(ids) - first + 1 for ids, first, _ in encoded)
        logits, cache, mask, _ = self._prefill(rows, [first - 1 for _, first, _ in encoded], keep=keep)
        logp = torch.log_softmax(logits, dim=-1)
        scores = []
        for i, (ids, first, end) in enumerate(encoded):
            offset = keep - len(ids)  # logits index of sequence position p is p + offset
            targets = torch.tensor(ids[first:end], device=logp.device)
            picked = logp[i, first - 1 + offset : end - 1 + offset].gather(-1, targets[:, None])
            scores.append(float(picked.sum()))
        self._remember(rows, cache, mask)
        return scores
