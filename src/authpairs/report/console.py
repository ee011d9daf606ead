"""The one console every command prints through."""

from __future__ import annotations

import os
import sys

from rich.console import Console

DEFAULT_FILE_WIDTH = 120
"""Width used for pipes, files and CI logs when ``COLUMNS`` does not say otherwise."""


def console_width() -> int | None:
    """The terminal's width on a TTY (None: rich asks the terminal); else ``COLUMNS`` or 120."""
    if sys.stdout.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 20 else DEFAULT_FILE_WIDTH


def make_console() -> Console:
    """A rich console. Table views printed on it (``console.print(view, crop=False)``) are never
    cropped at this width: they stack their columns or switch to a vertical layout."""
    return Console(width=console_width())
