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

The server records every request it saw (``requests``) so tests can count retries, and the most
requests it held open at once (``peak_in_flight``).
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
                 answer: str = '{"decision": "ALLOW"}') -> None:
        self.script: deque[str] = deque(script or [])
        self.default = default
        self.answer = answer
        self.requests: list[str] = []
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
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
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
        await reader.readexactly(length)
        fault = self.script.popleft() if self.script else self.default
        self.requests.append(fault)
        kind, _, arg = fault.partition(":")
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._reply(writer, kind, arg)
        finally:
            self.in_flight -= 1

    async def _reply(self, writer: asyncio.StreamWriter, kind: str, arg: str) -> bool:
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
