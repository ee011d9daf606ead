"""Requests in flight spread over several small httpx clients instead of one large one.

httpx's connection pool (httpcore) re-examines every connection it holds -- and every waiting
request against every connection -- each time a request starts or a response closes, so one
client's CPU cost per request grows with the number of requests in flight. With many in flight
(vLLM on a GPU serves dozens at once) that client-side cost, not the server, bounds the run
(``bench/bench_http_clients.py`` measures it). A client that carries a few requests examines a
few connections.

:class:`ClientPool` hands each request a client that carries fewer than ``per_client`` requests
at that moment (each on its own kept-alive connection), making a new client only when all are
full, so the pool holds about (requests in flight) / ``per_client`` clients. Headers, timeouts
and TLS settings are the caller's, shared by every client (one TLS context for all of them).

The size of a client is a trade: fewer connections per client cost less CPU per request (what
bounds a run with many requests in flight against a fast server). Against a server whose every
answer takes exactly the same time, one large client answers a little sooner: requests that left
together come back together and keep leaving together, and a client that spends more CPU on each
request spreads them out. Against answer times that vary, as a model's do, the sizes answer
alike. ``bench/bench_http_clients.py`` measures all three cases at sizes 4, 8 and 16;
:data:`CONNECTIONS_PER_CLIENT` is the size that is near the best in each.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

CONNECTIONS_PER_CLIENT = 8
"""How many requests one client carries at once (each on its own kept-alive connection; see the
module docstring for why this many)."""


class ClientPool:
    """Small :class:`httpx.AsyncClient` objects, each carrying at most ``per_client`` requests.

    ``client_options`` are passed to every client (headers, timeout, transport, redirects);
    ``tls``: whether any endpoint is HTTPS (then one certificate store is loaded, for all
    clients; otherwise none is).
    """

    def __init__(self, *, tls: bool, per_client: int = CONNECTIONS_PER_CLIENT,
                 **client_options: Any) -> None:
        self.per_client = per_client
        self.verify: ssl.SSLContext | bool = httpx.create_ssl_context() if tls else False
        """The TLS context every client uses (False: plain HTTP only, no certificates loaded)."""
        self._options = client_options
        self._clients: list[httpx.AsyncClient] = []
        self._in_use: list[int] = []  # requests in flight on each client

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client with a free connection for one request, held until the block ends (its
        response read)."""
        per = self.per_client
        number = next((n for n, used in enumerate(self._in_use) if used < per), None)
        if number is None:
            number = len(self._clients)
            self._clients.append(httpx.AsyncClient(
                limits=httpx.Limits(max_connections=per, max_keepalive_connections=per),
                verify=self.verify, **self._options))
            self._in_use.append(0)
        self._in_use[number] += 1
        try:
            yield self._clients[number]
        finally:
            self._in_use[number] -= 1

    def __len__(self) -> int:
        """How many clients the pool holds."""
        return len(self._clients)

    async def aclose(self) -> None:
        """Close every client and its connection."""
        clients, self._clients, self._in_use = self._clients, [], []
        for client in clients:
            await client.aclose()
