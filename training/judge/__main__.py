"""Train the learned judge from the command line (the same run() the jobs use):

    python -m training.judge --out games/data/judges            # the shipped reference answers
    python -m training.judge --out DIR --dataset file --data-path answers.parquet

The weights land in DIR/learned_judge.npz; a games registry spec `learned:DIR/learned_judge.npz`
plays with them. About three minutes on 2 CPU cores for the reference answers.
"""

from __future__ import annotations

import sys

from training.common.cli import main_for
from training.judge.config import LearnedJudgeJobConfig


def main(argv: list[str] | None = None) -> int:
    from training.judge.trainer import run

    return main_for(
        LearnedJudgeJobConfig, run, "python -m training.judge", __doc__.split("\n")[0], argv
    )


if __name__ == "__main__":
    sys.exit(main())
