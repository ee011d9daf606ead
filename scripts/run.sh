#!/usr/bin/env bash
# The main job on the embedded defaults: set up, then review the language dev split with the
# embedded SmolLM2 server (schema interface), record to runs/authpairs.sqlite, enforce effects
# in a local sandbox, print the scores, and write the HTML report (runs/report/html/report.html,
# path printed at the end). Extra arguments go to `authpairs run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/authpairs run --config configs/local-smollm2.yaml --by family --out runs/report \
    --report runs/report/html "$@"
