"""Expensive test setup made once per test session, also when pytest-xdist runs the session on
several workers (the slow tier runs on two).

A session-scoped fixture runs once per worker; :func:`once_per_session` makes the first worker
that asks compute the value under a lock, in a folder of the session's shared temporary folder,
and store it (pickled); every other worker waits for the lock and reads it. pytest-xdist's
``--dist loadgroup`` would instead send the tests that share a fixture to one worker, but it
groups nothing under pytest 9.2 (pytest-dev/pytest-xdist#1386).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def once_per_session(factory: pytest.TempPathFactory, name: str,
                     compute: Callable[[Path], T]) -> T:
    """``compute(folder)`` run once per session under ``name`` (a fresh folder it may write to);
    its result is pickled for the other workers. A failing ``compute`` stores nothing, so each
    worker that asks fails the same way."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' folders share this parent
    stored = root / f"{name}.pickle"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stored.is_file():
            value: T = pickle.loads(stored.read_bytes())
            return value
        value = compute(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root)))
        stored.write_bytes(pickle.dumps(value))
        return value
