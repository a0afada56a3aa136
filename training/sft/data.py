"""Turn-level SFT examples: one per answered question of a game, in TRL's conversational
prompt/completion format. The prompt is the guesser's chat before the turn (system prompt,
earlier questions, the judge's feedback: masked in training); the completion is the question.
"""

from __future__ import annotations

from typing import Iterable

from games.llm.chat import GuesserFormat
from games.types import Trajectory
from training.common.data import is_informative


def turn_examples(trajectories: Iterable[Trajectory], chat_format: GuesserFormat = GuesserFormat()) -> list[dict]:
    """Examples for every turn the judge answered (invalid, repeated and unknown turns stay in
    later turns' context but are never trained)."""
    rows = []
    for g, traj in enumerate(trajectories):
        for t, turn in enumerate(traj.turns):
            if not is_informative(turn) or not turn.question.strip():
                continue
            rows.append({
                "prompt": chat_format.messages(traj.turns[:t]),
                "completion": [{"role": "assistant", "content": turn.question}],
                "secret": traj.secret,
                "game": g,
                "turn": t,
            })
    return rows


def fits(tokenizer, example: dict, max_tokens: int) -> bool:
    """Whether prompt + completion is at most `max_tokens` tokens (longer ones are dropped, not cut:
    cutting would train a truncated question or none)."""
    from training.common.chat import encode_prompt_completion

    return len(encode_prompt_completion(tokenizer, example["prompt"], example["completion"],
                                        untrained_prefix=example.get("untrained_prefix", ""))) <= max_tokens
