"""One kept-alive connection per request in flight: a pool of single-connection httpx clients.

httpx's connection pool (httpcore) re-examines every connection it holds -- and every waiting
request against every connection -- each time a request starts or a response closes, so its CPU
cost per request grows with the number of connections. With many requests in flight against a
fast server (vLLM on a GPU, a local stub) that client-side cost, not the server, bounds the run
(``bench/bench_overhead.py`` measures it). A client that holds one connection examines one.

:class:`ClientPool` hands each request in flight a client of its own: made on first need, kept
(with its connection alive) for the next request, so the pool holds as many clients as there
were requests in flight at once. Headers, timeouts and TLS settings are the caller's, shared by
every client (one TLS context for all of them).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

ONE_CONNECTION = httpx.Limits(max_connections=1, max_keepalive_connections=1)


class ClientPool:
    """Single-connection :class:`httpx.AsyncClient` objects, one per request in flight.

    ``client_options`` are passed to every client (headers, timeout, transport, redirects);
    ``tls``: whether any endpoint is HTTPS (then one certificate store is loaded, for all
    clients; otherwise none is).
    """

    def __init__(self, *, tls: bool, **client_options: Any) -> None:
        self.verify: ssl.SSLContext | bool = httpx.create_ssl_context() if tls else False
        """The TLS context every client uses (False: plain HTTP only, no certificates loaded)."""
        self._options = client_options
        self._idle: list[httpx.AsyncClient] = []
        self._clients: list[httpx.AsyncClient] = []

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client no other request is using until the block ends (its response read)."""
        client = self._idle.pop() if self._idle else self._new()
        try:
            yield client
        finally:
            self._idle.append(client)

    def _new(self) -> httpx.AsyncClient:
        client = httpx.AsyncClient(limits=ONE_CONNECTION, verify=self.verify, **self._options)
        self._clients.append(client)
        return client

    def __len__(self) -> int:
        """How many clients (connections at most) the pool holds."""
        return len(self._clients)

    async def aclose(self) -> None:
        """Close every client and its connection."""
        clients, self._clients, self._idle = self._clients, [], []
        for client in clients:
            await client.aclose()
