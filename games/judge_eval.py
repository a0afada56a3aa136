"""How well a judge agrees with reference answers: `python -m games judge-eval`.

The reference is a file with the columns of data/reference-judge/triples.parquet (`secret`,
`question`, `answer`; Parquet or JSONL). Rows whose answer is not yes or no (a tie) are skipped,
and so are secrets the judge cannot play (counted apart). Every question counts: `accuracy` takes
an `unknown` (or any other non-yes/no verdict) as wrong, `accuracy_answered` and `kappa` (Cohen's,
yes/no against the reference) look only at the questions the judge answered yes or no.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from games.agreement import cohen_kappa
from games.judges.base import Judge, JudgeRequest, UnknownSecretError

REFERENCE_TRIPLES = Path(__file__).resolve().parent / "data" / "reference-judge" / "triples.parquet"
ANSWERS = ("yes", "no")
BATCH = 4096


def read_triples(path: str | Path) -> list[dict]:
    """The rows of a triples file (Parquet, or JSON lines) as dicts."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no triples file at {path}")
    if path.suffix in (".jsonl", ".json"):
        return [
            json.loads(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def agreement(verdicts: Sequence[str], answers: Sequence[str]) -> dict:
    """The judge-eval figures of judge verdicts against reference yes/no answers (same order)."""
    n = len(answers)
    answered = [(v, a) for v, a in zip(verdicts, answers) if v in ANSWERS]
    right = sum(v == a for v, a in answered)
    says_yes = sum(v == "yes" for v, _ in answered)
    is_yes = sum(a == "yes" for a in answers)  # a yes the judge did not answer is a yes it missed
    both_yes = sum(v == a == "yes" for v, a in answered)
    kappa = (
        cohen_kappa([v for v, _ in answered], [a for _, a in answered], categories=ANSWERS)
        if answered
        else None
    )
    return {
        "questions": n,
        "coverage": round(len(answered) / n, 4) if n else None,
        "accuracy": round(right / n, 4) if n else None,
        "accuracy_answered": round(right / len(answered), 4) if answered else None,
        "kappa": round(kappa, 4) if kappa is not None else None,
        "yes_f1": round(2 * both_yes / (says_yes + is_yes), 4) if says_yes + is_yes else None,
        "wrong_per_100": round(100 * (len(answered) - right) / n, 2) if n else None,
        "yes_rate": round(says_yes / len(answered), 4) if answered else None,
        "reference_yes_rate": round(sum(a == "yes" for a in answers) / n, 4) if n else None,
    }


def evaluate(judge: Judge, rows: Sequence[dict], *, batch: int = BATCH) -> dict:
    """Ask `judge` every yes/no row of `rows`; the agreement figures plus answers per second."""
    rows = [r for r in rows if str(r.get("answer", "")).lower() in ANSWERS]
    playable, skipped = [], set()
    checked: dict[str, bool] = {}
    for r in rows:
        secret = str(r["secret"])
        if secret not in checked:
            try:
                judge.check_secret(secret)
                checked[secret] = True
            except UnknownSecretError:
                checked[secret] = False
        if checked[secret]:
            playable.append(r)
        else:
            skipped.add(secret)
    requests = [JudgeRequest(str(r["secret"]), str(r["question"])) for r in playable]
    start = time.perf_counter()
    verdicts: list[str] = []
    for i in range(0, len(requests), batch):
        verdicts += [a.verdict.value for a in judge.judge_batch(requests[i : i + batch])]
    seconds = time.perf_counter() - start
    out = agreement(verdicts, [str(r["answer"]).lower() for r in playable])
    out.update(
        {
            "judge": judge.name,
            "secrets": len({str(r["secret"]) for r in playable}),
            "skipped_secrets": len(skipped),
            "skipped_rows": len(rows) - len(playable),
            "answers_per_s": round(len(requests) / seconds, 1)
            if seconds > 0 and requests
            else None,
        }
    )
    return out


def precision_flips(
    pairs: Sequence[tuple[str, str]],
    path: str | Path | None = None,
    *,
    baseline: str = "float32",
    other: str = "bfloat16",
) -> dict:
    """The pretrained judge's answers to (secret, question) pairs read at two precisions: how many
    verdicts (yes / no / unknown, after its calibration and threshold) differ, and the largest
    differences of the cross-encoder's logit and of the answer's P(yes)."""
    import numpy as np

    from games.judges.cross_encoder import PretrainedJudge

    judges = [PretrainedJudge(path, precision=p) for p in (baseline, other)]
    requests = [JudgeRequest(secret, question) for secret, question in pairs]
    answers = [judge.judge_batch(requests) for judge in judges]
    logits = [  # cached by judge_batch: no second forward
        judge.model.logits([(judge.secret_text(s), q[:1000]) for s, q in pairs]) for judge in judges
    ]
    p_yes = [np.array([a.p_yes if a.p_yes is not None else np.nan for a in ans]) for ans in answers]
    flipped = sum(a.verdict != b.verdict for a, b in zip(*answers))
    return {
        "pairs": len(pairs),
        "precisions": [judge.precision for judge in judges],
        "flipped": flipped,
        "flipped_share": round(flipped / len(pairs), 6) if pairs else None,
        "max_abs_logit_delta": round(float(np.max(np.abs(logits[0] - logits[1]), initial=0)), 5),
        "max_abs_p_yes_delta": round(float(np.nanmax(np.abs(p_yes[0] - p_yes[1]), initial=0)), 5),
    }
