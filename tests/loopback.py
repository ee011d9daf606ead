"""A JSON HTTP service on 127.0.0.1 for tests, in a thread: each POST is answered by a function.

``with json_service(reply) as url:`` serves until the block ends; ``reply(path, body)`` gets the
request path and raw body and returns ``(status, payload)``, where a payload that is not ``str``
is sent as JSON and a ``str`` as it is (so tests can send garbage). ``models``: names that
``GET .../models`` lists, as an OpenAI-compatible server's models endpoint does (a run's
preflight check asks it); without them a GET is answered 501, as Python's server does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = Callable[[str, bytes], tuple[int, object]]


def answer_models(handler: BaseHTTPRequestHandler, models: Sequence[str]) -> None:
    """Answer a GET as an OpenAI-compatible models endpoint listing ``models`` (404 for any other
    path)."""
    if not handler.path.endswith("/models"):
        handler.send_error(404)
        return
    data = json.dumps({"object": "list", "data": [
        {"id": name, "object": "model"} for name in models]}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def json_service(reply: Reply, models: tuple[str, ...] = ()) -> Iterator[str]:
    """Serve ``reply`` on a free 127.0.0.1 port; yields ``http://127.0.0.1:PORT``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not models:
                self.send_error(501)
                return
            answer_models(self, models)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, payload = reply(self.path, body)
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
