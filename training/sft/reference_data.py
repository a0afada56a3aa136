"""The ΔBelief-RL paper's SFT turns (games/data/reference-sft) as turn-level SFT examples.

Each parquet row is one turn of a game a strong LLM questioner played: the chat so far and the
next question. The rows' own chats are not the ones this project's guessers play with (the system
prompt lacks the max-turns sentence, the answers are bare `yes` / `no` / `repeated` /
`invalid`), so each row's questions and answers are parsed into Turns and its chat is rebuilt with
the run's GuesserFormat: the prompt is exactly what `games.rollout` shows an LLM guesser at that
turn, the completion the row's question. Every row is kept, as the paper trained on them (its
questions answered `repeated` or `invalid` later included).

The rows are ~16 turns sampled per secret from several games; `game` ids group the rows whose
histories extend one another (one game, as far as the rows tell; a short history shared by
several games goes with the first of them).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from games.llm.chat import GUESSER_PROMPT, GuesserFormat
from games.rules import VERDICT_FEEDBACK, clean_word
from games.text import normalise_question
from games.types import Turn, Verdict
from games.wordlists import read_words

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "games" / "data" / "reference-sft"
SHIPPED_FILE = "gem_lta_sft_qwen3_1.7b_st.parquet"  # the file that started the paper's 1.7B
HELD_OUT_LISTS = ("dbrl/paper_test", "dbrl/paper_val", "dbrl/val", "dbrl/test")
ANSWERS = {
    "yes": Verdict.YES,
    "no": Verdict.NO,
    "repeated": Verdict.REPEATED,
    "invalid": Verdict.INVALID,
}
COLUMNS = ("golden_answers", "prompt", "response")


@dataclass(frozen=True)
class ReferenceTurn:
    """One row: the secret, the answered questions before it, the question it asks next, and the
    game it belongs to (filled by `read_reference`)."""

    secret: str
    history: tuple[tuple[str, Verdict], ...]
    question: str
    game: int = -1

    @property
    def path(self) -> tuple[str, ...]:
        """The row's game as far as it shows it: every question and answer, then its question."""
        return (*(x for q, v in self.history for x in (q, v.value)), self.question)

    def turns(self) -> list[Turn]:
        """The history as the engine records it (its feedback sentences)."""
        return [
            Turn(index=i, question=q, verdict=v, feedback=VERDICT_FEEDBACK[v])
            for i, (q, v) in enumerate(self.history)
        ]


def reference_path(name: str = "") -> Path:
    """The parquet file `name` names: empty = the shipped file, else a path, else a file of the
    shipped folder."""
    if not name:
        return SHIPPED_DIR / SHIPPED_FILE
    path = Path(name)
    if path.is_file():
        return path
    shipped = SHIPPED_DIR / name
    if shipped.is_file():
        return shipped
    raise FileNotFoundError(f"no reference SFT file at {name!r} (nor in {SHIPPED_DIR})")


def held_out_secrets() -> set[str]:
    """The secrets of the evaluation lists, which no reference row may have."""
    return {w for name in HELD_OUT_LISTS for w in read_words(name)}


def parse_row(secret: str, prompt: Sequence[dict], response: str) -> ReferenceTurn:
    """A row's turn (`secret` as games.rules.clean_word gives it): the instruction, then (assistant
    question, user answer) pairs."""
    if not prompt or prompt[0].get("role") != "user":
        raise ValueError(f"{secret}: a row's chat must open with the instruction")
    if prompt[0].get("content", "").strip() != GUESSER_PROMPT.strip():
        raise ValueError(f"{secret}: the instruction is not the paper's questioner prompt")
    pairs = prompt[1:]
    if len(pairs) % 2:
        raise ValueError(f"{secret}: a question without an answer")
    history = []
    for asked, answered in zip(pairs[::2], pairs[1::2]):
        if asked.get("role") != "assistant" or answered.get("role") != "user":
            raise ValueError(f"{secret}: questions and answers must alternate")
        verdict = ANSWERS.get(answered.get("content", "").strip().lower())
        if verdict is None:
            raise ValueError(f"{secret}: unknown answer {answered.get('content')!r}")
        history.append((asked["content"], verdict))
    return ReferenceTurn(secret=secret, history=tuple(history), question=response)


def assign_games(turns: Sequence[ReferenceTurn]) -> list[ReferenceTurn]:
    """The turns, in order, with `game` set: a turn whose path (history and question) is a prefix
    of a longer turn's path of the same secret belongs to that turn's game (the longest, then the
    first in the file, when several); the others start a game. Ids count games in file order."""
    by_secret: dict[str, list[int]] = {}
    for i, t in enumerate(turns):
        by_secret.setdefault(t.secret, []).append(i)
    leaf_of: dict[int, int] = {}  # turn index -> index of the turn that ends its game
    for indices in by_secret.values():
        paths = {i: turns[i].path for i in indices}
        leaves: list[int] = []
        for i in sorted(indices, key=lambda k: (-len(paths[k]), k)):
            path = paths[i]
            leaf = next((j for j in leaves if paths[j][: len(path)] == path), None)
            if leaf is None:
                leaves.append(i)
                leaf = i
            leaf_of[i] = leaf
    ids = {leaf: n for n, leaf in enumerate(sorted(set(leaf_of.values())))}
    return [
        ReferenceTurn(t.secret, t.history, t.question, ids[leaf_of[i]]) for i, t in enumerate(turns)
    ]


def read_reference(name: str = "") -> list[ReferenceTurn]:
    """Every row of the reference file `name` (see reference_path) with its game; a ValueError if
    a row's secret is held out for evaluation (HELD_OUT_LISTS) or a row is not a questioner's
    turn."""
    import pyarrow.parquet as pq

    table = pq.read_table(reference_path(name), columns=list(COLUMNS))
    columns = [table.column(c).to_pylist() for c in COLUMNS]
    cleaned: dict[str, str] = {}
    turns = [
        parse_row(cleaned.setdefault(s, clean_word(s)), p, r)
        for s, p, r in zip(*columns, strict=True)
    ]
    held_out = sorted({t.secret for t in turns} & held_out_secrets())
    if held_out:
        raise ValueError(
            f"the reference file has {len(held_out)} secrets held out for evaluation "
            f"({', '.join(held_out[:10])}): training on them would leak the test words"
        )
    return assign_games(turns)


def repeats_a_question(turn: ReferenceTurn) -> bool:
    """The row's question was already asked in its history (as the rules compare questions)."""
    asked = {normalise_question(q) for q, _ in turn.history}
    return normalise_question(turn.question) in asked


def sample_turns(
    turns: Sequence[ReferenceTurn], *, words: int = 0, rows: int = 0, seed: int = 0
) -> list[ReferenceTurn]:
    """A seeded subsample in file order: `words` secrets with all their rows (0 = every secret),
    then `rows` of those rows (0 = all)."""
    kept = list(turns)
    if words:
        secrets = list(dict.fromkeys(t.secret for t in kept))
        chosen = set(
            random.Random(f"reference-words:{seed}").sample(secrets, min(words, len(secrets)))
        )
        kept = [t for t in kept if t.secret in chosen]
    if rows and rows < len(kept):
        picked = sorted(random.Random(f"reference-rows:{seed}").sample(range(len(kept)), rows))
        kept = [kept[i] for i in picked]
    return kept


def reference_examples(
    turns: Iterable[ReferenceTurn], chat_format: GuesserFormat = GuesserFormat()
) -> list[dict]:
    """Turn examples (training.sft.data.turn_examples' format): the guesser's chat before the
    turn, rebuilt with `chat_format`, and the row's question as the completion."""
    return [
        {
            "prompt": chat_format.messages(t.turns()),
            "completion": [{"role": "assistant", "content": t.question}],
            "secret": t.secret,
            "game": t.game,
            "turn": len(t.history),
        }
        for t in turns
    ]
