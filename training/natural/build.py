"""Build the natural guesser's data file (games/data/natural/natural.npz): a bank of natural
questions, a pool of candidate words with a frequency prior, and P(yes | word, question) for the
pool x bank, computed by the learned judge and stored as uint8 (p * 255, rounded).

    python -m training.natural.build [--out games/data/natural/natural.npz] [--bank 1000]

- The bank: the questions the reference questioners asked (data/reference-judge, the paper's
  games), cleaned and deduplicated: one well-formed question each (the strict rule's syntax),
  asking about one thing (no "or" / "and", not a guess of one plausible secret such as "Is it a
  dog?" — broad categories like "Is it an animal?" stay), not about the word's spelling; two
  phrasings that differ only in filler words ("something", "typically", articles, ...) are one
  question, the most asked phrasing kept. Candidates are ranked by how many secrets they were
  asked about; near-duplicate answer columns (correlation above MAX_CORRELATION with a more asked
  question) are dropped; the `bank` most asked remaining questions ship.
- The pool: wordfreq's most frequent English words that are WordNet nouns (the knowledge base's
  `top_nouns`, built from wordfreq's top 30,000 words and WordNet alone — no benchmark list plays
  a part), reduced to the noun each stands for, plain words only (letters, 3+ characters), in
  frequency order; the prior is the word's Zipf frequency.
- Nothing about any test word beyond what a frequency list contains enters the pool or the bank.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from games import rules
from games.guessers.natural import save_data
from games.types import GameConfig

REFERENCE = Path(__file__).resolve().parents[2] / "games" / "data" / "reference-judge"
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "games" / "data" / "natural" / "natural.npz"
MIN_ASKED = 5  # a question asked about fewer secrets is not a candidate for the bank
CANDIDATES = 2000  # the most asked clean questions whose answer columns are computed
BANK = 1000
MAX_CORRELATION = 0.97
FILLER = {
    "a", "an", "the", "it", "is", "something", "thing", "typically", "usually", "commonly",
    "generally", "often", "normally", "mainly", "primarily", "mostly", "that", "which", "can",
    "be", "kind", "type", "sort", "of", "object", "item",
}  # fmt: skip
SPELLING = re.compile(
    r"\b(?:letter|letters|spell|spelled|spelling|syllables?|rhymes?|word|words|"
    r"secret|noun|vowel|vowels|alphabet)\b"
)
SEVERAL = re.compile(r"\b(?:or|and|nor|either|/)\b|,")
STRICT = GameConfig(win_rule="strict")


def clean_question(text: str) -> str | None:
    """The question as the bank would ask it, or None when it does not belong in the bank."""
    text = rules.clean_text(str(text)).strip()
    if not text or not text[0].isalpha():
        return None
    text = text[0].upper() + text[1:]
    lower = text.lower()
    if rules.syntax_error(text, STRICT) or len(text) > 80:
        return None
    if SEVERAL.search(lower) or SPELLING.search(lower) or "/" in lower:
        return None
    if not lower.startswith(("is ", "does ", "can ", "do ", "are ", "would ", "could ", "has ")):
        return None
    if '"' in text or rules.guessed_word(text) is not None:  # a guess of one plausible secret
        return None
    if _names_a_thing(text):
        return None
    if rules.rule_verdict(text, "zzzz", STRICT) is not None:  # invalid under the strict rules
        return None
    return text


def _names_a_thing(text: str) -> bool:
    """ "Is it chemistry?", "Is it morning?": a guess of one noun without an article."""
    things = rules.guessed_things(text)
    if not things or len(things) != 1 or things[0][1]:
        return False
    kb = rules._kb()
    phrase = things[0][0]
    return (
        kb.lookup(phrase) is not None
        and phrase not in kb.concepts["prop"]
        and not rules._broad_category(phrase)
    )


def question_key(text: str) -> str:
    return " ".join(w for w in rules.words(text) if w not in FILLER)


def candidate_questions(triples: Path, limit: int = CANDIDATES) -> list[tuple[str, int]]:
    """(question, secrets asked about) of the cleaned, deduplicated reference questions, most
    asked first."""
    import pyarrow.parquet as pq

    asked = Counter(pq.read_table(triples, columns=["question"]).column("question").to_pylist())
    by_key: dict[str, tuple[str, int]] = {}
    totals: Counter = Counter()
    for question, count in asked.most_common():
        if count < MIN_ASKED:
            break
        text = clean_question(question)
        if text is None:
            continue
        key = question_key(text)
        if not key:
            continue
        totals[key] += count
        by_key.setdefault(key, (text, count))  # the most asked phrasing of the key
    ranked = sorted(by_key, key=lambda k: (-totals[k], k))
    return [(by_key[k][0], totals[k]) for k in ranked[:limit]]


def pool_words(kb) -> list[tuple[str, int]]:
    """(word, noun id) of the frequency list of nouns, most frequent first, one word a noun."""
    out, seen = [], set()
    for word in kb.top_nouns:
        if not word.isalpha() or len(word) < 3 or not word.islower():
            continue
        noun = kb.lookup(word)
        if noun is None or noun in seen or kb.nouns[noun] != word:
            continue
        seen.add(noun)
        out.append((kb.nouns[noun], noun))
    return out


def answer_matrix(model, nouns: list[int], questions: list[str], log=print) -> np.ndarray:
    """P(yes) of every (noun, question), float32, nouns x questions, by the learned judge."""
    out = np.zeros((len(nouns), len(questions)), dtype=np.float32)
    start = time.perf_counter()
    for j, question in enumerate(questions):
        out[:, j] = model.p_yes([(n, question) for n in nouns])
        if j % 250 == 0:
            log(f"  {j}/{len(questions)} questions, {time.perf_counter() - start:.0f} s")
    return out


def select_bank(p: np.ndarray, size: int) -> list[int]:
    """Columns in order, skipping a column too correlated with one kept before it."""
    z = p - p.mean(axis=0)
    norms = np.linalg.norm(z, axis=0)
    z = z / np.where(norms > 0, norms, 1.0)
    kept: list[int] = []
    for j in range(p.shape[1]):
        if norms[j] < 1e-6:
            continue  # the same answer for every word: it tells nothing
        if kept and float(np.max(z[:, kept].T @ z[:, j])) > MAX_CORRELATION:
            continue
        kept.append(j)
        if len(kept) == size:
            break
    return kept


def build(out: Path, bank: int = BANK, candidates: int = CANDIDATES, log=print) -> dict:
    from games.judges.learned import load_model, weights_meta

    start = time.perf_counter()
    model = load_model()
    kb = model.featurizer.kb
    questions = candidate_questions(REFERENCE / "triples.parquet", candidates)
    pool = pool_words(kb)
    log(f"{len(questions)} candidate questions, {len(pool)} pool words")
    p = answer_matrix(model, [n for _, n in pool], [q for q, _ in questions], log)
    columns = select_bank(p, bank)
    p = p[:, columns]
    words = [w for w, _ in pool]
    nouns = [n for _, n in pool]
    zipf = kb.noun_zipf[nouns].astype(np.float32)
    tagged = np.array([int(kb._noun_counts[n].sum()) for n in nouns], dtype=np.int32)
    meta = {
        "format": 1,
        "answer_model": "learned",
        "answer_model_meta": {
            k: weights_meta().get(k) for k in ("format", "threshold", "rows", "held_out")
        },
        "questions_from": "games/data/reference-judge/triples.parquet",
        "pool_from": "games.kb top_nouns (wordfreq's top 30,000 English words that are WordNet "
        "nouns), one word per noun, letters only, 3+ characters",
        "min_asked": MIN_ASKED,
        "candidates": len(questions),
        "max_correlation": MAX_CORRELATION,
        "bank": len(columns),
        "pool": len(words),
        "quantisation": "uint8 = round(255 * p_yes)",
        "seconds": round(time.perf_counter() - start, 1),
        "command": "python -m training.natural.build",
    }
    save_data(
        out,
        questions=[questions[j][0] for j in columns],
        asked=np.array([questions[j][1] for j in columns]),
        words=words,
        zipf=zipf,
        tagged=tagged,  # WordNet's tagged-corpus count of the word's noun senses
        p_yes=p,
        meta=meta,
    )
    meta["bytes"] = out.stat().st_size
    log(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.natural.build", description=__doc__)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--bank", type=int, default=BANK)
    parser.add_argument("--candidates", type=int, default=CANDIDATES)
    args = parser.parse_args(argv)
    build(Path(args.out), bank=args.bank, candidates=args.candidates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
