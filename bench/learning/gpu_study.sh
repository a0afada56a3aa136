#!/usr/bin/env bash
# The pretrained-base learning study on one GPU (issue 32), as one command for the device tool:
#   bash bench/learning/gpu_study.sh [WORK]
# Runs `python -m bench.learning --base smollm2-135m-instruct --device cuda` (bench.learning.smol
# CUDA: SFT on every reference row, 3 seeds x StarPO and CIA, paper_test x 8) under a 560 s limit
# so a 10-minute call returns; every stage is stored in WORK, so running it again resumes where
# the last call stopped. Prints the results JSON when the study is complete (and writes
# bench/results/learning-smollm2-cuda.json), else the stages done so far. Needs the project's
# Python packages and the built base (var/base-models/smollm2-135m-instruct, `make setup`).
set -euo pipefail
WORK="${1:-var/bench-smol-cuda}"
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
mkdir -p "$WORK"
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device')"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
set +e
timeout --signal=INT 560 "$PY" -m bench.learning --base smollm2-135m-instruct --device cuda \
    --work "$WORK" --resume 2>"$WORK/stderr.log" | tee "$WORK/result.json"
code=${PIPESTATUS[0]}
set -e
if [ "$code" -eq 0 ]; then
    if [ -n "${OUT:-}" ]; then cp "$WORK/result.json" "$OUT/learning-smollm2-cuda.json"; fi
else
    echo "stopped (exit $code) after these stages; run again to resume:" >&2
    ls "$WORK"/stage-*.json >&2 || true
    tail -20 "$WORK/stderr.log" >&2
fi
exit "$code"
