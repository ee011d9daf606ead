"""OpenAI-compatible chat completions over HTTP: vLLM, llama.cpp server, Ollama, OpenAI.

A request with a raw ``prompt`` (native formats such as Harmony) goes to ``/completions``
instead, with the same sampling, deadline and error rules; a request with ``prompt_token_ids``
sends those ids as the prompt (vLLM and llama.cpp take a list of token ids), and the completion's
token ids are read back when the server sends them (:func:`completion_token_ids`).

Requests are spread across one or several base URLs (the least-loaded endpoint first), with at
most ``concurrency_per_endpoint`` in flight per endpoint where that cap is set (otherwise the
run's concurrency is the only bound). Sampling parameters, a JSON-schema ``response_format`` and
an ``extra_body`` passthrough (e.g. vLLM ``chat_template_kwargs``) are sent as given.

Deadlines follow :mod:`authpairs.backends.liveness`. With ``stream=True`` (the embedded
server's default, ``stream: true`` for any OpenAI-compatible server) the reply is read as
server-sent events, each one progress, and assembled into the body the same request returns
without streaming (:meth:`OpenAIBackend.post_json`), so a generation that keeps producing tokens
is never cut off however slow the machine. Refused connections, timeouts, HTTP 429 and 5xx raise
:class:`TransportError`, other 4xx :class:`BackendError` (:func:`check_status`); an endpoint
that fails every request is left by its circuit breaker (:mod:`authpairs.backends.breaker`),
and with none left the run stops. :meth:`OpenAIBackend.preflight` checks every endpoint first.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from authpairs import main_job
from authpairs.backends import liveness
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.breaker import HTTP_CAUSES, Breaker, counted_failure, none_left
from authpairs.backends.config import OpenAIBackendConfig, SamplingConfig
from authpairs.backends.connections import ClientPool
from authpairs.backends.liveness import AttemptClock
from authpairs.backends.preflight import check_models_endpoint
from authpairs.errors import BackendError, TransportError


class _Endpoint:
    def __init__(self, base_url: str, limit: int | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.slots = None if limit is None else asyncio.Semaphore(limit)
        self.in_flight = 0
        self.breaker = Breaker(self.base_url)
        # Parsed once: httpx spends more parsing a URL string than sending the request body.
        try:
            self.urls = {path: httpx.URL(f"{self.base_url}/{path}")
                         for path in ("chat/completions", "completions")}
        except httpx.InvalidURL as exc:
            raise BackendError(f"backend base URL {base_url!r} is not a URL: {exc}") from None


def build_payload(model: str, request: ChatRequest, sampling: SamplingConfig,
                  extra_body: dict[str, Any],
                  param_names: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON body of a chat-completions call.

    ``param_names`` renames sampling fields for servers that spell them differently (llama.cpp
    calls ``repetition_penalty`` ``repeat_penalty``).
    """
    payload: dict[str, Any] = {"model": model, "messages": request.messages}
    names = param_names or {}
    for name in SamplingConfig.model_fields:
        value = getattr(sampling, name)
        if value is not None:
            payload[names.get(name, name)] = value
    if request.response_format is not None:
        payload["response_format"] = request.response_format
    if request.prompt is not None or request.prompt_token_ids is not None:
        # Raw completion (POST /completions): the prompt -- its token ids when the request has
        # them, so the server tokenises nothing -- replaces the chat messages.
        del payload["messages"]
        payload["prompt"] = (request.prompt_token_ids if request.prompt_token_ids is not None
                             else request.prompt)
    payload.update(request.options or {})
    for key, value in extra_body.items():  # the configuration wins; nested dicts are merged
        current = payload.get(key)
        payload[key] = ({**current, **value} if isinstance(current, dict)
                        and isinstance(value, dict) else value)
    return payload


def _count(usage: dict[str, Any], key: str, where: str) -> int:
    """A token count from ``usage``: absent/null is 0; anything but a non-negative integer
    (or integral float) is a malformed body."""
    value = usage.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TransportError(f"malformed completion body: {where}.{key} is "
                             f"{type(value).__name__}, not a number")
    if isinstance(value, float) and not (value.is_integer() and value >= 0):
        raise TransportError(f"malformed completion body: {where}.{key} is {value!r}")
    if value < 0:
        raise TransportError(f"malformed completion body: {where}.{key} is negative")
    return int(value)


def _optional_text(value: object, where: str, source: str = "completion body") -> str | None:
    """``value`` when it is a string or None; anything else is a malformed ``source``."""
    if value is None or isinstance(value, str):
        return value
    raise TransportError(f"malformed {source}: {where} is {type(value).__name__}, not a string")


def completion_token_ids(choice: dict[str, Any]) -> list[int] | None:
    """The token ids a choice was generated as, when the server sent them: vLLM's ``token_ids``
    (request option ``return_token_ids: true``), else the ``id`` of every ``logprobs.content``
    entry (llama.cpp, with ``logprobs`` requested); None when it sent neither. A ``token_ids``
    that is not a list of non-negative integers is a malformed body."""
    ids = choice.get("token_ids")
    if ids is None:
        logprobs = choice.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if not isinstance(content, list):
            return None
        ids = [entry.get("id") if isinstance(entry, dict) else None for entry in content]
        if not all(_is_token_id(i) for i in ids):
            return None  # logprobs without ids (vLLM's chat shape): no ids were sent
    if not isinstance(ids, list) or not all(_is_token_id(i) for i in ids):
        raise TransportError("malformed completion body: choices[0].token_ids is not a list of "
                             "token ids")
    return ids


def _is_token_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_completion(body: object, *, latency_s: float = 0.0, endpoint: str = "") -> ChatResponse:
    """Read text, reasoning, finish reason and token counts from a chat-completions body
    (``latency_s`` and ``endpoint`` say how long it took and which server answered).

    Any body that does not have the documented shape -- no ``choices`` list, a choice that is
    not an object, ``message`` missing or null, list-type ``content``, non-numeric ``usage`` --
    raises :class:`TransportError` naming the cause: an infrastructure attempt, retried and
    never scored.
    """
    if not isinstance(body, dict):
        raise TransportError(f"malformed completion body: top level is {type(body).__name__}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise TransportError("malformed completion body: 'choices' is missing or empty")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise TransportError(f"malformed completion body: choices[0] is "
                             f"{type(choice).__name__}, not an object")
    raw = "message" not in choice and "text" in choice  # a /completions (raw prompt) body
    message = {} if raw else choice.get("message")
    if not isinstance(message, dict):
        raise TransportError(f"malformed completion body: choices[0].message is "
                             f"{'null' if message is None else type(message).__name__}")
    text = choice.get("text") if raw else message.get("content")
    usage = body.get("usage") or {}
    if not isinstance(usage, dict):
        raise TransportError("malformed completion body: 'usage' is not an object")
    details = usage.get("completion_tokens_details") or {}
    if not isinstance(details, dict):
        details = {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return ChatResponse(
        text=_optional_text(text, "choices[0].text" if raw else "choices[0].message.content"),
        reasoning=_optional_text(reasoning, "choices[0].message.reasoning_content"),
        finish_reason=_optional_text(choice.get("finish_reason"), "choices[0].finish_reason"),
        input_tokens=_count(usage, "prompt_tokens", "usage"),
        output_tokens=_count(usage, "completion_tokens", "usage"),
        reasoning_tokens=_count(details, "reasoning_tokens", "usage.completion_tokens_details"),
        latency_s=latency_s, endpoint=endpoint, output_token_ids=completion_token_ids(choice),
    )


def _json_body(endpoint: _Endpoint, content: bytes) -> Any:
    """The JSON value of a reply from ``endpoint`` (the json module also reads what a model may
    write but stricter parsers refuse, such as a lone surrogate escape); a body that is not JSON
    is a :class:`TransportError`."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise TransportError(f"{endpoint.base_url}: response is not JSON") from exc


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        seconds = (when - datetime.datetime.now(datetime.UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def check_status(base_url: str, reply: httpx.Response, breaker: Breaker) -> None:
    """HTTP 429 and 5xx raise :class:`TransportError` (``Retry-After`` kept), other 4xx
    :class:`BackendError`, each with the start of the body (read only then); anything below
    400 passes. HTTP 401, 403 and 404 open the endpoint's ``breaker`` and raise
    :class:`TransportError` (the request may go to another endpoint; with none left the backend
    stops the run), and any other answer tells it the endpoint answered."""
    status = reply.status_code
    if status in HTTP_CAUSES:
        breaker.failed(HTTP_CAUSES[status], at_once=True)
        raise TransportError(f"{base_url}: HTTP {status}: {reply.text[:200]}")
    breaker.answered()
    if status == 429 or status >= 500:
        raise TransportError(f"{base_url}: HTTP {status}: {reply.text[:200]}",
                             retry_after=retry_after_seconds(reply.headers.get("retry-after")))
    if status >= 400:
        raise BackendError(f"{base_url}: HTTP {status}: {reply.text[:500]}")


#: A streamed reply may hold this many events beyond its output limit (the role, finish and usage
#: events; a server sends at most one event per token): more is a malformed stream.
STREAM_EVENT_MARGIN = 16
_STREAMED_TEXT = ("content", "reasoning_content", "reasoning")
"""The message fields a streamed chat reply sends piece by piece."""


class StreamAssembler:
    """The events of a streamed reply (``stream: true``) put back together as the body the same
    request returns without streaming: choice 0's text (``delta.content``, or ``text`` for a
    raw completion) and reasoning (``delta.reasoning_content`` / ``delta.reasoning``) joined,
    its token ids (each event's, in order, when the server sends them), its last finish reason,
    and the ``usage`` event's counts.

    Feed it the stream's lines (:meth:`add_line`), then take :meth:`body`. An event that is not
    a JSON object of the documented shape, an ``error`` event, more than ``max_events`` events
    or a stream without its ``[DONE]`` marker raise :class:`TransportError`.
    """

    def __init__(self, *, raw: bool, max_events: int) -> None:
        self.raw = raw
        self.max_events = max_events
        self.events = 0
        self.done = False
        self._parts: dict[str, list[str]] = {}  # the pieces of each field that sent any
        self._finish_reason: str | None = None
        self._usage: object = None
        self._token_ids: list[int] | None = None

    def add_line(self, line: str) -> bool:
        """Take one line of the stream; True when it was an event (progress)."""
        if not line.startswith("data:") or self.done:
            return False  # blank separators, comments, other SSE fields, anything after [DONE]
        data = line[5:].strip()
        self.events += 1
        if self.events > self.max_events:
            raise TransportError(f"malformed stream: more than {self.max_events} events "
                                 "(the output limit allows fewer)")
        if data == "[DONE]":
            self.done = True
            return True
        try:
            event = json.loads(data.encode())
        except (ValueError, RecursionError):
            raise TransportError("malformed stream event: not JSON") from None
        if not isinstance(event, dict):
            raise TransportError(f"malformed stream event: top level is {type(event).__name__}")
        if "error" in event:
            raise TransportError(f"the server reported an error in the stream: "
                                 f"{str(event['error'])[:200]}")
        if event.get("usage") is not None:
            self._usage = event["usage"]
        choices = event.get("choices") or []
        if not isinstance(choices, list):
            raise TransportError("malformed stream event: 'choices' is not a list")
        for choice in choices:
            if not isinstance(choice, dict):
                raise TransportError(f"malformed stream event: a choice is "
                                     f"{type(choice).__name__}, not an object")
            if choice.get("index", 0) == 0:
                self._add_choice(choice)
        return True

    def _add_choice(self, choice: dict[str, Any]) -> None:
        if self.raw:
            pieces = {"content": choice.get("text")}
        else:
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise TransportError(f"malformed stream event: delta is "
                                     f"{type(delta).__name__}, not an object")
            pieces = {key: delta.get(key) for key in _STREAMED_TEXT}
        for key, value in pieces.items():
            piece = _optional_text(value, f"choices[0].{'text' if self.raw else 'delta.' + key}",
                                   "stream event")
            if piece is not None:
                self._parts.setdefault(key, []).append(piece)
        finish = _optional_text(choice.get("finish_reason"), "choices[0].finish_reason",
                                "stream event")
        if finish is not None:
            self._finish_reason = finish
        ids = completion_token_ids(choice)
        if ids is not None:
            if self._token_ids is None:
                self._token_ids = []
            self._token_ids.extend(ids)

    def _joined(self, key: str) -> str | None:
        parts = self._parts.get(key)
        return None if parts is None else "".join(parts)

    def body(self) -> dict[str, Any]:
        """The assembled non-streaming body (the stream must have ended with ``[DONE]``)."""
        if not self.done:
            raise TransportError(f"the stream ended before its end marker ([DONE]) after "
                                 f"{self.events} events")
        choice: dict[str, Any] = {"index": 0, "finish_reason": self._finish_reason}
        if self.raw:
            choice["text"] = self._joined("content")
        else:
            choice["message"] = {"role": "assistant", **{
                key: self._joined(key) for key in _STREAMED_TEXT}}
        if self._token_ids is not None:
            choice["token_ids"] = self._token_ids
        return {"choices": [choice], "usage": self._usage}


def completion_path(request: ChatRequest) -> str:
    """``completions`` for a raw-prompt request, ``chat/completions`` otherwise."""
    raw = request.prompt is not None or request.prompt_token_ids is not None
    return "completions" if raw else "chat/completions"


class OpenAIBackend:
    """Chat completions against one or several OpenAI-compatible servers (``stream``: read each
    reply as server-sent events, every event progress for the deadline; see the module
    docstring)."""

    name = "openai"

    def __init__(self, base_urls: list[str], model: str, *,
                 concurrency_per_endpoint: int | None = None,
                 deadline_s: float = main_job.DEADLINE_S, extra_body: dict[str, Any] | None = None,
                 api_key: str | None = None, param_names: dict[str, str] | None = None,
                 stream: bool = False,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not base_urls:
            raise BackendError("the openai backend needs at least one base URL")
        self.model = model
        self.deadline_s = deadline_s
        self.stream = stream
        self.extra_body = dict(extra_body or {})
        self.param_names = dict(param_names or {})
        self.concurrency_per_endpoint = concurrency_per_endpoint
        #: What the servers' models endpoints said the model is (filled by :meth:`preflight`).
        self.served_names: list[str] = []
        self._endpoints = [_Endpoint(u, concurrency_per_endpoint) for u in base_urls]
        headers = {"Content-Type": "application/json"}  # every call POSTs a JSON body
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # Plain-HTTP endpoints only (local servers) and no redirects followed: no TLS connection
        # can be made, so no certificate store is loaded (a noticeable part of start-up).
        tls = any(e.urls["chat/completions"].scheme != "http" for e in self._endpoints)
        self._clients = ClientPool(tls=tls, headers=headers, transport=transport,
                                   timeout=httpx.Timeout(deadline_s), follow_redirects=False)

    @classmethod
    def from_config(cls, config: OpenAIBackendConfig) -> OpenAIBackend:
        """Build from an :class:`OpenAIBackendConfig` (the registered factory of kind 'openai')."""
        if not config.model:
            raise BackendError("backend.model is required for the openai backend")
        return cls(config.base_urls, config.model, api_key=os.environ.get(config.api_key_env),
                   concurrency_per_endpoint=config.concurrency_per_endpoint,
                   deadline_s=config.deadline_s, extra_body=config.extra_body,
                   stream=config.stream)

    async def __aenter__(self) -> OpenAIBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._clients.aclose()

    def describe(self) -> dict[str, Any]:
        """Endpoints, model name, the cap on requests in flight and whether replies are streamed,
        for the run record."""
        return {"kind": self.name, "model": self.model,
                "base_urls": [e.base_url for e in self._endpoints],
                "concurrency_per_endpoint": self.concurrency_per_endpoint,
                "stream": self.stream}

    def _pick(self) -> _Endpoint:
        """The least-loaded endpoint whose breaker is closed; with none left, the run stops
        (:class:`~authpairs.backends.base.EndpointDownError`)."""
        usable = [e for e in self._endpoints if not e.breaker.is_open]
        if not usable:
            raise none_left([e.breaker for e in self._endpoints])
        return min(usable, key=lambda e: e.in_flight)

    async def preflight(self, *, check_model: bool = True) -> None:
        """Check every endpoint before a run: its models endpoint answers and lists the model
        (not checked with ``check_model=False``); see :mod:`authpairs.backends.preflight`.
        What the servers say the model is (its id and the path it was loaded from, where they
        name it) is kept in :attr:`served_names`."""
        for endpoint in self._endpoints:
            async with self._clients.client() as client:
                names = await check_models_endpoint(client, endpoint.base_url,
                                                    self.model if check_model else None)
            self.served_names += [name for name in names if name not in self.served_names]

    @contextlib.asynccontextmanager
    async def _slot(self, endpoint: _Endpoint) -> AsyncIterator[None]:
        """Hold one of ``endpoint``'s slots; the attempt's clock stops while waiting for it
        (the requests holding the slots are bounded by their own clocks)."""
        endpoint.in_flight += 1
        try:
            if endpoint.slots is None:
                yield
                return
            with liveness.paused():
                await endpoint.slots.acquire()
            try:
                yield
            finally:
                endpoint.slots.release()
        finally:
            endpoint.in_flight -= 1

    @contextlib.asynccontextmanager
    async def _clock(self, endpoint: _Endpoint) -> AsyncIterator[AttemptClock]:
        """The clock this request reports to: the running attempt's (inside a run), else one
        of its own with the backend's ``deadline_s``. A timeout -- the own clock expired, or no
        byte for httpx's read timeout -- or a failed connection is a :class:`TransportError`."""
        running = liveness.CURRENT.get()
        clock = running if running is not None else AttemptClock(self.deadline_s)
        try:
            async with contextlib.nullcontext() if running is not None else clock:
                yield clock
        except (TimeoutError, httpx.TimeoutException) as exc:
            endpoint.breaker.answered()  # slow, not down: today's retry rules
            raise TransportError(f"{endpoint.base_url}: {clock.timeout_message()}") from exc
        except httpx.TransportError as exc:
            raise counted_failure(endpoint.breaker, endpoint.base_url, exc) from exc

    async def post_json(self, path: str, payload: dict[str, Any]) -> tuple[Any, float, str]:
        """POST ``payload`` to ``path`` (``chat/completions`` or ``completions``) of the
        least-loaded endpoint, answered in one piece within the deadline (the whole reply is the
        only progress), with :meth:`complete`'s error rules; returns the JSON body, the latency
        and the endpoint (the agent's tool-calling chat, :mod:`authpairs.backends.tool_chat`,
        reads the body itself)."""
        endpoint = self._pick()
        async with self._slot(endpoint), self._clock(endpoint), \
                self._clients.client() as client:
            started = time.perf_counter()
            reply = await client.post(endpoint.urls[path], content=json.dumps(payload))
            elapsed = time.perf_counter() - started
        check_status(endpoint.base_url, reply, endpoint.breaker)
        return _json_body(endpoint, reply.content), elapsed, endpoint.base_url

    async def _post_streamed(self, path: str, payload: dict[str, Any],
                             max_tokens: int) -> tuple[Any, float, str]:
        """One streamed JSON POST (``stream: true``): each event is progress for the attempt's
        clock; returns the body the same request returns without streaming (assembled by
        :class:`StreamAssembler`), the latency and the endpoint."""
        endpoint = self._pick()
        payload = {**payload, "stream": True,
                   "stream_options": {"include_usage": True, **payload.get("stream_options", {})}}
        async with self._slot(endpoint), self._clock(endpoint) as clock, \
                self._clients.client() as client:
            started = time.perf_counter()
            # "Connection: close": llama.cpp's server closes the connection after a streamed
            # reply although it advertises keep-alive, and a request sent on that connection in
            # the meantime would fail without reaching it. A loopback connect costs nothing.
            async with client.stream("POST", endpoint.urls[path], content=json.dumps(payload),
                                     headers={"Connection": "close"}) as reply:
                if reply.status_code >= 400:
                    await reply.aread()
                check_status(endpoint.base_url, reply, endpoint.breaker)
                content, body = b"", None
                if not reply.headers.get("content-type", "").startswith("text/event-stream"):
                    content = await reply.aread()  # a server that ignores "stream": one body
                else:
                    assembler = StreamAssembler(raw=path == "completions",
                                                max_events=max_tokens + STREAM_EVENT_MARGIN)
                    try:
                        async for line in reply.aiter_lines():
                            if assembler.add_line(line):
                                clock.progress()
                        body = assembler.body()
                    except TransportError as exc:
                        raise TransportError(f"{endpoint.base_url}: {exc}") from exc
            elapsed = time.perf_counter() - started
        if body is None:
            body = _json_body(endpoint, content)
        return body, elapsed, endpoint.base_url

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """One completion from the least-loaded endpoint, within the deadline rule
        (:mod:`authpairs.backends.liveness`): streamed when the backend streams."""
        payload = build_payload(self.model, request, sampling, self.extra_body, self.param_names)
        path = completion_path(request)
        if self.stream:
            limit = payload.get("max_tokens")
            body, elapsed, base_url = await self._post_streamed(
                path, payload, limit if isinstance(limit, int) else sampling.max_tokens)
        else:
            body, elapsed, base_url = await self.post_json(path, payload)
        try:
            return parse_completion(body, latency_s=elapsed, endpoint=base_url)
        except TransportError as exc:
            raise TransportError(f"{base_url}: {exc}") from exc
