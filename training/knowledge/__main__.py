"""The knowledge stage from the command line (the same run() the jobs use):

    python -m training.knowledge --base var/models/tiny --out var/runs/knowledge \
        --word-list dbrl/solved

--base is a model folder or hub id; --word-list a shipped list or a file (one word per line).
"""

from __future__ import annotations

import sys

from training.common.cli import main_for
from training.knowledge.config import KnowledgeJobConfig


def main(argv: list[str] | None = None) -> int:
    from training.knowledge.trainer import run

    return main_for(
        KnowledgeJobConfig, run, "python -m training.knowledge", __doc__.split("\n")[0], argv
    )


if __name__ == "__main__":
    sys.exit(main())
