"""One error family: every error authpairs raises on purpose derives from :class:`AuthpairsError`.

Callers catch :class:`AuthpairsError` (or one area below it); the CLI prints the message, never a
traceback (unless ``--debug``). Each concrete error is defined next to the code that raises it and
derives from one area class here, and from the builtin it always was (``ValueError``,
``RuntimeError``, ...) so older ``except`` clauses keep working.

Every error carries a hint, what to do about it: ``raise ConfigError(message, hint=...)`` for
one that only the raising code knows, else the area's :attr:`AuthpairsError.hint` (``{command}``
in it is replaced by the command line's command, e.g. ``authpairs run``). The CLI prints it as
``error: message (hint: ...)``, unless the message already carries one (:func:`hinted`).

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

HINT_MARK = "(hint: "
"""How a hint starts in a message (and in an ``error:`` line)."""


class AuthpairsError(Exception):
    """Base class of every error authpairs raises on purpose; ``hint`` says what to do."""

    hint: str = "run '{command} --help' to see what it takes"
    """What to do about the error; each area below says it for its own errors."""

    def __init__(self, *args: object, hint: str | None = None) -> None:
        super().__init__(*args)
        if hint is not None:
            self.hint = hint


class DataError(AuthpairsError, ValueError):
    """A dataset, scenario, import or effect descriptor is malformed."""

    hint = ("a dataset file holds one case a line, in the format of "
            "docs/datasets/language-format.md; 'authpairs data check' checks scenario files")


class ConfigError(AuthpairsError, ValueError):
    """A configuration (run, study plan, grid, gate input) is malformed; names file and field."""

    hint = ("run '{command} --help' for the options; a configuration file's fields are those of "
            "configs/local-smollm2.yaml")


class BackendError(AuthpairsError):
    """A non-retryable backend problem (bad model name, HTTP 4xx, replay miss)."""

    hint = ("check the model name and the server's base URL (run '{command} --help'), or re-run "
            "with --debug")


class TransportError(AuthpairsError):
    """A refused connection, a timeout or an HTTP 5xx/429: retried as infrastructure.

    ``retry_after`` carries a server's ``Retry-After`` hint in seconds, when it sent one.
    """

    hint = ("check that the server is up and reachable; re-running the same command retries the "
            "cases")

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ReviewerError(AuthpairsError, ValueError):
    """A reviewer or guardrail cannot be built (unknown name, bad plugin, bad arguments)."""

    hint = ("'authpairs guardrails' lists the interfaces and guardrails; a Python guardrail is "
            "module:function taking the case (docs/guardrails.md)")


class EnforcementError(AuthpairsError, RuntimeError):
    """The enforcement point or a verifier could not do its job."""

    hint = ("re-run with --debug to see where the sandbox stopped; docs/reliability.md says what "
            "it refuses")


class RecordsError(AuthpairsError, RuntimeError):
    """A records file is unusable, a run is unknown, or records fail a check."""

    hint = ("'authpairs runs --records FILE' lists the runs a records file holds; 'authpairs run "
            "--records FILE' records a run into it")


class AnalysisError(AuthpairsError, ValueError):
    """An analysis was given inputs it cannot use (different datasets, bad orders, ...)."""

    hint = ("run '{command} --help' for what it compares; the runs must be of the same dataset "
            "and cases")


class MissingDependencyError(AuthpairsError, RuntimeError):
    """An optional dependency is missing; the message (and hint) say which extra to install."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f"{purpose} needs the '{package}' package {HINT_MARK}pip install "
                         f"'authpairs[{extra}]')", hint=f"pip install 'authpairs[{extra}]'")


def error_message(problem: BaseException | str, command: str = "authpairs",
                  hint: str | None = None) -> str:
    """The text of an ``error:`` line for ``problem``: its message and its hint (``hint``
    first, else the error's own, else the family's general one, for an error from outside it),
    ``{command}`` in the hint replaced by ``command``."""
    message = str(problem) or type(problem).__name__
    if hint is None:
        hint = problem.hint if isinstance(problem, AuthpairsError) else AuthpairsError.hint
    return hinted(message, hint, command)


def hinted(message: str, hint: str | None, command: str = "authpairs") -> str:
    """``message`` with ``(hint: ...)`` appended, ``{command}`` in the hint replaced by
    ``command``; unchanged when it already holds a hint or there is none."""
    if not hint or HINT_MARK in message:
        return message
    return f"{message} {HINT_MARK}{hint.replace('{command}', command)})"
