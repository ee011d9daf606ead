#!/usr/bin/env bash
# Set up, then run the test suite. With no arguments: the fast tests, on two pytest-xdist workers.
# `bash scripts/test.sh slow` runs the slow tests as .ci/run does: on two workers, then the ones
# marked all_cpus (llama.cpp on two threads, many times slower beside other work) one at a time;
# pytest arguments may follow. Any other arguments go to pytest as they are (one process, e.g.
# `bash scripts/test.sh -m slow tests/runs`). Pytest's "no tests collected" (exit 5) is not a
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

run_pytest() {
    local status=0
    .venv/bin/python -m pytest -q "$@" || status=$?
    if [ "$status" -eq 5 ]; then
        echo "pytest: no tests selected"
        status=0
    fi
    return "$status"
}

if [ "$#" -eq 0 ]; then
    run_pytest -m "not slow" -n 2 --dist worksteal
elif [ "$1" = "slow" ]; then
    shift
    status=0
    run_pytest -m "slow and not all_cpus" -n 2 --dist worksteal "$@" || status=$?
    run_pytest -m "slow and all_cpus" "$@" || status=$?
    exit "$status"
else
    run_pytest "$@"
fi
