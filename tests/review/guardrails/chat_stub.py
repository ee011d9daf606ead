"""A local OpenAI-compatible chat-completions stub on 127.0.0.1 that records what it was sent.

``ChatStub(answer)`` answers each ``POST .../chat/completions`` with ``answer(body)`` -> (content,
finish_reason), and keeps every request body in ``bodies``; ``GET .../models`` lists ``models``
(the names the tests use), as a run's preflight check expects. A real HTTP server on a thread, so
the OpenAI backend, NeMo's action and the whole run go through their real code paths.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.loopback import answer_models

Answer = Callable[[dict[str, Any]], tuple[str, str]]


def last_message(body: dict[str, Any]) -> str:
    """The content of the request's last chat message."""
    messages = body.get("messages") or [{"content": ""}]
    return str(messages[-1].get("content", ""))


class ChatStub:
    """Use as ``with ChatStub(answer) as stub: stub.base_url``."""

    def __init__(self, answer: Answer, models: tuple[str, ...] = ("stub", "stub-model")) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                answer_models(self, models)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.bodies.append(body)
                content, finish = stub.answer(body)
                data = json.dumps({
                    "id": "stub", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": finish,
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 2,
                              "total_tokens": 102}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ChatStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
