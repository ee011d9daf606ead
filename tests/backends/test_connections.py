"""The pool of small clients: each carries at most ``per_client`` requests at once, and clients
are reused once their requests are done."""

from __future__ import annotations

import asyncio
import json

import httpx

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.connections import CONNECTIONS_PER_CLIENT, ClientPool
from authpairs.backends.openai_http import OpenAIBackend

ANSWER = {"choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": '{"decision": "ALLOW"}'}}]}


def _pool(per_client: int) -> ClientPool:
    return ClientPool(tls=False, per_client=per_client,
                      transport=httpx.MockTransport(lambda r: httpx.Response(200)))


async def test_a_client_carries_at_most_per_client_requests_and_is_reused() -> None:
    pool = _pool(1)
    async with pool.client() as first, pool.client() as second:
        assert first is not second
    assert len(pool) == 2
    async with pool.client() as again:
        assert again is first  # the first client with a free connection
    assert len(pool) == 2
    await pool.aclose()
    assert len(pool) == 0


async def test_requests_fill_a_client_before_the_next_one_is_made() -> None:
    pool = _pool(2)
    async with pool.client() as a, pool.client() as b, pool.client() as c:
        assert a is b and c is not a
    assert len(pool) == 2
    await pool.aclose()


async def test_the_backend_makes_as_many_clients_as_requests_were_in_flight() -> None:
    in_flight, most = 0, 0

    async def handle(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, content=json.dumps(ANSWER).encode())

    backend = OpenAIBackend(["http://a/v1"], "m", transport=httpx.MockTransport(handle))
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    async with backend:
        at_once = CONNECTIONS_PER_CLIENT + 1
        for _ in range(3):  # three rounds, one more at once than a client carries: two clients
            answers = await asyncio.gather(*(backend.complete(request, SamplingConfig())
                                             for _ in range(at_once)))
            assert [a.text for a in answers] == ['{"decision": "ALLOW"}'] * at_once
        assert most == at_once
        assert len(backend._clients) == 2
