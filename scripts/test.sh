#!/usr/bin/env bash
# Set up, then run the test suite (fast tests by default, on two pytest-xdist workers; pass pytest
# arguments to change that, e.g. `bash scripts/test.sh -m slow`, which runs in one process).
# Pytest's "no tests collected" (exit 5) is not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "$#" -eq 0 ]; then
    set -- -m "not slow" -n 2 --dist worksteal
fi
status=0
.venv/bin/python -m pytest -q "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest: no tests selected"
    status=0
fi
exit "$status"
