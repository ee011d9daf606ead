"""The deadline rule: an attempt is abandoned when no progress arrives for ``deadline_s``.

One clock per attempt, :class:`AttemptClock`, is the only deadline. It expires when ``deadline_s``
seconds pass without progress; what counts as progress is the backend's business:

* a reviewer that answers in one piece (a non-streaming HTTP request, a guardrail) makes progress
  only by answering, so the whole answer must arrive within ``deadline_s`` -- a plain deadline;
* a streaming backend (the embedded server, or ``stream: true`` on an OpenAI-compatible one)
  reports each streamed event (:meth:`AttemptClock.progress`): a generation that keeps
  producing tokens is never abandoned because the machine is slow, and one that stops producing
  is abandoned ``deadline_s`` after its last token;
* waiting for a free slot of the client's own per-endpoint cap (:func:`paused`) does not count:
  the requests holding the slots are bounded by their own clocks.

The run's case runner opens the clock around each attempt; a backend used on its own opens one
per request, and a backend inside a run reports to the run's clock (:data:`CURRENT`)
instead of starting a second one. The clock lives in a context variable, so it reaches the backend
through any reviewer without being passed along.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar, Token
from types import TracebackType

#: The clock of the attempt running in this context, if any (``CURRENT.get()``).
CURRENT: ContextVar[AttemptClock | None] = ContextVar("authpairs_attempt_clock", default=None)


class AttemptClock:
    """``async with AttemptClock(deadline_s):`` -- raises :class:`TimeoutError` when
    ``deadline_s`` seconds pass without :meth:`progress` (None: never)."""

    def __init__(self, deadline_s: float | None) -> None:
        self.deadline_s = deadline_s
        self.events = 0
        """How many progress events arrived (0: the reviewer answered in one piece or not)."""
        self._timeout: asyncio.Timeout | None = None
        self._token: Token[AttemptClock | None] | None = None
        self._paused = 0

    async def __aenter__(self) -> AttemptClock:
        self._timeout = asyncio.timeout(self.deadline_s)
        await self._timeout.__aenter__()
        self._token = CURRENT.set(self)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        assert self._timeout is not None and self._token is not None
        CURRENT.reset(self._token)
        await self._timeout.__aexit__(exc_type, exc, traceback)

    def _reschedule(self, delay: float | None) -> None:
        timeout = self._timeout
        if timeout is None or self.deadline_s is None or timeout.expired():
            return  # not started, no deadline, or already expired (the cancel is on its way)
        timeout.reschedule(None if delay is None else asyncio.get_running_loop().time() + delay)

    def progress(self) -> None:
        """Something arrived: the attempt has ``deadline_s`` from now for the next thing."""
        self.events += 1
        if not self._paused:
            self._reschedule(self.deadline_s)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the clock while waiting for something bounded elsewhere; restart it after."""
        self._paused += 1
        self._reschedule(None)
        try:
            yield
        finally:
            self._paused -= 1
            if not self._paused:
                self._reschedule(self.deadline_s)

    def timeout_message(self) -> str:
        """The recorded cause (a transport error) when this clock expired: a streamed reply
        that stopped progressing, or an answer that did not arrive within the deadline."""
        deadline = self.deadline_s if self.deadline_s is not None else 0.0
        if self.events:
            return (f"timeout: the streamed reply stalled: no progress for {deadline:g} s "
                    f"(the deadline) after {self.events} event{'s' if self.events != 1 else ''}")
        return f"timeout: no complete reply within the {deadline:g} s deadline"


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Stop the running attempt's clock for the duration (see :meth:`AttemptClock.paused`)."""
    clock = CURRENT.get()
    with contextlib.nullcontext() if clock is None else clock.paused():
        yield
