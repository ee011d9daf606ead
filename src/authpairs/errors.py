"""One error family: every error authpairs raises on purpose derives from :class:`AuthpairsError`.

Callers catch :class:`AuthpairsError` (or one area below it); the CLI prints the message, never a
traceback (unless ``--debug``). Each concrete error is defined next to the code that raises it and
derives from one area class here, and from the builtin it always was (``ValueError``,
``RuntimeError``, ...) so older ``except`` clauses keep working.

::

    AuthpairsError
    ├── DataError          datasets, scenarios, imports, effect descriptors, expressions
    ├── ConfigError        run configurations, study plans, grids, gate inputs
    ├── BackendError       non-retryable backend problems (HTTP 4xx, replay miss)
    ├── TransportError     retryable transport failures (recorded as infrastructure, retried)
    ├── ReviewerError      guardrails and reviewers that cannot be built or called
    ├── EnforcementError   sandbox refusals, containment, verifier read-back
    ├── RecordsError       records files, unknown runs, incomplete or tampered records
    ├── AnalysisError      comparisons, compositions and other analyses given bad input
    └── MissingDependencyError  an optional extra is not installed
"""

from __future__ import annotations


class AuthpairsError(Exception):
    """Base class of every error authpairs raises on purpose."""


class DataError(AuthpairsError, ValueError):
    """A dataset, scenario, import or effect descriptor is malformed."""


class ConfigError(AuthpairsError, ValueError):
    """A configuration (run, study plan, grid, gate input) is malformed; names file and field."""


class BackendError(AuthpairsError):
    """A non-retryable backend problem (bad model name, HTTP 4xx, replay miss)."""


class TransportError(AuthpairsError):
    """A refused connection, a timeout or an HTTP 5xx/429: retried as infrastructure.

    ``retry_after`` carries a server's ``Retry-After`` hint in seconds, when it sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ReviewerError(AuthpairsError, ValueError):
    """A reviewer or guardrail cannot be built (unknown name, bad plugin, bad arguments)."""


class EnforcementError(AuthpairsError, RuntimeError):
    """The enforcement point or a verifier could not do its job."""


class RecordsError(AuthpairsError, RuntimeError):
    """A records file is unusable, a run is unknown, or records fail a check."""


class AnalysisError(AuthpairsError, ValueError):
    """An analysis was given inputs it cannot use (different datasets, bad orders, ...)."""


class MissingDependencyError(AuthpairsError, RuntimeError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f"{purpose} needs the '{package}' package: "
                         f"pip install 'authpairs[{extra}]'")
