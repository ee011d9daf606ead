"""How a call that fails in transport is retried: the attempt numbers, the exponential backoff
and how long a server's ``Retry-After`` may make it wait.

Both retry loops use it: the case runner's infrastructure attempts
(:class:`~authpairs.runs.case_runner.CaseRunner`) and the agent model's turns
(:class:`~authpairs.agent.runner.AgentLoop`), so they wait alike. Each loop keeps its own log
line and what it records of an attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A server's Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """Up to ``retries`` retries after the first attempt, waiting ``backoff_s`` seconds after the
    first failure and twice as long after each further one."""

    retries: int = 3
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


__all__ = ["MAX_RETRY_AFTER_S", "RetryPolicy"]
