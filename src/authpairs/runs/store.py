"""SQLite record store (WAL): runs, case records and attempts.

Writes are committed per case, so a process killed mid-run (even with ``kill -9``) loses at most
the case in flight; ``UNIQUE(run_id, case_id)`` makes duplicates impossible. Reading is open to any
number of processes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from authpairs.errors import RecordsError
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL,
    config_sha256 TEXT NOT NULL,
    manifest_json TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    template_json TEXT NOT NULL,
    versions_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS case_records (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    dispatch TEXT NOT NULL,
    label TEXT NOT NULL,
    record_json TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    case_id TEXT NOT NULL,
    attempt_no INTEGER NOT NULL,
    kind TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_input ON attempts(input_sha256);
CREATE INDEX IF NOT EXISTS attempts_by_case ON attempts(run_id, case_id);
"""


def _insert_attempts(conn: sqlite3.Connection, attempts: list[AttemptRecord]) -> None:
    conn.executemany(
        "INSERT INTO attempts (run_id, case_id, attempt_no, kind, input_sha256, record_json) "
        "VALUES (?,?,?,?,?,?)",
        [(a.run_id, a.case_id, a.attempt_no, a.kind, a.input_sha256, a.model_dump_json())
         for a in attempts])


class RecordStoreError(RecordsError):
    """A record store conflict, e.g. reusing a run id with a different configuration."""


class RecordStore:
    """Append-only SQLite store for run records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An explicit write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- runs -------------------------------------------------------------------------------
    def open_run(self, info: RunInfo) -> RunInfo:
        """Create the run, or return the stored one when the same configuration resumes it.

        Raises :class:`RecordStoreError` when the run id exists with another configuration or
        another dataset manifest.
        """
        existing = self.get_run(info.run_id)
        if existing is not None:
            if existing.config_sha256 != info.config_sha256:
                raise RecordStoreError(
                    f"run '{info.run_id}' already exists in {self.path} with a different "
                    f"configuration ({existing.config_sha256[:12]} != {info.config_sha256[:12]}); "
                    "choose another --run-id")
            if existing.manifest_sha256 != info.manifest_sha256:
                raise RecordStoreError(
                    f"run '{info.run_id}' already exists in {self.path} for a different dataset "
                    "manifest; choose another --run-id")
            return existing
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?)",
                (info.run_id, info.created_at, json.dumps(info.config, sort_keys=True),
                 info.config_sha256, json.dumps(info.manifest, sort_keys=True),
                 info.manifest_sha256, json.dumps(info.template_sha256, sort_keys=True),
                 json.dumps(info.versions, sort_keys=True)))
        return info

    def get_run(self, run_id: str) -> RunInfo | None:
        """The stored run metadata, or None."""
        row = self._conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            return None
        return RunInfo(run_id=row[0], created_at=row[1], config=json.loads(row[2]),
                       config_sha256=row[3], manifest=json.loads(row[4]),
                       manifest_sha256=row[5], template_sha256=json.loads(row[6]),
                       versions=json.loads(row[7]))

    def list_runs(self) -> list[RunInfo]:
        """All runs in creation order."""
        ids = [r[0] for r in self._conn.execute("SELECT run_id FROM runs ORDER BY created_at")]
        return [run for rid in ids if (run := self.get_run(rid)) is not None]

    # -- records ----------------------------------------------------------------------------
    def add_case(self, record: CaseRecord, attempts: list[AttemptRecord]) -> bool:
        """Store one scored case with its attempts atomically. Returns False (and stores nothing)
        when the case already has a record in this run."""
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO case_records VALUES (?,?,?,?,?,?,?,?)",
                (record.run_id, record.case_id, record.input_sha256, record.status.value,
                 record.decision.value if record.decision else None, record.dispatch.value,
                 record.label, record.model_dump_json()))
            if cur.rowcount == 0:
                return False
            _insert_attempts(conn, attempts)
        return True

    def add_attempts(self, attempts: list[AttemptRecord]) -> None:
        """Store attempts that produced no case record (exhausted infrastructure retries)."""
        with self.transaction() as conn:
            _insert_attempts(conn, attempts)

    def done_case_ids(self, run_id: str) -> set[str]:
        """Ids of cases that already have a record in ``run_id``."""
        rows = self._conn.execute("SELECT case_id FROM case_records WHERE run_id=?", (run_id,))
        return {r[0] for r in rows}

    def case_records(self, run_id: str) -> list[CaseRecord]:
        """All case records of a run, ordered by case id."""
        rows = self._conn.execute(
            "SELECT record_json FROM case_records WHERE run_id=? ORDER BY case_id", (run_id,))
        return [CaseRecord.model_validate_json(r[0]) for r in rows]

    def attempts(self, run_id: str, case_id: str | None = None) -> list[AttemptRecord]:
        """Attempts of a run (optionally of one case), in insertion order."""
        sql = "SELECT record_json FROM attempts WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if case_id is not None:
            sql += " AND case_id=?"
            args += (case_id,)
        rows = self._conn.execute(sql + " ORDER BY id", args)
        return [AttemptRecord.model_validate_json(r[0]) for r in rows]

    def formal_outputs_by_input(self, run_id: str) -> dict[str, AttemptRecord]:
        """The formal attempt of each reviewer input hash in a run (for the replay backend)."""
        rows = self._conn.execute(
            "SELECT input_sha256, record_json FROM attempts WHERE run_id=? AND kind='formal'",
            (run_id,))
        return {r[0]: AttemptRecord.model_validate_json(r[1]) for r in rows}
