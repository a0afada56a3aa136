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
from training.sft.config import SFT_PRESETS, SFTJobConfig


def main(argv: list[str] | None = None) -> int:
    from training.sft.trainer import run

    argv = list(sys.argv[1:] if argv is None else argv)
    preset = {}
    for i, arg in enumerate(argv):
        name = arg.split("=", 1)[1] if arg.startswith("--preset=") else None
        if arg == "--preset" and i + 1 < len(argv):
            name = argv[i + 1]
            del argv[i : i + 2]
        elif name is not None:
            del argv[i]
        if name is not None:
            if name not in SFT_PRESETS:
                print(
                    f"error: no preset {name!r} (presets: {', '.join(SFT_PRESETS)})",
                    file=sys.stderr,
                )
                return 2
            preset = SFT_PRESETS[name]
            break
    return main_for(
        SFTJobConfig,
        run,
        "python -m training.sft",
        __doc__.split("\n")[0],
        argv,
        defaults=preset,
    )


if __name__ == "__main__":
    sys.exit(main())
