"""Multi-turn DPO from the command line (the same run() the jobs use):

    python -m training.dpo --base var/runs/sft/checkpoint-40 --out var/runs/dpo \
        --word-list dbrl/paper_rl --reward infogain --candidates 4 --learning-rate 1e-4

Names resolve as for `python -m training.sft`. On several GPUs:
`accelerate launch -m training.dpo ...`.
"""

from __future__ import annotations

import sys

from training.common.cli import main_for
from training.dpo.config import DPOJobConfig


def main(argv: list[str] | None = None) -> int:
    from training.dpo.trainer import run

    return main_for(DPOJobConfig, run, "python -m training.dpo", __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
