"""What an executor may use: the read-write database, the sandbox root and the case scope."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path


class ExecutionError(RuntimeError):
    """The sandbox refused the operation (a business rule, not a containment problem)."""


@dataclass(frozen=True)
class ExecContext:
    """Executor-side handles for one case."""

    db: sqlite3.Connection
    root: Path
    scope: str
