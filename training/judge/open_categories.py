"""The knowledge base's open categories: `python -m training.judge.open_categories` writes
games/kb/data/open_categories.json.

The knowledge-base judge answers No to "Is it a kind of X?" when X is not among the secret's
WordNet hypernyms: WordNet's taxonomy is complete for most categories, but not for the ones people
file things under by role or use (a dog is not filed under "pet", a hammer not under "tool"). A
category is open when, on the reference judge's answers about *training* secrets
(training.judge.data.split_of: validation and test secrets are never read), the knowledge base's
No to it disagrees with the reference more often than the reference disagrees with itself
(1 - 0.918) over at least MIN_QUESTIONS questions. For an open category the judge answers
`unknown` instead of No, and the rules do not answer a guess of it as "another thing".
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from games.judge_eval import REFERENCE_TRIPLES, read_triples
from games.kb.gaps import OPEN_CATEGORIES_PATH
from training.judge.data import split_of

REFERENCE_SELF_AGREEMENT = 0.918  # data/reference-judge/SOURCES.md
MIN_QUESTIONS = 20
VAL_PERCENT = TEST_PERCENT = 10  # the judges' held-out split (training.judge.config defaults)


def closed_no_counts(rows) -> dict[str, list[int]]:
    """isa concept -> [reference no, reference yes] where the closed-world KB judge said No
    (its `isa` answers only), over the rows of training secrets."""
    from games.judges.kb import KBJudge

    judge = KBJudge(vouch_all=True)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["answer"] not in ("yes", "no"):
            continue
        if split_of(r["secret"], VAL_PERCENT, TEST_PERCENT) != "train":
            continue
        answer = judge.judge(r["secret"], r["question"])
        if answer.verdict.value == "no" and answer.raw.startswith("isa:"):
            counts[answer.raw[4:]][r["answer"] == "yes"] += 1
    return counts


def open_categories(counts: dict[str, list[int]]) -> dict[str, dict]:
    limit = 1.0 - REFERENCE_SELF_AGREEMENT
    return {
        concept: {"no": no, "yes": yes, "disagreement": round(yes / (no + yes), 4)}
        for concept, (no, yes) in sorted(counts.items())
        if no + yes >= MIN_QUESTIONS and yes / (no + yes) > limit
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.judge.open_categories", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=OPEN_CATEGORIES_PATH)
    args = parser.parse_args(argv)
    counts = closed_no_counts(read_triples(REFERENCE_TRIPLES))
    found = open_categories(counts)
    payload = {
        "source": "games/data/reference-judge/triples.parquet, training secrets only "
        f"(split_of with val {VAL_PERCENT}%, test {TEST_PERCENT}%)",
        "rule": f"the KB's isa No disagrees with the reference in more than "
        f"{1 - REFERENCE_SELF_AGREEMENT:.3f} of at least {MIN_QUESTIONS} questions",
        "categories": found,
    }
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    no = sum(c[0] for c in counts.values())
    yes = sum(c[1] for c in counts.values())
    print(
        json.dumps(
            {
                "open_categories": len(found),
                "isa_no_answers": no + yes,
                "of_which_reference_yes": yes,
                "opened": sum(c["no"] + c["yes"] for c in found.values()),
                "opened_reference_yes": sum(c["yes"] for c in found.values()),
                "out": str(args.out),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
