"""Teacher games packed one sequence per game: every question of the game trained in one row.

Turn-level SFT gives each answered question its own row, the whole history before it as context,
so a 10-question game encodes its system prompt 10 times and its early turns up to 9 times.
Where the chat of turn t+1 extends the chat of turn t token for token (checked here for every
packed row, with the run's tokenizer and chat template), one sequence per game holds them all:
the game's chat through its last trained question, labels on every trained question (and what
the template trains after it, TRL's completion labels, training.common.chat), -100 elsewhere.
Under causal attention each question then sees exactly the context its own row gave it, so the
packed row's summed loss equals the sum of the per-turn rows' (tested to 1e-5 at float32).

Normalisation: TRL's loss is the mean over the trained tokens of an optimizer step's rows (its
`num_items_in_batch`), packed or not, so every trained token weighs the same as in the per-turn
rows of the same games. What changes is what a step holds: `global_batch_size` rows are that many
games, about (questions per game)× as many questions as per-turn rows (the paper's file has
~1.1 rows per game, teacher games ~7): fewer, larger steps per epoch. SFTJobConfig.pack_games is
off by default (the paper's turn-level rows).

Rows come from training.sft.data.pack_games (chats, no tokens); `fit_rows` cuts each packed row
to the questions whose own row fits max_tokens (the rest would be dropped per turn too) and
unpacks any game whose tokens do not extend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from training.common.chat import IGNORE, EncodedChat, encode_prompt_completion
from training.sft.data import fits, is_packed, unpack_game


def encode_packed(tokenizer: Any, row: dict, max_tokens: int = 0) -> EncodedChat | None:
    """The packed row's tokens with every trained question's labels (`spans`: one per question),
    cut after the last question whose own row is at most `max_tokens` (0: no limit; no question
    left: no tokens); None if a question's row is not the start of the game's tokens (the
    template renders earlier turns differently in longer chats)."""
    messages = row["messages"]
    turns = [
        encode_prompt_completion(tokenizer, messages[:end], [messages[end]])
        for end in row["trained"]
    ]
    if any(turns[-1].input_ids[: len(t)] != t.input_ids for t in turns):
        return None
    if max_tokens:
        turns = [t for t in turns if len(t) <= max_tokens]
    ids = list(turns[-1].input_ids) if turns else []
    packed = EncodedChat(ids, [IGNORE] * len(ids), [])
    for turn in turns:
        start, end = turn.spans[-1]
        packed.labels[start:end] = turn.labels[start:end]
        packed.spans.append((start, end))
    return packed


def fit_rows(tokenizer: Any, rows: Sequence[dict], max_tokens: int) -> tuple[list[dict], int]:
    """The rows to train and the number of questions dropped for length: turn rows that fit
    (training.sft.data.fits), packed rows cut to their questions that fit, and the turn rows of
    packed games whose tokens do not extend turn by turn."""
    kept, dropped = [], 0
    for row in rows:
        encoded = encode_packed(tokenizer, row, max_tokens) if is_packed(row) else None
        if encoded is not None:
            n = len(encoded.spans)
            dropped += len(row["trained"]) - n
            if n:
                kept.append(
                    {
                        **row,
                        "messages": row["messages"][: row["trained"][n - 1] + 1],
                        "trained": row["trained"][:n],
                        "turns": row["turns"][:n],
                    }
                )
            continue
        for turn_row in unpack_game(row) if is_packed(row) else [row]:  # not token for token
            if fits(tokenizer, turn_row, max_tokens):
                kept.append(turn_row)
            else:
                dropped += 1
    return kept, dropped


def encode_row(tokenizer: Any, row: dict) -> EncodedChat:
    """A training row's tokens and labels: packed (encode_packed) or a turn row."""
    if is_packed(row):
        encoded = encode_packed(tokenizer, row)
        if encoded is None:
            raise ValueError(f"game {row.get('game')}: its turns do not extend token for token")
        return encoded
    prefix = row.get("untrained_prefix", "")
    return encode_prompt_completion(
        tokenizer, row["prompt"], row["completion"], untrained_prefix=prefix
    )
