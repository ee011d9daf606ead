"""How a run shows its progress: a small protocol, a rich bar by default, silence in the API.

The orchestrator only calls :class:`ProgressDisplay` methods; a notebook, a CI log or a GUI can
pass its own implementation to :func:`authpairs.runs.api.run_async`.
"""

from __future__ import annotations

from typing import Protocol

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class ProgressDisplay(Protocol):
    """What a run reports while it works (each method does nothing unless a display overrides
    it)."""

    def start(self, run_id: str, total: int, done: int) -> None:
        """The run begins: ``done`` of ``total`` cases already have records."""
        return None

    def advance(self) -> None:
        """One more case is finished (recorded, failed, or taken by another process)."""
        return None

    def note(self, message: str | None) -> None:
        """A transient status (e.g. why a request is being retried); None clears it."""
        return None

    def close(self) -> None:
        """The run is over."""
        return None


class SilentProgress(ProgressDisplay):
    """Shows nothing (the Python API's default): every method is the protocol's own."""


class RichProgress:
    """A rich progress bar with the run id, counts, elapsed time and the latest retry cause."""

    def __init__(self) -> None:
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), transient=False)
        self._task: TaskID | None = None
        self._title = ""

    def start(self, run_id: str, total: int, done: int) -> None:
        """Show the bar."""
        self._title = f"[bold]{escape(run_id)}[/]"
        self._bar.start()
        self._task = self._bar.add_task(self._title, total=total, completed=done)

    def advance(self) -> None:
        """Move the bar by one case."""
        if self._task is not None:
            self._bar.advance(self._task)

    def note(self, message: str | None) -> None:
        """Show ``message`` after the run id (user text is never read as markup)."""
        if self._task is not None:
            extra = f" [yellow]{escape(message)}[/]" if message else ""
            self._bar.update(self._task, description=self._title + extra)

    def close(self) -> None:
        """Leave the final bar on screen."""
        self._bar.stop()
