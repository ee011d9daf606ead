"""What an executor may use: the read-write database, the sandbox root and the case scope."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authpairs.errors import EnforcementError


class ExecutionError(EnforcementError):
    """The sandbox refused the operation (a business rule, not a containment problem)."""


@dataclass(frozen=True)
class ExecContext:
    """Executor-side handles for one case."""

    db: sqlite3.Connection
    root: Path
    scope: str


ExecuteFn = Callable[[Any, ExecContext], dict[str, Any]]
"""An executor: ``(params, context) -> description of what was done``."""
