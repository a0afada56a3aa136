"""One rank of a multi-process job, started by the worker under torchrun
(webapp.jobs.processes.run_in_processes):

    python -m torch.distributed.run --standalone --nproc_per_node N -m workers.rank \
        --job ID --claim C --folder DIR

Sets up Django (the worker's settings and database, inherited through the environment) and runs
the job's runner as this rank (webapp.jobs.processes.rank_main).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.rank", description=__doc__)
    parser.add_argument("--job", type=int, required=True)
    parser.add_argument("--claim", type=int, required=True)
    parser.add_argument("--folder", type=Path, required=True)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.local")
    import django

    django.setup()
    from webapp.jobs.processes import rank_main

    return rank_main(args.job, args.claim, args.folder)


if __name__ == "__main__":
    sys.exit(main())
