"""Multi-turn GRPO from the command line (the same run() the jobs use):

    python -m training.grpo --base var/models/sft --out var/runs/grpo --word-list dbrl/train_rl \
        --advantage turn --steps 100
    python -m training.grpo --preset cpu --base var/models/tiny --out var/runs/grpo-cpu

--base is a model folder (or hub id), --judge a games registry spec (kb, hf:PATH), --word-list a
shipped list or a file. The defaults are the paper's (240 secrets × 16 games a step, validation
on dbrl/paper_val); --preset cpu starts from a CPU-sized setting (training.grpo.config.
GRPO_PRESETS), the other flags change it. Running again with the same --out resumes from its last
checkpoint.
"""

from __future__ import annotations

import sys

from training.common.cli import main_for
from training.grpo.config import GRPOConfig


def main(argv: list[str] | None = None) -> int:
    from training.grpo.trainer import run

    return main_for(GRPOConfig, run, "python -m training.grpo", __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
