"""Transport failures logged without flooding the terminal.

A server that fails every request would otherwise print one warning per case per attempt.
:class:`FailureLog` logs the first failure of each cause (endpoint and what failed) at once, with
the case and how long until the retry, then only counts: at most every ``interval_s`` seconds one
line says how many more attempts failed since, per cause. :meth:`FailureLog.flush` logs what is
still counted when the run ends. Both retry loops use it: the case runner's and the agent
model's.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable

#: Seconds between two summary lines.
SUMMARY_INTERVAL_S = 10.0


def failure_key(error: str) -> str:
    """The cause of a failure as it is counted: the first line of the error (which names the
    endpoint), at most 160 characters."""
    return (error.splitlines()[0] if error else "unknown")[:160]


class FailureLog:
    """Logs transport failures to ``logger``: each cause's first at once, later ones counted and
    summarised at most every ``interval_s`` seconds (``clock``: monotonic seconds)."""

    def __init__(self, logger: logging.Logger, interval_s: float = SUMMARY_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.clock = clock
        self._seen: set[str] = set()
        self._pending: Counter[str] = Counter()
        self._last = clock()

    def failed(self, what: str, error: str, retry_in_s: float | None) -> None:
        """``what`` (e.g. ``case X: attempt 1``) failed with ``error``; it is retried after
        ``retry_in_s`` seconds (None: not retried)."""
        cause = failure_key(error)
        if cause not in self._seen:
            self._seen.add(cause)
            then = ("not retried" if retry_in_s is None else f"retrying in {retry_in_s:.1f} s")
            self.logger.warning("%s failed (%s); %s (further failures of this cause are "
                                "counted, summarised every %.0f s)", what, cause, then,
                                self.interval_s)
            return
        self._pending[cause] += 1
        if self.clock() - self._last >= self.interval_s:
            self.flush()

    def flush(self) -> None:
        """Log the failures counted since the last summary (nothing when there are none)."""
        now = self.clock()
        if self._pending:
            causes = "; ".join(f"{count} x {cause}" for cause, count
                               in self._pending.most_common())
            self.logger.warning("%d more attempts failed in the last %.0f s: %s",
                                sum(self._pending.values()), now - self._last, causes)
            self._pending.clear()
        self._last = now


__all__ = ["SUMMARY_INTERVAL_S", "FailureLog", "failure_key"]
