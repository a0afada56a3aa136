"""Chat tokenisation with a loss mask: which tokens of a chat a trainer learns from.

`encode_chat(tokenizer, messages, train="last")` gives the token ids of the chat (the model's own
chat template, the tokens inference sees: `games.llm.base.encode_prompt` is a prefix of them) and
`labels` that are -100 everywhere but on the trained assistant messages: the last one (turn-level
SFT: the context, earlier questions, judge answers and chat tokens are masked) or all of them
(multi-turn RL: environment tokens masked). The assistant span is what the template wraps in
`{% generation %}` when it has the markers (the reply and its end-of-turn token), else what
rendering the chat one message further adds. SFT leaves this to TRL (completion-only loss); the
tests check both give the same labels. Rows with an `untrained_prefix` are tokenised here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from training.common.models import has_generation_markers

IGNORE = -100
TRAIN_MODES = ("last", "all")


@dataclass
class EncodedChat:
    input_ids: list[int]
    labels: list[int]  # input id where trained, IGNORE elsewhere
    spans: list[tuple[int, int]]  # token range [start, end) of every assistant message, in order

    @property
    def prompt_length(self) -> int:
        """Tokens before the last assistant message (its context)."""
        return self.spans[-1][0] if self.spans else len(self.input_ids)

    def __len__(self) -> int:
        return len(self.input_ids)


def _render(tokenizer: Any, messages: Sequence[dict], generation_prompt: bool = False) -> str:
    return tokenizer.apply_chat_template(
        list(messages), tokenize=False, add_generation_prompt=generation_prompt
    )


def _runs(mask: Sequence[int]) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, bit in enumerate([*mask, 0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            runs.append((start, i))
            start = None
    return runs


def assistant_spans(
    tokenizer: Any, messages: Sequence[dict]
) -> tuple[list[int], list[tuple[int, int]]]:
    """Token ids of the chat and the token range of each assistant message."""
    n_assistant = sum(m["role"] == "assistant" for m in messages)
    if has_generation_markers(tokenizer):
        enc = tokenizer.apply_chat_template(
            list(messages), tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, spans = list(enc["input_ids"]), _runs(enc["assistant_masks"])
        if len(spans) == n_assistant:
            return ids, spans
        # adjacent or empty assistant messages: fall back to rendering prefixes
    full = _render(tokenizer, messages)
    char_spans = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = _render(tokenizer, messages[:i], generation_prompt=True)
        upto = _render(tokenizer, messages[: i + 1])
        if not (full.startswith(upto) and upto.startswith(before)):
            raise ValueError(
                "the chat template renders earlier turns differently in longer chats; "
                "it cannot say which tokens belong to which message"
            )
        char_spans.append((len(before), len(upto)))
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = list(enc["input_ids"]), enc["offset_mapping"]
    spans = []
    for a, b in char_spans:
        inside = [k for k, (s, e) in enumerate(offsets) if s < b and e > a]
        spans.append((inside[0], inside[-1] + 1) if inside else (len(ids), len(ids)))
    return ids, spans


def encode_chat(tokenizer: Any, messages: Sequence[dict], *, train: str = "last") -> EncodedChat:
    """Token ids and labels of a chat; `train` is "last" (the final assistant message) or "all"."""
    if train not in TRAIN_MODES:
        raise ValueError(f"train must be one of {TRAIN_MODES}, got {train!r}")
    if not messages or messages[-1]["role"] != "assistant":
        raise ValueError("the chat must end with the assistant message to train")
    ids, spans = assistant_spans(tokenizer, messages)
    trained = spans[-1:] if train == "last" else spans
    labels = [IGNORE] * len(ids)
    for a, b in trained:
        labels[a:b] = ids[a:b]
    return EncodedChat(ids, labels, spans)


def encode_prompt_completion(
    tokenizer: Any,
    prompt: Sequence[dict],
    completion: Sequence[dict],
    *,
    untrained_prefix: str = "",
) -> EncodedChat:
    """A conversational prompt/completion example (TRL's format) with only the completion trained;
    `untrained_prefix`, the completion's opening text ("Is it"), is context too, not trained."""
    encoded = encode_chat(tokenizer, [*prompt, *completion], train="last")
    if untrained_prefix:
        start, end = encoded.spans[-1]
        cut = next(
            (
                k
                for k in range(start + 1, end)
                if tokenizer.decode(encoded.input_ids[start:k]) == untrained_prefix
            ),
            None,
        )
        if cut is None:
            raise ValueError(
                f"the completion does not start with {untrained_prefix!r} on a token boundary"
            )
        encoded.labels[start:cut] = [IGNORE] * (cut - start)
    return encoded
