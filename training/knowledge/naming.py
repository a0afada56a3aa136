"""Naming knowledge in game form: which pool word a set of answered questions singles out.

The knowledge stage's text teaches each word's facts in the word → fact direction ("A poodle is
a kind of dog."); a game needs the other one: after "Is it a kind of dog? Yes. Is it a toy? No.
…" the guesser must produce the word. For every pool word this draws histories of answered
questions that leave it the only consistent candidate, asked by a *randomised* questioner (each
question drawn with probability ∝ exp(bits / temperature) among those that split the words still
consistent, answered as the knowledge-base judge answers them), and pairs each history with the
guess ("Is it a poodle?"). Only the guess is a completion: these examples teach naming, not
which question to ask — the questions come from a random process, not the information-gain
teacher, so held-out words can be named this way without their teacher games ever being seen.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from games.kb import DEFAULT_SENSE, KnowledgeBase
from games.kb.candidates import candidate_model
from games.llm.chat import GuesserFormat
from games.rules import VERDICT_FEEDBACK
from games.types import Turn, Verdict


def _bits(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return -(q * np.log2(q) + (1 - q) * np.log2(1 - q))


def naming_histories(
    kb: KnowledgeBase,
    pool: Sequence[str],
    *,
    per_word: int = 4,
    max_turns: int = 20,
    temperature: float = 0.5,
    sense: str = DEFAULT_SENSE,
    seed: int = 0,
    words: Sequence[str] | None = None,
) -> list[tuple[str, list[Turn], str]]:
    """(word, answered history, guess) triples, `per_word` for every pool word the KB can guess
    (or only for `words`, a part of the pool: the candidates are still the whole pool, so a
    history singles its word out among every word a game could be about).

    A history ends when the word is the only consistent candidate or after `max_turns - 1`
    questions (the guess is then the last turn of a full game)."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    outside = sorted(set(words or ()) - set(pool))
    if outside:
        raise ValueError(f"words outside the pool: {', '.join(outside[:5])}")
    model = candidate_model(kb, list(pool), sense)
    wanted = set(model.words if words is None else words)
    yes = model.yes.toarray().astype(bool)  # pool x questions
    named_any = np.asarray(model.named.sum(axis=0)).ravel() > 0
    askable = np.nonzero((model.question_guess < 0) & ~named_any)[0]
    yes_ask = yes[:, askable]
    out = []
    for i, word in enumerate(model.words):
        guess_q = int(model.guess_question[i])
        if guess_q < 0 or word not in wanted:
            continue
        for k in range(per_word):
            rng = random.Random(f"{seed}:{word}:{k}")
            alive = np.ones(len(model.words), dtype=bool)
            asked = np.zeros(len(askable), dtype=bool)
            history: list[Turn] = []
            while alive.sum() > 1 and len(history) < max_turns - 1:
                share = yes_ask[alive].mean(axis=0)
                info = np.where(asked | (share <= 0) | (share >= 1), 0.0, _bits(share))
                if not info.any():
                    break
                weights = np.where(info > 0, np.exp((info - info.max()) / temperature), 0.0)
                j = rng.choices(range(len(askable)), weights=weights.tolist())[0]
                asked[j] = True
                answer = bool(yes_ask[i, j])
                alive &= yes_ask[:, j] == answer
                verdict = Verdict.YES if answer else Verdict.NO
                history.append(
                    Turn(
                        index=len(history),
                        question=model.questions[int(askable[j])],
                        verdict=verdict,
                        feedback=VERDICT_FEEDBACK[verdict],
                    )
                )
            out.append((word, history, model.questions[guess_q]))
    return out


TRAIN_PARTS = ("guess", "word")
GUESS_OPENING = "Is it"  # every guess question starts so ("Is it a poodle?")


def naming_examples(
    kb: KnowledgeBase,
    pool: Sequence[str],
    *,
    chat_format: GuesserFormat = GuesserFormat(),
    per_word: int = 4,
    temperature: float = 0.5,
    sense: str = DEFAULT_SENSE,
    seed: int = 0,
    train: str = "guess",
    words: Sequence[str] | None = None,
) -> list[dict]:
    """Prompt/completion rows (training.sft's format): the history as the guesser's chat, the
    guess as the completion. `train="guess"` trains the whole guess; `train="word"` leaves its
    opening "Is it" untrained (`untrained_prefix`), so the rows teach which word to name without
    also teaching *that* the guesser should guess now — the rows end where one word is left,
    and many of them would otherwise make a policy guess early."""
    if train not in TRAIN_PARTS:
        raise ValueError(f"train must be one of {TRAIN_PARTS}, got {train!r}")
    rows = []
    for word, history, guess in naming_histories(
        kb,
        pool,
        per_word=per_word,
        max_turns=chat_format.max_turns,
        temperature=temperature,
        sense=sense,
        seed=seed,
        words=words,
    ):
        row = {
            "prompt": chat_format.messages(history),
            "completion": [{"role": "assistant", "content": guess}],
            "secret": word,
            "game": -1,
            "turn": len(history),
        }
        if train == "word":
            row["untrained_prefix"] = GUESS_OPENING
        rows.append(row)
    return rows
