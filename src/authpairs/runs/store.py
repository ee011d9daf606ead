"""SQLite record store (WAL): runs, case records, attempts and per-case claims.

* **Durable**: what a transaction committed survives a process killed mid-run (even with
  ``kill -9``); ``PRIMARY KEY(run_id, case_id)`` makes duplicates impossible.
* **Shared**: any number of processes may read; several ``authpairs run`` processes may work on
  the same run -- each case is *claimed* (:meth:`RecordStore.claim_many`) before it is reviewed,
  so no case is reviewed twice, and a claim of a dead process or past its lease is taken over.
* **Tamper-evident**: every case record and attempt is stored as canonical text with its SHA-256,
  chained per run (:mod:`authpairs.runs.chain`); the run header holds the chain head and length
  and a seal over both (schema version 3).
* **Versioned**: the schema version is the file's ``PRAGMA user_version``; a version 2 file is
  read as it is (its header has no seal) and migrated when it is opened for writing; an older or
  newer file is refused with a clear message. Reading never creates or changes a file
  (``readonly=True`` opens it with ``mode=ro``, and as immutable when the file or its folder is
  not writable).
"""

from __future__ import annotations

import heapq
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from authpairs.errors import RecordsError
from authpairs.processes import pid_alive
from authpairs.runs.chain import GENESIS_KIND, link, read_hashed, seal, text_sha256
from authpairs.runs.records import AgentCall, AttemptRecord, CaseRecord, RunInfo, stored_json

SCHEMA_VERSION = 5
"""Version of the records schema this code writes (``PRAGMA user_version``).

1 (stored as 0): the unversioned files before hash chains (no hashes, no expected case ids).
2: SHA-256 chain per run, expected case ids in the run header, per-case claims.
3: the run header's ``seal_sha256`` covers its header hash, chain head and chain length.
4: the ``agent_calls`` table (one row per tool call an agent made in ``authpairs mcp serve``).
5: the ``agent_trajectories`` table (one row per case of ``authpairs run --agent``: the agent's
   messages)."""

READABLE_VERSIONS = (2, 3, 4, 5)
"""Versions this code reads: 2 as it is (no seal to check), 3 and later in full. A version 2
file opened for writing is migrated to 3 (:func:`_migrate_2_to_3`)."""

_ADDED_TABLES = {
    4: """CREATE TABLE agent_calls (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    call_no INTEGER NOT NULL,
    record_json TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, call_no)
)""",
    5: """CREATE TABLE agent_trajectories (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    record_json TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
)""",
}
"""The table each schema version after 3 added, by version (created by a migration in an older
file: :meth:`RecordStore._check_schema`)."""

_TABLES = (
    """CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL,
    config_sha256 TEXT NOT NULL,
    manifest_json TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    template_json TEXT NOT NULL,
    versions_json TEXT NOT NULL,
    expected_json TEXT NOT NULL,
    header_sha256 TEXT NOT NULL,
    chain_head TEXT NOT NULL,
    chain_length INTEGER NOT NULL,
    seal_sha256 TEXT NOT NULL
)""",
    """CREATE TABLE case_records (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    dispatch TEXT NOT NULL,
    label TEXT NOT NULL,
    record_json TEXT NOT NULL,
    seq INTEGER NOT NULL,
    content_sha256 TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
)""",
    """CREATE TABLE attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    attempt_no INTEGER NOT NULL,
    kind TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    record_json TEXT NOT NULL,
    seq INTEGER NOT NULL,
    content_sha256 TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL
)""",
    """CREATE TABLE claims (
    run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (run_id, case_id)
)""",
    "CREATE INDEX attempts_by_input ON attempts(input_sha256)",
    "CREATE INDEX attempts_by_case ON attempts(run_id, case_id)",
    "CREATE UNIQUE INDEX attempts_by_seq ON attempts(run_id, seq)",
    "CREATE UNIQUE INDEX cases_by_seq ON case_records(run_id, seq)",
    *_ADDED_TABLES.values(),
)

_HEADER_COLUMNS = ("run_id", "created_at", "config_json", "config_sha256", "manifest_json",
                   "manifest_sha256", "template_json", "versions_json", "expected_json")

T = TypeVar("T")

#: How long start-up waits out ``database is locked`` from other processes, in seconds.
LOCK_PATIENCE_S = 60.0


class RecordStoreError(RecordsError):
    """A record store conflict, e.g. reusing a run id with a different configuration."""


class RecordsVersionError(RecordsError):
    """The records file was written by an older or newer schema version."""


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    """Add the header seal to a version 2 file: each run's seal over its stored header hash,
    chain head and length (inside the caller's transaction)."""
    conn.execute("ALTER TABLE runs ADD COLUMN seal_sha256 TEXT NOT NULL DEFAULT ''")
    rows = conn.execute("SELECT run_id, header_sha256, chain_head, chain_length FROM runs")
    conn.executemany("UPDATE runs SET seal_sha256=? WHERE run_id=?",
                     [(seal(str(h), str(head), int(n)), run_id)
                      for run_id, h, head, n in rows.fetchall()])
    conn.execute("PRAGMA user_version=3")


M = TypeVar("M", bound=BaseModel)


def read_record(model: type[M], text: str) -> M:
    """A stored record (ASCII-only canonical JSON) as ``model``.

    pydantic's JSON reader refuses an escaped lone surrogate (``\\ud800``), which records hold
    whenever a model or guardrail returned one; such text is decoded by the json module, which
    keeps it, and validated from the decoded value.
    """
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        if not any(error["type"] == "json_invalid" for error in exc.errors()):
            raise
    return model.model_validate(json.loads(text))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def header_sha256(row: dict[str, Any]) -> str:
    """SHA-256 of a run header's stored columns (the genesis of the run's chain)."""
    return text_sha256(_dumps({k: row[k] for k in _HEADER_COLUMNS}))


def changed_keys(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The keys whose values differ between ``old`` and ``new`` (or that only one has), sorted."""
    return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


def _patiently(action: Callable[[], T], what: str) -> T:
    """Run ``action``, waiting out ``database is locked`` from other processes."""
    deadline = time.monotonic() + LOCK_PATIENCE_S
    delay = 0.02
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            locked = any(word in str(exc).lower() for word in ("locked", "busy"))
            if not locked or time.monotonic() > deadline:
                raise RecordsError(f"{what}: {exc}") from exc
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def _rows_for_cases(conn: sqlite3.Connection, select: str, run_id: str,
                    case_ids: list[str]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``select`` (``SELECT ... FROM table``) for ``case_ids`` of ``run_id``, a few
    hundred ids per query (well under SQLite's limit on bound variables)."""
    for start in range(0, len(case_ids), 500):
        chunk = case_ids[start:start + 500]
        yield from conn.execute(
            f"{select} WHERE run_id=? AND case_id IN ({','.join('?' * len(chunk))})",
            (run_id, *chunk))


def writable(path: Path) -> bool:
    """True when this process may write ``path`` and its folder (else SQLite must open the file
    as immutable: it could not create the lock and WAL side files)."""
    return os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK)


def wal_pending(path: Path) -> bool:
    """True when ``path`` has a non-empty WAL file beside it (commits not yet copied into the
    file, e.g. after a writer was killed): an immutable open would not see them, so a reader
    opens it ``mode=ro`` and SQLite reads the WAL through the existing side files."""
    wal = Path(f"{path.resolve()}-wal")
    try:
        return wal.stat().st_size > 0
    except OSError:
        return False


class RecordStore:
    """Append-only SQLite store for run records.

    ``readonly=True`` opens an existing file for reading only (score, compare, export, audit);
    it works on read-only files and never creates one.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.schema_version = SCHEMA_VERSION
        """The file's schema version (2 for an old file read as it is)."""
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}:{time.time_ns()}"
        self.written_chains: dict[str, tuple[str, int]] = {}
        """Runs this store created, with the chain head and length it last committed, while it
        wrote every entry of their chains itself (no other writer appended in between, nothing
        rolled back). A reader in the same process may then take a run's records as it wrote
        them when the header still ends there (``authpairs.analysis.runref.check_verified``)."""
        try:
            self._conn = self._connect()
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            raise RecordsError(f"{self.path}: not a usable records file ({exc})") from exc

    # -- opening ----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self.readonly:
            if not self.path.is_file():
                raise RecordsError(f"{self.path}: records file not found")
            uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            if not writable(self.path) and not wal_pending(self.path):
                uri += "&immutable=1"
            return sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordsError(f"{self.path}: cannot create the records folder: {exc}") from exc
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                               check_same_thread=False)
        _patiently(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone(),
                   f"{self.path}: setting WAL mode")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint (copy the WAL into the file, with fsync) every 32 MiB instead of 4 MiB:
        # fewer fsyncs in a fast run; the last connection to close checkpoints the rest.
        conn.execute("PRAGMA wal_autocheckpoint=8192")
        return conn

    def _check_schema(self) -> None:
        def inspect() -> tuple[int, set[str]]:
            version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            tables = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            return version, tables

        if self.readonly:
            version, tables = inspect()
            self._check_version(version, tables)
            self.schema_version = version
            return

        def create() -> None:
            with self.transaction():
                version, tables = inspect()
                if version == 0 and not tables:
                    for statement in _TABLES:
                        self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    return
                self._check_version(version, tables)
                if version == 2:
                    _migrate_2_to_3(self._conn)
                for added in range(max(version, 3) + 1, SCHEMA_VERSION + 1):
                    self._conn.execute(_ADDED_TABLES[added])
                    self._conn.execute(f"PRAGMA user_version={added}")

        _patiently(create, f"{self.path}: preparing the records file")

    def _check_version(self, version: int, tables: set[str]) -> None:
        if version in READABLE_VERSIONS and "runs" in tables:
            return
        if version == 0 and not tables:
            raise RecordsError(f"{self.path}: empty file, not a records file")
        if version == 0:
            raise RecordsVersionError(
                f"{self.path}: records schema version 1 (unversioned, before hash chains); this "
                f"authpairs reads version {READABLE_VERSIONS[0]} and later (up to "
                f"{SCHEMA_VERSION}). Re-run the runs into a new records "
                "file, or read this one with the authpairs release that wrote it")
        if version > SCHEMA_VERSION:
            raise RecordsVersionError(
                f"{self.path}: records schema version {version} is newer than this authpairs "
                f"(version {SCHEMA_VERSION}); upgrade authpairs to read it")
        raise RecordsVersionError(
            f"{self.path}: records schema version {version} is older than this authpairs "
            f"(version {SCHEMA_VERSION}) and has no migration")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection (for audits and tests)."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An explicit write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error)."""
        if self.readonly:
            raise RecordsError(f"{self.path}: opened read-only")
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            self.written_chains.clear()  # what this store wrote is no longer known for certain
            raise
        try:
            self._conn.execute("COMMIT")
        except BaseException:
            self.written_chains.clear()
            raise

    # -- runs -------------------------------------------------------------------------------
    def open_run(self, info: RunInfo) -> RunInfo:
        """Create the run, or return the stored one when the same configuration resumes it.

        Raises :class:`RecordStoreError` when the run id exists with another configuration,
        another dataset manifest, another set of expected cases, or another rendering (template
        hashes, including an interface's declared rendering: the same configuration rendered by
        a version whose requests or parsing differ). Two processes starting the
        same run at once both succeed: the header is inserted once, atomically.
        """
        row = {
            "run_id": info.run_id, "created_at": info.created_at,
            "config_json": _dumps(info.config), "config_sha256": info.config_sha256,
            "manifest_json": _dumps(info.manifest), "manifest_sha256": info.manifest_sha256,
            "template_json": _dumps(info.template_sha256), "versions_json": _dumps(info.versions),
            "expected_json": _dumps(sorted(info.expected_case_ids))}
        head = header_sha256(row)

        def insert() -> None:
            with self.transaction() as conn:
                genesis = link(head, GENESIS_KIND, head)
                created = conn.execute(
                    f"INSERT OR IGNORE INTO runs ({', '.join(_HEADER_COLUMNS)}, header_sha256, "
                    "chain_head, chain_length, seal_sha256) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*(row[c] for c in _HEADER_COLUMNS), head, genesis, 0,
                     seal(head, genesis, 0))).rowcount == 1
            if created:
                self.written_chains[info.run_id] = (genesis, 0)

        _patiently(insert, f"{self.path}: writing the header of run '{info.run_id}'")
        existing = self.get_run(info.run_id)
        assert existing is not None
        changed = changed_keys(existing.template_sha256, info.template_sha256)
        for differs, how in (
                (existing.config_sha256 != info.config_sha256, "with a different configuration "
                 f"({existing.config_sha256[:12]} != {info.config_sha256[:12]})"),
                (existing.manifest_sha256 != info.manifest_sha256,
                 "for a different dataset manifest"),
                (sorted(existing.expected_case_ids) != sorted(info.expected_case_ids),
                 "for a different set of cases (split or limit changed)"),
                (bool(changed), "rendered another way (templates or rendering changed since it "
                 f"started: {', '.join(changed)}); its records and new ones would mix two "
                 "renderings under one run id")):
            if differs:
                raise RecordStoreError(f"run '{info.run_id}' already exists in {self.path} {how}; "
                                       "choose another --run-id")
        return existing

    def run_row(self, run_id: str) -> dict[str, Any] | None:
        """The stored header columns of a run (for audits), or None."""
        cur = self._conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,))
        row = cur.fetchone()
        if row is None:
            return None
        return {d[0]: v for d, v in zip(cur.description, row, strict=True)}

    def get_run(self, run_id: str) -> RunInfo | None:
        """The stored run metadata, or None."""
        row = self.run_row(run_id)
        if row is None:
            return None
        try:
            return RunInfo(
                run_id=row["run_id"], created_at=row["created_at"],
                config=json.loads(row["config_json"]), config_sha256=row["config_sha256"],
                manifest=json.loads(row["manifest_json"]),
                manifest_sha256=row["manifest_sha256"],
                template_sha256=json.loads(row["template_json"]),
                versions=json.loads(row["versions_json"]),
                expected_case_ids=json.loads(row["expected_json"]),
                chain_head=row["chain_head"], chain_length=row["chain_length"])
        except (ValueError, TypeError) as exc:
            raise RecordsError(f"{self.path}: run '{run_id}': unreadable header: {exc}") from exc

    def list_runs(self) -> list[RunInfo]:
        """All runs in creation order."""
        ids = [r[0] for r in self._conn.execute("SELECT run_id FROM runs ORDER BY created_at")]
        return [run for rid in ids if (run := self.get_run(rid)) is not None]

    # -- claims -----------------------------------------------------------------------------
    def claim_many(self, run_id: str, case_ids: list[str], lease_s: float) -> list[str]:
        """Claim cases for this store's owner in one transaction; returns the ids this owner now
        holds, in the order given: not those recorded or claimed by a live owner. A claim whose
        process is gone (same host) or whose lease ran out is taken over."""
        host = socket.gethostname()

        def attempt() -> list[str]:
            now = time.time()
            with self.transaction() as conn:
                recorded = self._recorded(conn, [(run_id, c) for c in case_ids])
                # held by another owner that is still live: its lease has not run out and its
                # process is on another host or still running on this one
                held = {str(case_id) for case_id, owner, held_on, pid, expires in _rows_for_cases(
                            conn, "SELECT case_id, owner, host, pid, expires FROM claims",
                            run_id, case_ids)
                        if str(owner) != self.owner and float(expires) > now
                        and (str(held_on) != host or pid_alive(int(pid)))}
                claimed = [case_id for case_id in case_ids
                           if (run_id, case_id) not in recorded and case_id not in held]
                conn.executemany("INSERT OR REPLACE INTO claims VALUES (?,?,?,?,?,?)",
                                 [(run_id, case_id, self.owner, host, os.getpid(),
                                   now + lease_s) for case_id in claimed])
            return claimed

        what = f"case '{case_ids[0]}'" if len(case_ids) == 1 else f"{len(case_ids)} cases"
        return _patiently(attempt, f"{self.path}: claiming {what}")

    def release_all(self, run_id: str) -> None:
        """Drop every claim this owner still holds in ``run_id``: the run stopped, and what it
        had claimed but not recorded is free for the next invocation, even in this process."""
        _patiently(lambda: self._conn.execute(
            "DELETE FROM claims WHERE run_id=? AND owner=?", (run_id, self.owner)),
            f"{self.path}: releasing the claims of run '{run_id}'")

    # -- records ----------------------------------------------------------------------------
    def _append(self, conn: sqlite3.Connection, run_id: str,
                entries: list[tuple[str, BaseModelLike]]) -> None:
        """Append entries to the run's chain inside the caller's transaction."""
        row = conn.execute("SELECT chain_head, chain_length, header_sha256 FROM runs "
                           "WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            raise RecordStoreError(f"{self.path}: no run '{run_id}' (open it first)")
        head, length, header = str(row[0]), int(row[1]), str(row[2])
        mine = self.written_chains.pop(run_id, None) == (head, length)  # every entry is ours
        cases: list[tuple[object, ...]] = []
        attempts: list[tuple[object, ...]] = []
        for kind, record in entries:
            text = stored_json(record)
            content = text_sha256(text)
            head = link(head, kind, content)
            length += 1
            if kind == "case":
                assert isinstance(record, CaseRecord)
                cases.append(
                    (record.run_id, record.case_id, record.input_sha256, record.status.value,
                     record.decision.value if record.decision else None, record.dispatch.value,
                     record.label, text, length, content, head))
            else:
                assert isinstance(record, AttemptRecord)
                attempts.append(
                    (record.run_id, record.case_id, record.attempt_no, record.kind,
                     record.input_sha256, text, length, content, head))
        conn.executemany("INSERT INTO case_records VALUES (?,?,?,?,?,?,?,?,?,?,?)", cases)
        conn.executemany(
            "INSERT INTO attempts (run_id, case_id, attempt_no, kind, input_sha256, "
            "record_json, seq, content_sha256, chain_sha256) VALUES (?,?,?,?,?,?,?,?,?)",
            attempts)
        conn.execute("UPDATE runs SET chain_head=?, chain_length=?, seal_sha256=? WHERE run_id=?",
                     (head, length, seal(header, head, length), run_id))
        if mine:  # kept only if the transaction commits (a rollback forgets every run)
            self.written_chains[run_id] = (head, length)

    @staticmethod
    def _recorded(conn: sqlite3.Connection,
                  keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of ``keys`` (run id, case id) already have a case record: one query per run."""
        by_run: dict[str, list[str]] = {}
        for run_id, case_id in keys:
            by_run.setdefault(run_id, []).append(case_id)
        return {(run_id, str(row[0])) for run_id, case_ids in by_run.items()
                for row in _rows_for_cases(conn, "SELECT case_id FROM case_records", run_id,
                                           case_ids)}

    def add_case(self, record: CaseRecord, attempts: list[AttemptRecord]) -> bool:
        """Store one scored case with its attempts atomically. Returns False (and stores nothing)
        when the case already has a record in this run."""
        return self.add_cases([(record, attempts)])[0]

    def add_cases(self, items: Sequence[tuple[CaseRecord | None, list[AttemptRecord]]]
                  ) -> list[bool]:
        """Store several cases with their attempts in one transaction (all or none), in the
        order given, and free their claims; one flag per item. A scored case is stored as
        :meth:`add_case` would (False: it already had a record, and nothing of it was stored);
        of a case without a record (its infrastructure retries ran out) only the attempts are
        stored (False)."""
        if not items:
            return []

        def write() -> list[bool]:
            stored: list[bool] = []
            entries: dict[str, list[tuple[str, BaseModelLike]]] = {}  # per run, in order
            keys: set[tuple[str, str]] = set()
            with self.transaction() as conn:
                recorded = self._recorded(conn, [(r.run_id, r.case_id) for r, _ in items if r])
                for record, attempts in items:
                    first = attempts[0] if record is None else record
                    key = (first.run_id, first.case_id)
                    if record is not None and (key in keys or key in recorded):
                        stored.append(False)
                        continue
                    keys.add(key)
                    chain = entries.setdefault(first.run_id, [])
                    if record is not None:
                        chain.append(("case", record))
                    chain += [("attempt", a) for a in attempts]
                    stored.append(record is not None)
                for run_id, run_entries in entries.items():
                    self._append(conn, run_id, run_entries)
                conn.executemany("DELETE FROM claims WHERE run_id=? AND case_id=?", keys)
            return stored

        first = items[0][0] or items[0][1][0]
        what = f"case '{first.case_id}'" if len(items) == 1 else f"{len(items)} cases"
        return _patiently(write, f"{self.path}: storing {what}")

    def add_attempts(self, attempts: list[AttemptRecord]) -> None:
        """Store attempts that produced no case record (exhausted infrastructure retries)."""
        if not attempts:
            return

        def write() -> None:
            with self.transaction() as conn:
                self._append(conn, attempts[0].run_id, [("attempt", a) for a in attempts])

        _patiently(write, f"{self.path}: storing attempts of '{attempts[0].case_id}'")

    def done_case_ids(self, run_id: str) -> set[str]:
        """Ids of cases that already have a record in ``run_id``."""
        rows = self._conn.execute("SELECT case_id FROM case_records WHERE run_id=?", (run_id,))
        return {r[0] for r in rows}

    def case_records(self, run_id: str) -> list[CaseRecord]:
        """All case records of a run, ordered by case id."""
        return list(self.iter_case_records(run_id))

    def iter_case_records(self, run_id: str) -> Iterator[CaseRecord]:
        """The case records of a run one at a time, ordered by case id (a long run is read in
        constant memory)."""
        rows = self._conn.execute(
            "SELECT case_id, record_json FROM case_records WHERE run_id=? ORDER BY case_id",
            (run_id,))
        for case_id, text in rows:
            try:
                yield read_record(CaseRecord, text)
            except ValueError as exc:
                raise RecordsError(f"{self.path}: run '{run_id}', case '{case_id}': unreadable "
                                   f"record ({str(exc).splitlines()[0]}); run 'authpairs audit'"
                                   ) from exc

    def attempts(self, run_id: str) -> list[AttemptRecord]:
        """Attempts of a run, in insertion order."""
        rows = self._conn.execute(
            "SELECT record_json FROM attempts WHERE run_id=? ORDER BY seq", (run_id,))
        return [read_record(AttemptRecord, r[0]) for r in rows]

    def _add_hashed(self, table: str, key: tuple[object, ...], text: str, what: str) -> None:
        """Insert into ``table`` the row of ``key`` with ``text`` and the text's SHA-256."""
        row = (*key, text, text_sha256(text))

        def write() -> None:
            with self.transaction() as conn:
                conn.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)

        _patiently(write, f"{self.path}: storing {what}")

    def add_agent_call(self, run_id: str, case_id: str, call_no: int, text: str) -> None:
        """Store one agent tool call (its record as canonical JSON text, with the text's
        SHA-256); the agent package defines the record."""
        self._add_hashed("agent_calls", (run_id, case_id, call_no), text,
                         f"call {call_no} of case '{case_id}'")

    def agent_call_rows(self, run_id: str) -> list[tuple[str, int, str, str]]:
        """The agent tool calls of a run as (case id, call number, record text, its SHA-256),
        by case and call number; none in a file older than schema 4."""
        if self.schema_version < 4:
            return []
        rows = self._conn.execute(
            "SELECT case_id, call_no, record_json, content_sha256 FROM agent_calls "
            "WHERE run_id=? ORDER BY case_id, call_no", (run_id,))
        return [(str(c), int(n), str(t), str(h)) for c, n, t, h in rows]

    def agent_calls(self, run_id: str) -> list[AgentCall]:
        """The recorded tool calls of ``run_id``, by case and call number. A row whose text
        does not match its stored SHA-256, or does not parse, is a :class:`RecordsError`."""
        return [read_hashed(text, digest, AgentCall,
                            f"{self.path}: run '{run_id}', call {call_no} of case '{case_id}'",
                            "stored call")
                for case_id, call_no, text, digest in self.agent_call_rows(run_id)]

    def add_agent_trajectory(self, run_id: str, case_id: str, text: str) -> None:
        """Store the agent trajectory of one case (its record as canonical JSON text, with the
        text's SHA-256); the agent package defines the record."""
        self._add_hashed("agent_trajectories", (run_id, case_id), text,
                         f"the trajectory of case '{case_id}'")

    def agent_trajectory_rows(self, run_id: str) -> list[tuple[str, str, str]]:
        """The agent trajectories of a run as (case id, record text, its SHA-256), by case id;
        none in a file older than schema 5."""
        if self.schema_version < 5:
            return []
        rows = self._conn.execute(
            "SELECT case_id, record_json, content_sha256 FROM agent_trajectories "
            "WHERE run_id=? ORDER BY case_id", (run_id,))
        return [(str(c), str(t), str(h)) for c, t, h in rows]

    def formal_outputs_by_input(self, run_id: str) -> dict[str, AttemptRecord]:
        """The formal attempt of each reviewer input hash in a run (for the replay backend)."""
        rows = self._conn.execute(
            "SELECT input_sha256, record_json FROM attempts WHERE run_id=? AND kind='formal'",
            (run_id,))
        return {r[0]: read_record(AttemptRecord, r[1]) for r in rows}

    def chain_rows(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Every chained entry of a run (case records and attempts) in chain order, one at a
        time. An entry whose position is not an integer (a tampered row) comes first."""
        order = "ORDER BY CASE WHEN typeof(seq) = 'integer' THEN seq ELSE -1 END, rowid"

        def rows(table: str, kind: str) -> Iterator[dict[str, Any]]:
            cur = self._conn.cursor().execute(
                f"SELECT * FROM {table} WHERE run_id=? {order}", (run_id,))
            names = [d[0] for d in cur.description]
            for row in cur:
                yield {"entry": kind, **dict(zip(names, row, strict=True))}

        yield from heapq.merge(
            rows("case_records", "case"), rows("attempts", "attempt"),
            key=lambda r: r["seq"] if isinstance(r["seq"], int) else -1)


BaseModelLike = CaseRecord | AttemptRecord
