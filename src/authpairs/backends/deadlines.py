"""Deadlines for requests in flight, kept by one watcher task per backend.

``asyncio.timeout`` schedules a timer for every request and cancels it when the reply comes: at
hundreds of requests a second that is a measurable share of a run's own work. A
:class:`DeadlineWatch` instead notes when each request must end and wakes up every
:attr:`~DeadlineWatch.tick` seconds (an eighth of the deadline, at most one second) to cancel
the requests that are past it. A request therefore ends at most one tick after its deadline.

Cancellation is counted as ``asyncio.timeout`` counts it: a request cancelled by the watch
raises :class:`DeadlineExceeded`, and a task that was also cancelled from elsewhere (the run
stopping, Ctrl-C) still sees its ``CancelledError``.
"""

from __future__ import annotations

import asyncio

__all__ = ["DeadlineExceeded", "DeadlineWatch"]


class DeadlineExceeded(TimeoutError):
    """A request was still running when its deadline came."""


class _Watched:
    """One request in flight: its task, when it must end, and the task's cancel count then."""

    __slots__ = ("cancelling", "due", "expired", "settled", "task")

    def __init__(self, task: asyncio.Task[object], due: float) -> None:
        self.task = task
        self.due = due
        self.cancelling = task.cancelling()
        self.expired = False  # the watch cancelled the task
        self.settled = False  # and took that cancellation back

    def settle(self) -> bool:
        """Take back the watch's cancellation; True when nothing else cancelled the task."""
        self.settled = True
        return self.task.uncancel() <= self.cancelling


class DeadlineWatch:
    """Cancels the requests that outlive ``seconds`` (see the module docstring).

    Use it around the awaited part of one request::

        watched = watch.start()
        try:
            reply = await send()
        except asyncio.CancelledError:
            watch.raise_if_expired(watched)  # DeadlineExceeded when the watch cancelled it
            raise
        finally:
            watch.stop(watched)
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: How often the watcher looks: a request ends at most this late.
        self.tick = min(1.0, max(0.01, seconds / 8))
        self._in_flight: dict[_Watched, None] = {}  # insertion order: the oldest due first
        self._watcher: asyncio.Task[None] | None = None

    def start(self) -> _Watched:
        """Start the deadline of a request made by the current task."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline needs a running task")
        loop = task.get_loop()
        watched = _Watched(task, loop.time() + self.seconds)
        self._in_flight[watched] = None
        watcher = self._watcher
        if watcher is None or watcher.done() or watcher.get_loop() is not loop:
            self._watcher = loop.create_task(self._watch())
        return watched

    def stop(self, watched: _Watched) -> None:
        """The request has ended (whichever way)."""
        self._in_flight.pop(watched, None)
        if watched.expired and not watched.settled:  # it ended just as the deadline came
            watched.settle()

    def exceeded(self) -> DeadlineExceeded:
        """The error of a request that outlived the deadline."""
        return DeadlineExceeded(f"no complete reply within the {self.seconds:g} s deadline")

    def raise_if_expired(self, watched: _Watched) -> None:
        """Called with a ``CancelledError`` on hand: raise :class:`DeadlineExceeded` instead
        when the watch cancelled the request and nothing else cancelled its task."""
        if watched.expired and watched.settle():
            raise self.exceeded()

    async def _watch(self) -> None:
        """Cancel the requests past their deadline, every tick, while any is in flight."""
        loop = asyncio.get_running_loop()
        while self._in_flight:
            await asyncio.sleep(self.tick)
            now = loop.time()
            for watched in self._in_flight:
                if watched.due > now:
                    break  # started later: due later
                if not watched.expired:
                    watched.expired = True
                    watched.task.cancel()

    def close(self) -> None:
        """Stop the watcher task (the backend is closing)."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
