"""SFT of an LLM judge (the answerer) on a reference judge's verdicts.

Each example is the LLM judge's own chat (games.llm.chat.judge_messages: the secret and one
question) with the reference verdict as `<answer>Yes</answer>`, `No` or `Finished` (a question
naming the secret) - what games.judges.llm.LLMJudge parses. Questions come from the games' turns
the judge answered, plus `cross_questions` questions of other games asked about each secret and
answered by the reference judge (more, and more varied, no-answers per secret).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

from games.llm.chat import judge_messages
from games.types import Trajectory, Verdict
from training.common.config import GameDataConfig, check_between
from training.common.data import RunInputs, gather_games, select_games, split_run_inputs
from training.common.trainer import store_rows, stored_rows
from training.reporting import Reporter

EXAMPLES_FILE = "judge_examples.jsonl"
ANSWERS = {Verdict.YES: "Yes", Verdict.NO: "No", Verdict.FINISHED: "Finished"}


@dataclass(frozen=True)
class JudgeSFTJobConfig(GameDataConfig):
    """The reference judge (`judge`) labels the questions of the selected games."""

    selection: str = field(
        default="all",
        metadata={
            "help": "games whose questions are labelled: fastest, won or all",
            "choices": ("fastest", "won", "all"),
        },
    )
    cross_questions: int = field(
        default=4,
        metadata={
            "min": 0,
            "max": 256,
            "help": "questions of other games asked about each secret, "
            "answered by the reference judge",
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_between(self, "cross_questions")


def judge_example(secret: str, question: str, verdict: Verdict) -> dict:
    return {
        "prompt": judge_messages(secret, question),
        "completion": [{"role": "assistant", "content": f"<answer>{ANSWERS[verdict]}</answer>"}],
        "secret": secret,
        "question": question,
        "verdict": verdict.value,
    }


def judge_examples(
    games: Sequence[Trajectory], judge, *, cross_questions: int, seed: int
) -> list[dict]:
    """Examples from every yes/no/finished turn, plus cross questions labelled by `judge`."""
    rows, seen = [], set()
    for traj in games:
        for turn in traj.turns:
            if turn.verdict in ANSWERS and (traj.secret, turn.question) not in seen:
                seen.add((traj.secret, turn.question))
                rows.append(judge_example(traj.secret, turn.question, turn.verdict))
    pool = sorted({q for s, q in seen})
    secrets = sorted({t.secret for t in games})
    requests = []
    for secret in secrets:
        rng = random.Random(f"{seed}:{secret}")
        asked = [
            q
            for q in rng.sample(pool, min(len(pool), 3 * cross_questions))
            if (secret, q) not in seen
        ]
        requests += [(secret, q) for q in asked[:cross_questions]]
    answers = [judge.judge(secret, question).verdict for secret, question in requests]
    rows += [
        judge_example(s, q, v)
        for (s, q), v in zip(requests, answers)
        if v in (Verdict.YES, Verdict.NO)
    ]
    return rows


def run(
    config: JudgeSFTJobConfig, reporter: Reporter, **inputs: Unpack[RunInputs]
) -> dict[str, Any]:
    """`inputs` as in training.sft.trainer.run; the `judge` source is the reference judge."""
    from games.registry import build_judge
    from training.sft.trainer import train_sft

    model_path, adapter_path, sources = split_run_inputs(config, inputs)
    rows = stored_rows(reporter, EXAMPLES_FILE)
    if rows is None:
        judge = sources.get("judge") or build_judge(config.judge)
        games = gather_games(config, reporter, **{**sources, "judge": judge})
        rows = judge_examples(
            select_games(games, config.selection),
            judge,
            cross_questions=config.cross_questions,
            seed=config.seed,
        )
        if not rows:
            raise ValueError("no question to learn from")
        store_rows(
            reporter, EXAMPLES_FILE, rows, artifact="judge-examples", meta={"examples": len(rows)}
        )
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("yes", "no", "finished")}
    reporter.log(f"{len(rows)} judge examples: {counts}")
    result = train_sft(
        config,
        reporter,
        rows,
        kind="judge_sft",
        model_path=model_path,
        adapter_path=adapter_path,
        resolved={"verdicts": counts},
    )
    return {**result, "verdicts": counts}


def main(argv: list[str] | None = None) -> int:
    """`python -m training.judge.llm --base PATH --out DIR ...` (flags as for training.sft)."""
    from training.common.cli import main_for

    return main_for(
        JudgeSFTJobConfig, run, "python -m training.judge.llm", __doc__.split("\n")[0], argv
    )


if __name__ == "__main__":
    import sys

    sys.exit(main())
