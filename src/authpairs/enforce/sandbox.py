"""The per-run sandbox: a temporary directory with a SQLite database, files, Ed25519 keys and a
local HTTP server, started and stopped as a context manager.

Nothing outlives the ``with`` block: the server thread is joined, its port closed, the database
connection closed and (unless ``keep=True``) the directory removed.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sqlite3
import tempfile
from pathlib import Path

from authpairs.cases.effect_params import EffectParams
from authpairs.enforce import layout
from authpairs.enforce.httpserver import LocalHTTPServer
from authpairs.enforce.implementations import implementation
from authpairs.enforce.seeding import seed_global
from authpairs.processes import pid_alive


def default_parent() -> Path | None:
    """Where sandboxes go by default: ``$AUTHPAIRS_SANDBOX_DIR``, else ``/dev/shm`` (memory-backed,
    much faster to create and remove) when writable, else the system temp dir (None)."""
    configured = os.environ.get("AUTHPAIRS_SANDBOX_DIR")
    if configured:
        return Path(configured)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


PREFIX = "authpairs-sandbox-"
OWNER_FILE = ".owner"
"""Host name and process id of the process that created a sandbox (one per line)."""


log = logging.getLogger("authpairs.enforce")


def reclaim_stale(parent: Path | None = None) -> list[Path]:
    """Remove sandboxes whose creating process on this host is gone; returns what was removed.

    Only directories named ``authpairs-sandbox-*`` that hold an owner file naming this host and a
    dead process id are removed; anything else is left alone.
    """
    folder = Path(parent if parent is not None else (default_parent() or tempfile.gettempdir()))
    removed: list[Path] = []
    host = socket.gethostname()
    try:
        candidates = list(folder.glob(f"{PREFIX}*"))
    except OSError:
        return removed
    for path in candidates:
        try:
            owner_host, pid_text = path.joinpath(OWNER_FILE).read_text(
                encoding="utf-8").split("\n")[:2]
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if owner_host == host and pid != os.getpid() and not pid_alive(pid):
            shutil.rmtree(path, ignore_errors=True)
            log.info("removed stale sandbox %s (process %d is gone)", path, pid)
            removed.append(path)
    return removed


class Sandbox:
    """Local resources for one run. Use as ``with Sandbox() as sb: ...``.

    ``parent`` is where the temporary directory is created (default: :func:`default_parent`);
    ``keep`` leaves the directory in place after exit for inspection.
    """

    def __init__(self, parent: Path | None = None, keep: bool = False) -> None:
        self._parent = parent if parent is not None else default_parent()
        self._keep = keep
        self._root: Path | None = None
        self._db: sqlite3.Connection | None = None
        self.http: LocalHTTPServer | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Create the directory, schema, keys and global resources; start the HTTP server.

        Sandboxes left behind by killed processes (``kill -9``) are removed first.
        """
        if self._root is not None:
            raise RuntimeError("sandbox already started")
        reclaim_stale(self._parent)
        root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=self._parent)).resolve()
        self._root = root
        try:
            (root / OWNER_FILE).write_text(f"{socket.gethostname()}\n{os.getpid()}\n",
                                           encoding="utf-8")
            for base in (layout.OUTBOX, layout.DOCUMENTS, layout.SIGNATURES, layout.SITES,
                         layout.DOWNLOADS, layout.PUBLIC_KEYS):
                root.joinpath(*base).mkdir(mode=0o755, parents=True)
            root.joinpath(*layout.PRIVATE_KEYS).mkdir(mode=0o700)
            db = sqlite3.connect(root / layout.DB_NAME, check_same_thread=False,
                                 isolation_level="DEFERRED")
            self._db = db
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(layout.SCHEMA)
            seed_global(db, root)
            self.http = LocalHTTPServer(root)
            self.http.start()
            log.info("sandbox started at %s (HTTP on %s)", root, self.http.base_url)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server, close the database and remove the directory (unless kept)."""
        if self.http is not None:
            self.http.stop()
            self.http = None
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._root is not None and not self._keep:
            shutil.rmtree(self._root, ignore_errors=True)
            log.info("sandbox %s removed", self._root)
        elif self._root is not None:
            # A kept sandbox is for inspection: its private keys never outlive the run.
            shutil.rmtree(self._root.joinpath(*layout.PRIVATE_KEYS), ignore_errors=True)
        self._root = None

    # -- access ----------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        """The sandbox directory."""
        if self._root is None:
            raise RuntimeError("sandbox is not running")
        return self._root

    @property
    def db(self) -> sqlite3.Connection:
        """The executor-side read-write database connection."""
        if self._db is None:
            raise RuntimeError("sandbox is not running")
        return self._db

    @property
    def db_path(self) -> Path:
        """Path of the SQLite database."""
        return self.root / layout.DB_NAME

    @property
    def base_url(self) -> str:
        """Base URL of the local HTTP server."""
        if self.http is None:
            raise RuntimeError("sandbox is not running")
        return self.http.base_url

    # -- seeding ---------------------------------------------------------------------------
    def open_scope(self, case_id: str) -> str:
        """Register the scope of a case and return its name."""
        scope = layout.scope_for(case_id)
        self.db.execute("INSERT OR IGNORE INTO scopes (scope, case_id) VALUES (?, ?)",
                        (scope, case_id))
        self.db.commit()
        return scope

    def seed(self, effect_type: str, params: EffectParams, scope: str) -> None:
        """Create the resources ``params`` names in ``scope`` with their deterministic initial
        state, using the seeder registered for ``effect_type``."""
        implementation(effect_type).load_seeder()(self.db, self.root, params, scope)
        self.db.commit()
