"""How a call that fails in transport is retried and logged: the attempt numbers, the
exponential backoff and how long a server's ``Retry-After`` may make it wait
(:class:`RetryPolicy`), and the failures logged without flooding the terminal
(:class:`FailureLog`).

Both retry loops use them: the case runner's infrastructure attempts
(:class:`~authpairs.runs.case_runner.CaseRunner`) and the agent model's turns
(:class:`~authpairs.agent.runner.AgentLoop`), so they wait and log alike. Each loop keeps its own
log line and what it records of an attempt.

A server that fails every request would otherwise print one warning per case per attempt.
:class:`FailureLog` logs the first failure of each cause (endpoint and what failed) at once, with
the case and how long until the retry, then only counts: at most every
:data:`SUMMARY_INTERVAL_S` seconds one line says how many more attempts failed since, per cause.
:meth:`FailureLog.flush` logs what is still counted when the run ends.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass

from authpairs import main_job

#: A server's Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """Up to ``retries`` retries after the first attempt, waiting ``backoff_s`` seconds after the
    first failure and twice as long after each further one."""

    retries: int = main_job.INFRA_RETRIES
    backoff_s: float = 0.5

    @property
    def attempts(self) -> range:
        """The attempt numbers, 1 to ``retries + 1``."""
        return range(1, self.retries + 2)

    def retried(self, number: int) -> bool:
        """Whether failed attempt ``number`` is followed by another attempt."""
        return number <= self.retries

    def backoff(self, number: int) -> float:
        """Seconds of backoff after failed attempt ``number``: ``backoff_s * 2 ** (number - 1)``."""
        return self.backoff_s * 2.0 ** (number - 1)

    def delay(self, number: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt ``number``: the backoff, or the server's
        ``Retry-After`` (``retry_after`` seconds, None if it sent none) where longer, up to
        :data:`MAX_RETRY_AFTER_S`."""
        delay = self.backoff(number)
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER_S))
        return delay


#: Seconds between two summary lines.
SUMMARY_INTERVAL_S = 10.0


class FailureLog:
    """Logs transport failures to ``logger``: each cause's first at once, later ones counted and
    summarised at most every :data:`SUMMARY_INTERVAL_S` seconds."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self._seen: set[str] = set()
        self._pending: Counter[str] = Counter()
        self._last = time.monotonic()

    def failed(self, what: str, error: str, retry_in_s: float | None) -> None:
        """``what`` (e.g. ``case X: attempt 1``) failed with ``error``; it is retried after
        ``retry_in_s`` seconds (None: not retried)."""
        # counted by cause: the error's first line (it names the endpoint), at most 160 chars
        cause = (error.splitlines()[0] if error else "unknown")[:160]
        if cause not in self._seen:
            self._seen.add(cause)
            then = ("not retried" if retry_in_s is None else f"retrying in {retry_in_s:.1f} s")
            self.logger.warning("%s failed (%s); %s (further failures of this cause are "
                                "counted, summarised every %.0f s)", what, cause, then,
                                SUMMARY_INTERVAL_S)
            return
        self._pending[cause] += 1
        if time.monotonic() - self._last >= SUMMARY_INTERVAL_S:
            self.flush()

    def flush(self) -> None:
        """Log the failures counted since the last summary (nothing when there are none)."""
        now = time.monotonic()
        if self._pending:
            causes = "; ".join(f"{count} x {cause}" for cause, count
                               in self._pending.most_common())
            self.logger.warning("%d more attempts failed in the last %.0f s: %s",
                                sum(self._pending.values()), now - self._last, causes)
            self._pending.clear()
        self._last = now
