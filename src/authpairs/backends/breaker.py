"""Circuit breaker of one endpoint: stop sending to a server that fails every request alike.

A *persistent* failure says the endpoint cannot answer at all: the connection was refused, the
host name did not resolve, the TLS handshake failed (:func:`connection_cause`), or the server
answered HTTP 401, 403 or 404 (:data:`HTTP_CAUSES`: a wrong key, path or model name). Retrying
such a failure case by case only repeats it. :class:`Breaker` counts them:

* it **opens** when the same persistent cause has failed every request to the endpoint for at
  least :data:`OPEN_AFTER_S` seconds and :data:`OPEN_AFTER_FAILURES` attempts -- or at once for an
  HTTP 401/403/404, which the server said itself;
* any answer (a success, or a transient failure such as a timeout or HTTP 429/5xx, which keeps the
  case runner's retry rules) shows the endpoint is reachable and starts the count again.

An open endpoint receives no more requests; the other endpoints of the same backend carry on. When
none is left the backend raises :class:`EndpointDownError`, which is not retried: the run stops
with one line naming the endpoint and the cause, keeps what it recorded, and resumes with the same
command.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from authpairs.backends.base import EndpointDownError
from authpairs.errors import TransportError

#: A persistent cause opens the breaker once it has failed every request for this long...
OPEN_AFTER_S = 3.0
#: ...and at least this many attempts.
OPEN_AFTER_FAILURES = 3

#: HTTP answers that no retry changes: the endpoint opens at the first one.
HTTP_CAUSES = {401: "HTTP 401 unauthorized", 403: "HTTP 403 forbidden", 404: "HTTP 404 not found"}

_DNS_MARKERS = ("name or service not known", "nodename nor servname", "name resolution",
                "no address associated", "getaddrinfo failed")


def connection_cause(exc: BaseException) -> str | None:
    """The persistent cause of a failed request (``connection refused``, ``host name not
    resolved``, ``TLS handshake failed``, ``cannot connect``), or None when ``exc`` is transient
    (a timeout, a dropped connection) or not a connection failure at all."""
    if not isinstance(exc, httpx.ConnectError):
        return None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return "TLS handshake failed"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "host name not resolved"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).lower()
    if any(marker in text for marker in _DNS_MARKERS):
        return "host name not resolved"
    if "ssl" in text or "certificate" in text:
        return "TLS handshake failed"
    if "refused" in text:
        return "connection refused"
    return "cannot connect"


@dataclass
class Breaker:
    """The circuit breaker of one endpoint (see the module docstring); ``clock`` gives
    monotonic seconds."""

    endpoint: str
    clock: Callable[[], float] = time.monotonic
    cause: str | None = None
    since: float = 0.0
    failures: int = 0
    is_open: bool = False

    def answered(self) -> None:
        """The endpoint answered (a success, or a transient failure): the count starts again."""
        if not self.is_open:
            self.cause, self.failures = None, 0

    def failed(self, cause: str, *, at_once: bool = False) -> None:
        """A request failed persistently with ``cause``; ``at_once`` opens the breaker now (an
        HTTP 401/403/404)."""
        if self.is_open:
            return
        now = self.clock()
        if cause != self.cause:
            self.cause, self.since, self.failures = cause, now, 0
        self.failures += 1
        if at_once or (self.failures >= OPEN_AFTER_FAILURES and now - self.since >= OPEN_AFTER_S):
            self.is_open = True

    def describe(self) -> str:
        """What the breaker saw, for the line that stops the run."""
        if self.failures == 1:
            return f"{self.endpoint}: {self.cause}"
        return (f"{self.endpoint}: {self.cause} on every request for "
                f"{self.clock() - self.since:.1f} s ({self.failures} attempts)")


def counted_failure(breaker: Breaker, url: str, exc: BaseException) -> TransportError:
    """The :class:`TransportError` of a request to ``url`` that failed with ``exc``, counted by
    the endpoint's ``breaker``: a persistent cause as a failure, anything else (a dropped
    connection, a timeout) as a sign that the endpoint is there."""
    cause = connection_cause(exc)
    if cause is None:
        breaker.answered()
        return TransportError(f"{url}: {type(exc).__name__}: {exc}")
    breaker.failed(cause)
    return TransportError(f"{url}: {cause} ({type(exc).__name__})")


def none_left(breakers: Sequence[Breaker]) -> EndpointDownError:
    """The error raised when every endpoint in ``breakers`` is open."""
    causes = "; ".join(breaker.describe() for breaker in breakers)
    return EndpointDownError(f"{causes}: no endpoint left to answer, so the run stopped")


__all__ = ["HTTP_CAUSES", "OPEN_AFTER_FAILURES", "OPEN_AFTER_S", "Breaker", "connection_cause",
           "counted_failure", "none_left"]
