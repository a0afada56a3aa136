"""Turn-level SFT examples: one per answered question of a game, in TRL's conversational
prompt/completion format. The prompt is the guesser's chat before the turn (system prompt,
earlier questions, the judge's feedback: masked in training); the completion is the question.

`recovery_examples` adds DAgger-style rows: a teacher game cut at a random turn, one or more wrong
guesses appended (answered No), and the teacher's own next question from there. Imitation alone
never shows a history with a wrong guess, so a student that guesses too early has never seen how
to go on; these rows show it (the guesses are context, only the teacher's question is trained).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from games.guessers.base import Guesser
from games.kb.questions import phrase
from games.llm.chat import GuesserFormat
from games.rules import VERDICT_FEEDBACK
from games.types import Trajectory, Turn, Verdict
from training.common.data import is_informative


def turn_examples(
    trajectories: Iterable[Trajectory], chat_format: GuesserFormat = GuesserFormat()
) -> list[dict]:
    """Examples for every turn the judge answered (invalid, repeated and unknown turns stay in
    later turns' context but are never trained)."""
    rows = []
    for g, traj in enumerate(trajectories):
        for t, turn in enumerate(traj.turns):
            if not is_informative(turn) or not turn.question.strip():
                continue
            rows.append(
                {
                    "prompt": chat_format.messages(traj.turns[:t]),
                    "completion": [{"role": "assistant", "content": turn.question}],
                    "secret": traj.secret,
                    "game": g,
                    "turn": t,
                }
            )
    return rows


def recovery_examples(
    trajectories: Sequence[Trajectory],
    teacher: Guesser,
    chat_format: GuesserFormat = GuesserFormat(),
    *,
    per_game: int = 1,
    max_wrong_guesses: int = 2,
    seed: int = 0,
) -> list[dict]:
    """`per_game` rows for every game with two or more answered turns: the game up to one of its
    answered turns after the first (drawn), then 1 … `max_wrong_guesses` guesses of words the
    teacher still thinks likely (its top candidates other than the secret), each answered No, and
    as the completion the question the teacher asks next after observing all of it (started with
    the game's seed)."""
    if per_game < 0 or max_wrong_guesses < 1:
        raise ValueError("per_game must be >= 0 and max_wrong_guesses >= 1")
    rows = []
    for g, traj in enumerate(trajectories):
        answered = [i for i, t in enumerate(traj.turns) if is_informative(t)]
        for r in range(per_game if len(answered) >= 2 else 0):
            rng = random.Random(f"recovery:{seed}:{traj.secret}:{g}:{r}")
            cut = answered[
                rng.randrange(1, len(answered))
            ]  # before an answered turn: the game so far
            state = teacher.start(seed=traj.seed)  # the game's own tie-breaks
            history = []
            for turn in traj.turns[:cut]:
                history.append(
                    Turn(
                        index=len(history),
                        question=turn.question,
                        verdict=turn.verdict,
                        feedback=turn.feedback,
                    )
                )
                teacher.observe(state, history[-1])
            for _ in range(rng.randint(1, max_wrong_guesses)):
                likely = [w for w, _ in teacher.ask(state).top_candidates or [] if w != traj.secret]
                if not likely:
                    break
                wrong = Turn(
                    index=len(history),
                    question=phrase("isa", rng.choice(likely), guess=True),
                    verdict=Verdict.NO,
                    feedback=VERDICT_FEEDBACK[Verdict.NO],
                )
                history.append(wrong)
                teacher.observe(state, wrong)
            if len(history) == cut:
                # nothing the teacher considers likely but the secret: no wrong guess to
                # recover from
                continue
            rows.append(
                {
                    "prompt": chat_format.messages(history),
                    "completion": [{"role": "assistant", "content": teacher.ask(state).question}],
                    "secret": traj.secret,
                    "game": g,
                    "turn": len(history),
                    "recovery": True,
                }
            )
    return rows


def fits(tokenizer, example: dict, max_tokens: int) -> bool:
    """Whether prompt + completion is at most `max_tokens` tokens (longer ones are dropped, not cut:
    cutting would train a truncated question or none)."""
    from training.common.chat import encode_prompt_completion

    return (
        len(
            encode_prompt_completion(
                tokenizer,
                example["prompt"],
                example["completion"],
                untrained_prefix=example.get("untrained_prefix", ""),
            )
        )
        <= max_tokens
    )


def pack_games(rows: Sequence[dict]) -> list[dict]:
    """Turn rows of one game (the same `game`, turn_examples' or reference_examples' format) as
    one row: the game's chat through its last row's question, every row's question trained
    (`trained`: the index of each trained assistant message; `turns`: their turns). A row joins
    its game's packed row only if its chat (prompt and completion) is the start of that chat
    message for message; recovery rows (a history the game never had), rows with an
    untrained_prefix and repeats of a packed question stay as they are, as do games of one row.
    Tokens are checked when encoded (training.sft.packing). Packed rows come first, in game
    order, then the rest in their order."""
    games: dict[object, list[int]] = {}
    for i, row in enumerate(rows):
        if "game" in row and not row.get("recovery") and not row.get("untrained_prefix"):
            games.setdefault(row["game"], []).append(i)
    packed, joined = [], set()
    for members in games.values():
        longest = rows[max(members, key=lambda i: len(rows[i]["prompt"]))]
        chat = [*longest["prompt"], *longest["completion"]]
        chosen: dict[int, int] = {}  # index of the trained message -> row
        for i in members:
            row, end = rows[i], len(rows[i]["prompt"])
            if (
                len(row["completion"]) == 1
                and chat[: end + 1] == [*row["prompt"], *row["completion"]]
                and end not in chosen
            ):
                chosen[end] = i
        if len(chosen) < 2:
            continue
        trained = sorted(chosen)
        packed.append(
            {
                "messages": chat[: trained[-1] + 1],
                "trained": trained,
                "secret": longest["secret"],
                "game": longest["game"],
                "turns": [rows[chosen[end]].get("turn") for end in trained],
            }
        )
        joined.update(chosen.values())
    return packed + [r for i, r in enumerate(rows) if i not in joined]


def unpack_game(row: dict) -> list[dict]:
    """A packed row's turn rows again (the format pack_games took them in)."""
    return [
        {
            "prompt": row["messages"][:end],
            "completion": [row["messages"][end]],
            "secret": row["secret"],
            "game": row["game"],
            "turn": turn,
        }
        for end, turn in zip(row["trained"], row["turns"], strict=True)
    ]


def is_packed(row: dict) -> bool:
    return "trained" in row
