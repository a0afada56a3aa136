"""Write the everyday word list (games/data/wordlists/everyday/everyday100.txt): the 100 most
frequent concrete nouns of a frequency list, by a fixed rule, for measuring guessers on the words
people think of (issue 33).

    python -m training.natural.everyday [--n 100] [--out PATH]

The rule: wordfreq's frequent English words that are WordNet nouns (the knowledge base's
`top_nouns`, wordfreq order), plain lower-case words of 3+ letters standing for their own noun
(not a plural of one listed before), whose first WordNet sense is an artifact, an animal, a food
or a plant (lexicographer files noun.artifact / animal / food / plant), seen tagged as a noun in
WordNet's corpus, and used as a noun often enough for their frequency (tagged noun count at least
10 ** (Zipf frequency - 3.6): drops "well", "young", "round", whose frequency comes from other
parts of speech). No benchmark list plays a part.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from games import rules

OUT = Path(__file__).resolve().parents[2] / "games" / "data" / "wordlists" / "everyday"
CONCRETE = ("noun.artifact", "noun.animal", "noun.food", "noun.plant")
NOUN_USE = 3.6


def everyday_words(
    kb, n: int = 100, *, skip: int = 0, exclude: frozenset[str] = frozenset()
) -> list[str]:
    """The first `n` words of the rule after its first `skip`, leaving out `exclude` (and,
    with `skip`, a word whose plural is listed before it: "egg" after "eggs")."""
    out: list[str] = []
    seen: set[int] = set()
    rank = 0
    for word in kb.top_nouns:
        if not word.isalpha() or len(word) < 3 or not word.islower():
            continue
        noun = kb.lookup(word)
        if noun is None or kb.nouns[noun] != word or noun in seen:
            continue
        seen.add(noun)
        if any(kb.lookup(s) in seen for s in rules.singular_forms(word) if kb.lookup(s) != noun):
            continue  # "eggs" after "egg"
        first = kb.senses(noun, "first")[0]
        counts = kb._noun_counts[noun]
        if kb.synset_lexnames[first] not in CONCRETE or counts[0] < 1:
            continue
        if counts.sum() < 10 ** (float(kb.noun_zipf[noun]) - NOUN_USE):
            continue
        rank += 1
        if rank <= skip or word in exclude:
            continue
        if skip and kb.lookup(rules.plural(word)) in seen - {noun}:
            continue
        out.append(word)
        if len(out) == n:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    from games.kb import load_kb
    from games.wordlists import read_words

    parser = argparse.ArgumentParser(prog="python -m training.natural.everyday")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--skip", type=int, default=0, help="leave out the rule's first SKIP")
    parser.add_argument("--exclude", action="append", default=[], help="a word list to leave out")
    parser.add_argument("--out", default=str(OUT / "everyday100.txt"))
    args = parser.parse_args(argv)
    exclude = frozenset(w for name in args.exclude for w in read_words(name))
    words = everyday_words(load_kb(), args.n, skip=args.skip, exclude=exclude)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    print(f"{len(words)} words -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
