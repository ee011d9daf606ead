"""A fake OpenAI-compatible server on 127.0.0.1 that injects faults (a real asyncio HTTP server).

Each request to ``/v1/chat/completions`` takes the next fault from a script (then ``default``):

* ``ok`` -- a clean answer (``answer`` text, usage counts);
* ``500`` / ``503`` -- that HTTP status; ``429:S`` -- HTTP 429 with ``Retry-After: S``;
* ``reset`` -- the connection is closed without a reply;
* ``hang`` -- the request is read and never answered;
* ``invalid`` -- a 200 reply whose body is not JSON;
* ``body:JSON`` -- a 200 reply with this exact JSON body (malformed shapes);
* ``trickle:S`` -- a clean answer sent a few bytes at a time over about S seconds;
* ``gather:N`` -- a clean answer once N such requests are waiting at the same time (so a client
  that cannot have N in flight never gets one).

Streamed replies (server-sent events, chunked, as vLLM and llama.cpp send them; ``ok`` and the
default also stream when the request asks ``stream: true``):

* ``stream:MS:N`` -- the answer in N pieces, one every MS milliseconds, then the finish, usage
  and ``[DONE]`` events;
* ``stall:K`` -- the first K events of the answer, then nothing more (the connection stays open);
* ``cut:K`` -- the first K events, then the connection is aborted mid-stream;
* ``flood:N`` -- N events with empty deltas before the answer (more than any output limit).

The server records every request it saw (``requests``) so tests can count retries, and the most
requests it held open at once (``peak_in_flight``). ``GET /v1/models`` lists ``models`` (default
``["m"]``, the model the tests name) without taking a fault from the script, as a run's preflight
check expects of an OpenAI-compatible server (``models=None``: it answers HTTP 404, as a server
without a models endpoint does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from typing import Any


def completion_body(text: str, finish: str = "stop") -> dict[str, Any]:
    """A well-formed chat-completions body."""
    return {"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}}


class FaultServer:
    """Use as ``async with FaultServer(["500", "ok"]) as server: server.base_url``."""

    def __init__(self, script: list[str] | None = None, *, default: str = "ok",
                 answer: str = '{"decision": "ALLOW"}',
                 close_after_stream: float | None = None,
                 models: list[str] | None = ["m"],  # noqa: B006 (never changed)
                 port: int = 0, roots: dict[str, str] | None = None) -> None:
        self.models = models
        self.roots = roots or {}
        """The path each model was loaded from, listed as ``root`` (as vLLM does)."""
        self.port = port
        """The port to listen on (0: a free one); a server restarted on the same port is the
        same endpoint to a client."""
        self.script: deque[str] = deque(script or [])
        self.default = default
        self.close_after_stream = close_after_stream
        """Close the connection this many seconds after each streamed reply, although it was
        not asked to and a next request may have arrived on it (as llama.cpp's server does,
        after advertising keep-alive)."""
        self.answer = answer
        self.requests: list[str] = []
        self.bodies: list[Any] = []
        """The JSON body of every request (None where it was not JSON)."""
        self.in_flight = 0
        self.peak_in_flight = 0
        self._gathered = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aenter__(self) -> FaultServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        raw = await reader.readexactly(length)
        if lines[0].startswith("GET "):
            if self.models is None or not lines[0].split()[1].endswith("/models"):
                await self._send(writer, 404, b'{"error": "not found"}')
            else:
                listed = {"object": "list", "data": [
                    {"id": m, "object": "model", **({"root": self.roots[m]}
                                                     if m in self.roots else {})}
                    for m in self.models]}
                await self._send(writer, 200, json.dumps(listed).encode())
            return True
        try:
            self.bodies.append(json.loads(raw))
        except ValueError:
            self.bodies.append(None)
        fault = self.script.popleft() if self.script else self.default
        self.requests.append(fault)
        kind, _, arg = fault.partition(":")
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._reply(writer, kind, arg)
        finally:
            self.in_flight -= 1

    def _streams(self) -> bool:
        body = self.bodies[-1] if self.bodies else None
        return isinstance(body, dict) and body.get("stream") is True

    async def _reply(self, writer: asyncio.StreamWriter, kind: str, arg: str) -> bool:
        if kind in ("stream", "stall", "cut", "flood") or (kind == "ok" and self._streams()):
            return await self._stream(writer, kind, arg)
        if kind == "gather":
            if self.in_flight >= int(arg):
                self._gathered.set()  # all of them were waiting at once: answer every one
            await self._gathered.wait()
            await self._send(writer, 200, json.dumps(completion_body(self.answer)).encode())
            return True
        if kind == "reset":
            writer.transport.abort()
            return False
        if kind == "hang":
            await asyncio.sleep(3600)
            return False
        if kind in ("500", "503"):
            await self._send(writer, int(kind), b'{"error": "injected"}')
        elif kind == "429":
            await self._send(writer, 429, b'{"error": "slow down"}', {"Retry-After": arg})
        elif kind == "invalid":
            await self._send(writer, 200, b"<html>not json")
        elif kind == "body":
            await self._send(writer, 200, arg.encode())
        elif kind == "trickle":
            body = json.dumps(completion_body(self.answer)).encode()
            await self._send(writer, 200, body, trickle_s=float(arg))
        else:
            await self._send(writer, 200, json.dumps(completion_body(self.answer)).encode())
        return True

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, status: int, body: bytes,
                    headers: dict[str, str] | None = None, trickle_s: float = 0.0) -> None:
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{extra}\r\n").encode()
        writer.write(head)
        if trickle_s <= 0:
            writer.write(body)
            await writer.drain()
            return
        pieces = [body[i:i + 8] for i in range(0, len(body), 8)]
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(trickle_s / len(pieces))

    def stream_events(self, pieces: int = 4) -> list[dict[str, Any]]:
        """The events a streamed clean answer consists of (before ``[DONE]``): the role, the
        answer in ``pieces`` parts, the finish reason, then the usage counts."""
        body = completion_body(self.answer)
        usage = body["usage"]
        step = max(1, -(-len(self.answer) // pieces))
        parts = [self.answer[i:i + step] for i in range(0, len(self.answer), step)]
        chunk = {"id": "x", "object": "chat.completion.chunk"}
        events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                               "content": None},
                                         "finish_reason": None}]}]
        events += [{**chunk, "choices": [{"index": 0, "delta": {"content": part},
                                          "finish_reason": None}]} for part in parts]
        events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        events.append({**chunk, "choices": [], "usage": usage})
        return events

    async def _stream(self, writer: asyncio.StreamWriter, kind: str, arg: str) -> bool:
        gap_s, pieces = 0.0, 4
        if kind == "stream":
            gap_ms, _, count = arg.partition(":")
            gap_s, pieces = float(gap_ms) / 1000.0, int(count or 4)
        events = [json.dumps(e) for e in self.stream_events(pieces)] + ["[DONE]"]
        if kind == "flood":
            empty = {"id": "x", "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": None}]}
            events = [json.dumps(empty)] * int(arg) + events
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for number, event in enumerate(events):
            if kind in ("stall", "cut") and number == int(arg):
                if kind == "cut":
                    await writer.drain()
                    writer.transport.abort()
                    return False
                await asyncio.sleep(3600)
            data = f"data: {event}\n\n".encode()
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
            if gap_s and 0 < number < len(events) - 3:
                await asyncio.sleep(gap_s)  # between the answer's pieces
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        if self.close_after_stream is None:
            return True
        await asyncio.sleep(self.close_after_stream)
        return False
