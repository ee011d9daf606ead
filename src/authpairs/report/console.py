"""The one console every command prints through."""

from __future__ import annotations

import sys

from rich.console import Console


def make_console() -> Console:
    """A rich console: the terminal's width on a TTY, 120 columns in files and CI logs."""
    return Console(width=None if sys.stdout.isatty() else 120)
