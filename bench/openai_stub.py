"""A tiny OpenAI-compatible chat-completions stub on 127.0.0.1 (raw asyncio, HTTP/1.1 keep-alive).

Every POST answers one fixed completion (a clean direct-interface decision) with token usage,
after ``--latency-ms`` milliseconds (default 0: at once; a guardrail model takes 50 ms to
seconds), or, with ``--jitter F``, after a latency drawn uniformly from (1 - F) to (1 + F) times
that (seeded: the same draws every run); GET /health and /v1/models answer too. It does no work
per request beyond reading the body, so a benchmark against it measures the clients. Prints
``PORT <n>`` once listening; stops on SIGTERM.

    python bench/openai_stub.py [--port 0] [--latency-ms 0] [--jitter 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal

ANSWER = json.dumps({
    "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": "stub",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": '{"decision": "BLOCK"}'}}],
    "usage": {"prompt_tokens": 400, "completion_tokens": 7, "total_tokens": 407},
}).encode()
MODELS = json.dumps({"object": "list", "data": [{"id": "stub", "object": "model"}]}).encode()


def _response(body: bytes, status: str = "200 OK") -> bytes:
    head = (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n")
    return head.encode() + body


LATENCY_S = 0.0
"""How long each POST waits before it is answered (``--latency-ms``)."""
JITTER = 0.0
"""How far each wait may stray from ``LATENCY_S``, as a fraction of it (``--jitter``)."""
_DRAWS = random.Random(0)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve requests on one connection until the client closes it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length:
                await reader.readexactly(length)
            if method == "POST":
                if LATENCY_S:
                    await asyncio.sleep(LATENCY_S * _DRAWS.uniform(1 - JITTER, 1 + JITTER))
                writer.write(_response(ANSWER))
            elif path.endswith("/models") or path.endswith("/health"):
                writer.write(_response(MODELS))
            else:
                writer.write(_response(b"{}", "404 Not Found"))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int) -> None:
    """Listen on 127.0.0.1 until SIGTERM/SIGINT."""
    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    """Parse arguments and serve."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--jitter", type=float, default=0.0)
    args = parser.parse_args()
    if not 0 <= args.jitter < 1:
        parser.error("--jitter must be at least 0 and below 1")
    global LATENCY_S, JITTER
    LATENCY_S = args.latency_ms / 1000.0
    JITTER = args.jitter
    asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()
