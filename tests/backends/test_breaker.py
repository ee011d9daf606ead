"""The circuit breaker of an endpoint and the preflight check, against real sockets.

A persistent failure (refused, unresolvable, HTTP 401/403/404) opens an endpoint's breaker after
a bounded time and count (401/403/404 at once); any answer starts the count again; an open
endpoint gets no requests while the others carry on; none left is :class:`EndpointDownError`.
Preflight names the endpoint, what failed and what to do.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from authpairs.backends.base import ChatRequest, EndpointDownError
from authpairs.backends.breaker import (
    OPEN_AFTER_FAILURES,
    OPEN_AFTER_S,
    Breaker,
    connection_cause,
)
from authpairs.backends.config import SamplingConfig
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.backends.preflight import PreflightError, check_reachable
from authpairs.errors import BackendError, TransportError
from tests.backends.fake_server import FaultServer

REQUEST = ChatRequest(messages=[{"role": "user", "content": "hi"}])


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_after_its_time_and_count_not_before() -> None:
    clock = Clock()
    breaker = Breaker("http://x/v1", clock=clock)
    for _ in range(OPEN_AFTER_FAILURES * 5):  # many failures at once: a blip, not yet down
        breaker.failed("connection refused")
    assert not breaker.is_open
    clock.now += OPEN_AFTER_S
    breaker.failed("connection refused")
    assert breaker.is_open
    assert "connection refused on every request for 3.0 s" in breaker.describe()


def test_an_answer_or_another_cause_starts_the_count_again() -> None:
    clock = Clock()
    breaker = Breaker("http://x/v1", clock=clock)
    breaker.failed("connection refused")
    clock.now += OPEN_AFTER_S
    breaker.answered()  # e.g. a 503 or a timeout: the server is there
    breaker.failed("connection refused")
    breaker.failed("connection refused")
    assert not breaker.is_open
    clock.now += OPEN_AFTER_S
    breaker.failed("host name not resolved")  # another cause: counted from now
    breaker.failed("host name not resolved")
    breaker.failed("host name not resolved")
    assert not breaker.is_open


async def test_causes_of_real_connection_failures() -> None:
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError) as refused:
            await client.get(f"http://127.0.0.1:{closed_port()}/")
        with pytest.raises(httpx.ConnectError) as unresolved:
            await client.get("http://no-such-host.invalid/")
    assert connection_cause(refused.value) == "connection refused"
    assert connection_cause(unresolved.value) == "host name not resolved"
    assert connection_cause(httpx.ReadTimeout("slow")) is None
    assert connection_cause(httpx.RemoteProtocolError("dropped")) is None


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_401_403_404_open_the_endpoint_at_once(status: int) -> None:
    backend = OpenAIBackend(["http://a/v1"], "m", transport=httpx.MockTransport(
        lambda request: httpx.Response(status, text="no")))
    async with backend:
        with pytest.raises(TransportError, match=f"HTTP {status}"):
            await backend.complete(REQUEST, SamplingConfig())
        with pytest.raises(EndpointDownError, match=f"http://a/v1: HTTP {status}") as info:
            await backend.complete(REQUEST, SamplingConfig())
    assert isinstance(info.value, BackendError) and "re-run the same command" in info.value.hint


async def test_a_down_endpoint_is_left_out_and_the_others_carry_on() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        if request.url.host == "down":
            return httpx.Response(404, text="model not found")
        return httpx.Response(200, json={"choices": [{"message": {"content": "x"},
                                                      "finish_reason": "stop"}]})

    backend = OpenAIBackend(["http://down/v1", "http://up/v1"], "m",
                            transport=httpx.MockTransport(handler))
    async with backend:
        answered = 0
        for _ in range(6):
            try:
                await backend.complete(REQUEST, SamplingConfig())
                answered += 1
            except TransportError:
                pass
    assert seen.count("down") == 1 and answered == 5


async def test_a_refused_endpoint_stops_within_the_bound() -> None:
    backend = OpenAIBackend([f"http://127.0.0.1:{closed_port()}/v1"], "m")
    async with backend:
        with pytest.raises(TransportError, match="connection refused"):
            await backend.complete(REQUEST, SamplingConfig())
        breaker = backend._endpoints[0].breaker
        breaker.since -= OPEN_AFTER_S  # as if it had been refusing for the bound already
        for _ in range(OPEN_AFTER_FAILURES - 1):
            with pytest.raises(TransportError):
                await backend.complete(REQUEST, SamplingConfig())
        with pytest.raises(EndpointDownError, match="connection refused on every request"):
            await backend.complete(REQUEST, SamplingConfig())


async def test_preflight_names_a_refused_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    async with OpenAIBackend([url], "m") as backend:
        with pytest.raises(PreflightError, match=f"{url}: connection refused") as info:
            await backend.preflight()
    assert "--base-url" in info.value.hint


async def test_preflight_lists_what_is_served_for_a_wrong_model() -> None:
    async with FaultServer(models=["qwen", "llama"]) as server, \
            OpenAIBackend([server.base_url], "gpt-wrong") as backend:
        with pytest.raises(PreflightError, match="does not serve model 'gpt-wrong'; it serves "
                                                 "'qwen', 'llama'") as info:
            await backend.preflight()
        await backend.preflight(check_model=False)
    assert "--model" in info.value.hint
    assert server.requests == []  # no completion was asked for


async def test_preflight_without_a_models_endpoint_suggests_no_preflight() -> None:
    async with FaultServer(models=None) as server, \
            OpenAIBackend([server.base_url], "m") as backend:
        with pytest.raises(PreflightError, match="HTTP 404") as info:
            await backend.preflight()
    assert "--no-preflight" in info.value.hint


@pytest.mark.parametrize(("status", "passes"), [(200, True), (405, True), (501, True),
                                                (401, False), (403, False), (404, False)])
async def test_a_service_url_is_reachable_unless_refused_or_missing(status: int,
                                                                   passes: bool) -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(
        lambda request: httpx.Response(status)))
    async with client:
        if passes:
            await check_reachable(client, "http://guard/verdict")
        else:
            with pytest.raises(PreflightError, match=f"HTTP {status}"):
                await check_reachable(client, "http://guard/verdict")
