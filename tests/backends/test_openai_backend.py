"""The OpenAI-compatible backend against a mocked transport and a real loopback HTTP server."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.errors import BackendError, TransportError
from authpairs.runs.config import SamplingConfig

REQUEST = ChatRequest(messages=[{"role": "user", "content": "hi"}],
                      response_format={"type": "json_schema", "json_schema": {"name": "r"}})
BODY = {"choices": [{"message": {"content": '{"decision":"ALLOW"}', "reasoning_content": "hmm"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7,
                  "completion_tokens_details": {"reasoning_tokens": 3}}}


async def test_payload_carries_sampling_schema_and_extra_body() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        assert request.headers["authorization"] == "Bearer k"
        assert request.headers["content-type"] == "application/json"
        return httpx.Response(200, json=BODY)

    sampling = SamplingConfig(temperature=0.7, top_p=0.95, top_k=20, min_p=0.0,
                              presence_penalty=1.5, repetition_penalty=1.1, seed=3,
                              max_tokens=64)
    backend = OpenAIBackend(["http://a/v1"], "m", api_key="k",
                            extra_body={"chat_template_kwargs": {"enable_thinking": False}},
                            transport=httpx.MockTransport(handler))
    async with backend:
        response = await backend.complete(REQUEST, sampling)
    payload = seen[0]
    assert payload["model"] == "m" and payload["messages"] == REQUEST.messages
    for key, value in [("temperature", 0.7), ("top_p", 0.95), ("top_k", 20), ("min_p", 0.0),
                       ("presence_penalty", 1.5), ("repetition_penalty", 1.1), ("seed", 3),
                       ("max_tokens", 64)]:
        assert payload[key] == value
    assert payload["response_format"] == REQUEST.response_format
    assert payload["chat_template_kwargs"] == {"enable_thinking": False}
    assert response.text == '{"decision":"ALLOW"}' and response.reasoning == "hmm"
    assert (response.input_tokens, response.output_tokens, response.reasoning_tokens) == (12, 7, 3)
    assert response.finish_reason == "stop"


async def test_a_lone_surrogate_in_the_answer_is_read_not_a_transport_error() -> None:
    """orjson refuses a lone surrogate escape; the json module reads it, as a model wrote it."""
    raw = json.dumps(BODY).replace('\\"ALLOW\\"', '\\"ALLOW\\ud800\\"').encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=raw, headers={"content-type": "application/json"})

    async with OpenAIBackend(["http://a/v1"], "m",
                             transport=httpx.MockTransport(handler)) as backend:
        response = await backend.complete(REQUEST, SamplingConfig())
    assert response.text == '{"decision":"ALLOW\ud800"}'


async def test_requests_are_spread_over_endpoints() -> None:
    hosts: list[str] = []

    import asyncio

    async def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        await asyncio.sleep(0.01)  # requests overlap, as over a network
        return httpx.Response(200, json=BODY)

    backend = OpenAIBackend(["http://a/v1", "http://b/v1"], "m", concurrency_per_endpoint=1,
                            transport=httpx.MockTransport(handler))

    async with backend:
        await asyncio.gather(*(backend.complete(REQUEST, SamplingConfig()) for _ in range(6)))
    assert sorted(set(hosts)) == ["a", "b"] and len(hosts) == 6


@pytest.mark.parametrize(("status", "error"), [(500, TransportError), (503, TransportError),
                                               (429, TransportError), (400, BackendError),
                                               (401, TransportError), (403, TransportError),
                                               (404, TransportError)])
async def test_http_errors(status: int, error: type[Exception]) -> None:
    backend = OpenAIBackend(["http://a/v1"], "m", transport=httpx.MockTransport(
        lambda r: httpx.Response(status, text="nope")))
    async with backend:
        with pytest.raises(error):
            await backend.complete(REQUEST, SamplingConfig())


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_refused_connection_is_transport_error() -> None:
    backend = OpenAIBackend([f"http://127.0.0.1:{_closed_port()}/v1"], "m")
    async with backend:
        with pytest.raises(TransportError):
            await backend.complete(REQUEST, SamplingConfig())


@pytest.fixture
def slow_server() -> Iterator[str]:
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            release.wait(5)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps(BODY).encode())

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    release.set()
    server.shutdown()
    server.server_close()


async def test_deadline_is_a_transport_error(slow_server: str) -> None:
    backend = OpenAIBackend([slow_server], "m", deadline_s=0.3)
    async with backend:
        with pytest.raises(TransportError):
            await backend.complete(REQUEST, SamplingConfig())


def test_a_malformed_base_url_is_a_clear_error() -> None:
    with pytest.raises(BackendError, match=r"'http://\[::1' is not a URL"):
        OpenAIBackend(["http://[::1"], "m")


def test_no_base_url_is_refused() -> None:
    with pytest.raises(BackendError):
        OpenAIBackend([], "m")


@pytest.mark.parametrize(("url", "verified"), [("http://127.0.0.1:8000/v1", False),
                                               ("https://api.example.com/v1", True)])
async def test_certificates_are_loaded_only_for_tls_endpoints(url: str, verified: bool) -> None:
    async with OpenAIBackend([url, "http://127.0.0.1:8001/v1"], "m") as backend:
        verify = backend._clients.verify
    assert isinstance(verify, ssl.SSLContext) is verified
    if verified:
        assert isinstance(verify, ssl.SSLContext) and verify.verify_mode == ssl.CERT_REQUIRED
