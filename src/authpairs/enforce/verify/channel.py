"""The verifiers' own read channel: a read-only SQLite connection, link-refusing file reads and
an HTTP client for the local server.

It shares no code with the executors: rows are read through a separate ``mode=ro`` connection,
files are read with their own ``lstat``/``O_NOFOLLOW`` checks, and served content is fetched over
HTTP with httpx.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from authpairs.errors import EnforcementError


class ObservationError(EnforcementError):
    """The verifier could not read a resource back (an unsafe file type, a server error)."""


class ReadChannel:
    """Read-only access to the sandbox for verifiers. Close it with :meth:`close`."""

    def __init__(self, root: Path, db_path: Path, base_url: str) -> None:
        self.root = root
        self._db = sqlite3.connect(f"file:{quote(str(db_path))}?mode=ro", uri=True,
                                   check_same_thread=False, isolation_level=None)
        # Plain HTTP to 127.0.0.1 only: no TLS context is needed (verify=False skips loading CAs).
        self._http = httpx.Client(base_url=base_url, timeout=10.0, trust_env=False, verify=False)

    def close(self) -> None:
        """Close the database connection and the HTTP client (and its keep-alive sockets)."""
        self._http.close()
        self._db.close()

    # -- database ----------------------------------------------------------------------------
    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only, parameterized query."""
        return [tuple(r) for r in self._db.execute(sql, tuple(args)).fetchall()]

    # -- files -------------------------------------------------------------------------------
    def read(self, parts: Sequence[str], limit: int = 1 << 22) -> bytes | None:
        """File bytes, or None when absent. Links or non-regular files raise ObservationError."""
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise ObservationError(f"unsafe path component {part!r}")
        probe = self.root
        for part in parts:
            probe = probe / part
            try:
                st = os.lstat(probe)
            except FileNotFoundError:
                return None
            if stat.S_ISLNK(st.st_mode):
                raise ObservationError(f"{'/'.join(parts)}: symbolic link at {probe.name!r}")
        if not stat.S_ISREG(st.st_mode):
            raise ObservationError(f"{'/'.join(parts)} is not a regular file")
        if st.st_size > limit:
            raise ObservationError(f"{'/'.join(parts)} is larger than {limit} bytes")
        fd = os.open(probe, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            return fh.read()

    def file_state(self, parts: Sequence[str]) -> dict[str, Any]:
        """``{"exists": False}`` or ``{"exists": True, "size": n, "sha256": hex}``."""
        data = self.read(parts)
        if data is None:
            return {"exists": False}
        return {"exists": True, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}

    # -- HTTP --------------------------------------------------------------------------------
    def get(self, url_path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        """GET a path from the local server."""
        try:
            return self._http.get(url_path, headers=headers)
        except httpx.HTTPError as exc:
            raise ObservationError(f"GET {url_path}: {exc}") from exc
