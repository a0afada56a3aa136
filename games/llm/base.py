"""The LLM backend interface shared by guessers, judges, ΔBelief and training.

Chats are OpenAI-style message lists (`[{"role": ..., "content": ...}, ...]`). Backends turn
them into tokens with the model's own chat template. Nothing here imports torch.
"""

from __future__ import annotations

import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Chat = list[dict[str, Any]]


class BackendError(RuntimeError):
    """A backend could not be built or could not answer (missing model, unreachable server, ...)."""


# the reference's validation sampling (delta-belief-rl base_multiturn.yaml,
# actor_rollout_ref.rollout.val_kwargs): what its evaluation tables use, not T=1
PAPER_VAL_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20}


@dataclass(frozen=True)
class SamplingParams:
    """How to decode. `temperature == 0` means greedy."""

    max_new_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 = no top-k filter
    seed: int | None = None  # call seed; `generate(..., seeds=...)` overrides it per chat
    stop: tuple[str, ...] = ()  # the text ends before the first stop string

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(s for s in self.stop if s))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass
class Generation:
    """One sampled assistant reply.

    `token_ids` are the generated tokens (the end-of-turn token included when the model produced
    it); `text` is their decoded text without special tokens, cut before the first stop string.
    `logprobs[i]` is log p(token_ids[i]) under the model's distribution at the sampling
    temperature (temperature 1 when greedy), before top-k/top-p truncation: what a trainer
    recomputes. Remote backends fill what the server returns (possibly empty lists).
    """

    text: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    prompt_token_ids: list[int] | None = None
    finish_reason: str = "length"  # "stop" (end of turn or stop string) or "length"


def row_seeds(sampling: SamplingParams, n: int, seeds: Sequence[int] | None) -> list[int | None]:
    """One seed per chat: the explicit ones, else derived from the call seed, else None."""
    if seeds is not None:
        if len(seeds) != n:
            raise ValueError(f"got {len(seeds)} seeds for {n} chats")
        return [int(s) for s in seeds]
    if sampling.seed is None:
        return [None] * n
    return [zlib.crc32(f"{sampling.seed}:{i}".encode()) & 0x7FFFFFFF for i in range(n)]


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cuts = [i for i in (text.find(s) for s in stop) if i >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


class LLMBackend(ABC):
    """Generates and scores assistant replies for batches of chats."""

    name: str = "llm"

    @abstractmethod
    def generate(
        self, chats: Sequence[Chat], sampling: SamplingParams, *, seeds: Sequence[int] | None = None
    ) -> list[Generation]:
        """One sampled assistant reply per chat, in order. `seeds` (one per chat) make each reply
        reproducible independently of the other chats in the batch."""

    @abstractmethod
    def score_spans(
        self, chats: Sequence[Chat], replies: Sequence[str], spans: Sequence[tuple[int, int]]
    ) -> list[float]:
        """For each chat, append `reply` as the assistant turn and return the sum of the model's
        log-probs (temperature 1) of the tokens that overlap the character span `reply[a:b]`."""

    def score(self, chats: Sequence[Chat], continuations: Sequence[str]) -> list[float]:
        """Sum of log-probs of each continuation as the assistant reply (end-of-turn excluded)."""
        return self.score_spans(chats, continuations, [(0, len(c)) for c in continuations])

    def close(self) -> None:
        """Release resources (connections, GPU memory)."""
        return None  # by default there is nothing to release


class LLMPlayer:
    """A guesser or judge whose replies a backend writes: the backend, how it samples and the
    player's name (by default `llm:<backend name>`)."""

    def __init__(self, backend: LLMBackend, sampling: SamplingParams, name: str | None) -> None:
        self.backend = backend
        self.sampling = sampling
        self.name = name or f"llm:{backend.name}"


# -- tokenizer helpers shared by the local backends (a HF tokenizer; no torch needed) ---------
def encode_prompt(tokenizer: Any, chat: Chat) -> list[int]:
    """Token ids of `chat` followed by the assistant generation prompt."""
    return encode_prompts(tokenizer, [chat])[0]


def encode_prompts(tokenizer: Any, chats: Sequence[Chat]) -> list[list[int]]:
    """`encode_prompt` for many chats, tokenised in one (parallel) batch."""
    if not chats:
        return []
    texts = render_prompts(tokenizer, chats)
    return [list(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def render_prompts(tokenizer: Any, chats: Sequence[Chat]) -> list[str]:
    """The chat template applied to each chat plus the generation prompt (one batched call)."""
    return list(
        tokenizer.apply_chat_template(
            [list(c) for c in chats], tokenize=False, add_generation_prompt=True
        )
    )


class PromptEncoder:
    """`encode_prompts` that only tokenises text it has not seen: the rendered prompt is cut at
    special tokens (where fast tokenizers split the input anyway) and the pieces are memoised,
    so a growing 20Q history costs only its new turn. The first batch is checked against plain
    tokenisation; tokenizers where pieces do not compose fall back to it for good."""

    def __init__(self, tokenizer: Any, max_pieces: int = 200_000):
        self.tokenizer = tokenizer
        self.max_pieces = max_pieces
        self._pieces: dict[str, list[int]] = {}
        specials = [t for t in getattr(tokenizer, "added_tokens_decoder", {}).values() if t.special]
        plain = all(not (t.lstrip or t.rstrip or t.single_word or t.normalized) for t in specials)
        self._ids = {t.content: tokenizer.convert_tokens_to_ids(t.content) for t in specials}
        names = sorted(self._ids, key=len, reverse=True)
        self._split = (
            re.compile("(" + "|".join(map(re.escape, names)) + ")") if names and plain else None
        )
        self._checked = False

    def __call__(self, chats: Sequence[Chat]) -> list[list[int]]:
        if self._split is None:
            return encode_prompts(self.tokenizer, chats)
        if not chats:
            return []
        texts = render_prompts(self.tokenizer, chats)
        split = [self._split.split(text) for text in texts]
        new = sorted(
            {
                piece
                for parts in split
                for piece in parts[0::2]
                if piece and piece not in self._pieces
            }
        )
        if len(self._pieces) + len(new) > self.max_pieces:
            self._pieces.clear()
            new = sorted({piece for parts in split for piece in parts[0::2] if piece})
        if new:
            encoded = self.tokenizer(new, add_special_tokens=False)["input_ids"]
            self._pieces.update(zip(new, map(list, encoded)))
        out = []
        for parts in split:
            ids: list[int] = []
            for k, piece in enumerate(parts):
                ids.extend(self._pieces.get(piece, []) if k % 2 == 0 else [self._ids[piece]])
            out.append(ids)
        if not self._checked:
            self._checked = True
            if out != [
                list(x) for x in self.tokenizer(texts, add_special_tokens=False)["input_ids"]
            ]:
                self._split = None
                return encode_prompts(self.tokenizer, chats)
        return out


def encode_reply_span(
    tokenizer: Any, chat: Chat, reply: str, span: tuple[int, int]
) -> tuple[list[int], int, int]:
    """Token ids of `chat` + assistant `reply`, and the token range [first, end) covering
    `reply[span[0]:span[1]]` (every token overlapping those characters)."""
    return encode_reply_spans(tokenizer, [chat], [reply], [span])[0]


def encode_reply_spans(
    tokenizer: Any, chats: Sequence[Chat], replies: Sequence[str], spans: Sequence[tuple[int, int]]
) -> list[tuple[list[int], int, int]]:
    """`encode_reply_span` for many chats, rendered and tokenised in batches."""
    if not len(chats) == len(replies) == len(spans):
        raise ValueError("chats, replies and spans must have the same length")
    for reply, (a, b) in zip(replies, spans):
        if not 0 <= a < b <= len(reply):
            raise ValueError(
                f"span {(a, b)} is empty or outside the reply ({len(reply)} characters)"
            )
    if not chats:
        return []
    prefixes = render_prompts(tokenizer, chats)
    fulls = tokenizer.apply_chat_template(
        [[*chat, {"role": "assistant", "content": reply}] for chat, reply in zip(chats, replies)],
        tokenize=False,
        add_generation_prompt=False,
    )
    encoded = tokenizer(list(fulls), add_special_tokens=False, return_offsets_mapping=True)
    out = []
    for i, (prefix, full, reply, (a, b)) in enumerate(zip(prefixes, fulls, replies, spans)):
        start = full.find(reply, len(prefix)) if full.startswith(prefix) else full.rfind(reply)
        if start < 0:
            raise BackendError("the chat template does not reproduce the assistant reply verbatim")
        lo, hi = start + a, start + b
        inside = [k for k, (s, e) in enumerate(encoded["offset_mapping"][i]) if s < hi and e > lo]
        if not inside or inside[0] == 0:
            raise BackendError(f"no scorable tokens for span {(a, b)} of reply {reply!r}")
        out.append((list(encoded["input_ids"][i]), inside[0], inside[-1] + 1))
    return out
