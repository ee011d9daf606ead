"""The sandbox's local HTTP server: deployed sites and downloads on 127.0.0.1 (ephemeral port).

Routes (everything else is 404):

* ``GET /sites/<scope>/<service>/`` -- the live site. ``release.json`` in the service directory
  holds the canary ``percentage``; a request whose ``X-Canary-Bucket`` header (0..99, default 0)
  is below it gets ``canary.html``, any other request ``stable.html``. The response names the
  version served in ``X-Release-Version``.
* ``GET /downloads/<scope>/<recipient>/<file_name>`` -- a published download.
* ``GET /health`` -- ``ok``.

Files are read through :mod:`authpairs.enforce.safepath` (no links followed). The server runs in
one thread per run; :meth:`LocalHTTPServer.stop` shuts it down, closes the socket and joins every
thread it started.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from authpairs.enforce import layout
from authpairs.enforce.safepath import ContainmentError, check_component, read_file

MAX_SERVED_BYTES = 4 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = False

    def __init__(self, root: Path) -> None:
        self.sandbox_root = root
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    def _send(self, status: HTTPStatus, body: bytes, headers: dict[str, str] | None = None,
              content_type: str = "application/octet-stream") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        """Same as GET without a body."""
        self.do_GET()

    def do_GET(self) -> None:
        """Serve a site, a download or the health check."""
        path = self.path.split("?", 1)[0]
        parts = [p for p in path.split("/") if p]
        try:
            for part in parts:
                check_component(part)
            if parts == ["health"]:
                self._send(HTTPStatus.OK, b"ok", content_type="text/plain")
            elif len(parts) == 3 and parts[0] == "sites" and path.endswith("/"):
                self._site(parts[1], parts[2])
            elif len(parts) == 4 and parts[0] == "downloads":
                body = read_file(self.server.sandbox_root,
                                 (*layout.DOWNLOADS, *parts[1:]), MAX_SERVED_BYTES)
                self._send(HTTPStatus.OK, body)
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", content_type="text/plain")
        except (FileNotFoundError, NotADirectoryError):
            self._send(HTTPStatus.NOT_FOUND, b"not found", content_type="text/plain")
        except (ContainmentError, ValueError, OSError) as exc:
            self._send(HTTPStatus.FORBIDDEN, f"refused: {exc}".encode(), content_type="text/plain")

    def _site(self, scope: str, service: str) -> None:
        root = self.server.sandbox_root
        base = layout.site_dir(scope, service)
        release = json.loads(read_file(root, (*base, layout.RELEASE_FILE), 65536))
        try:
            bucket = int(self.headers.get(layout.CANARY_HEADER, "0"))
        except ValueError:
            bucket = 0
        percentage = int(release.get("percentage", 0))
        if bucket < percentage:
            page, version = layout.CANARY_PAGE, str(release["version"])
        else:
            page, version = layout.STABLE_PAGE, str(release["stable_version"])
        body = read_file(root, (*base, page), MAX_SERVED_BYTES)
        self._send(HTTPStatus.OK, body, {layout.VERSION_HEADER: version},
                   content_type="text/html; charset=utf-8")


class LocalHTTPServer:
    """A sandbox HTTP server on 127.0.0.1 with an ephemeral port, run in a background thread."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._server: _Server | None = None
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._server is None:
            raise RuntimeError("server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Bind the socket and start serving in a background thread."""
        self._server = _Server(self._root)
        self.thread = threading.Thread(target=self._server.serve_forever,
                                       kwargs={"poll_interval": 0.05},
                                       name=f"authpairs-sandbox-http-{self.port}", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop serving, close the socket and join the serving and handler threads."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self.thread is not None:
            self.thread.join(timeout=10)
        self._server = None
