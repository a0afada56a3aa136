"""Turn-level SFT from the command line (the same run() the jobs use):

    python -m training.sft --base var/models/tiny --out var/runs/sft --word-list dbrl/train_sft \
        --learning-rate 1e-4 --global-batch-size 64 --per-device-batch-size 16
    python -m training.sft --preset smol-20q-sft --out var/runs/smol --max-turn-examples 512

Names resolve without a database: --base is a model folder or hub id, --teacher/--judge are
games registry specs (infogain, kb, hf:PATH), word lists are shipped lists or files, and
--source games reads --games-file (a games export's trajectories.jsonl); --source reference
trains on the paper's SFT turns (games/data/reference-sft). --preset NAME starts from a named
setting (training.sft.config.SFT_PRESETS); the other flags change it. On several GPUs:
`accelerate launch -m training.sft ...`.
"""

from __future__ import annotations

import sys

from training.common.cli import main_for
from training.sft.config import SFTJobConfig


def main(argv: list[str] | None = None) -> int:
    from training.sft.trainer import run

    return main_for(SFTJobConfig, run, "python -m training.sft", __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
