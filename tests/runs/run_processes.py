"""Helpers for tests that start real ``authpairs run`` processes (kill, resume, concurrency):
datasets of copied example cases, the scripted run command, and record counts."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from authpairs.cases.dataset import Dataset
from tests.conftest import REPO_ROOT


def copied_rows(examples: Dataset, copies: int) -> list[dict[str, Any]]:
    """``copies`` x the examples as JSON rows, each with a fresh id."""
    rows = []
    for n in range(copies):
        for case in examples:
            row = case.model_dump(mode="json")
            row["case_id"] = f"{case.case_id}-{n}"
            row["public"]["source_id"] = row["case_id"]
            rows.append(row)
    return rows


def write_cases(examples: Dataset, path: Path, copies: int) -> int:
    """A JSONL dataset of ``copies`` x the examples, each with a fresh id."""
    rows = [json.dumps(row) for row in copied_rows(examples, copies)]
    path.write_text("\n".join(rows) + "\n")
    return len(rows)


def count_records(db: Path) -> int:
    """The number of case records in ``db`` (0 before the run created its tables)."""
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=10) as conn:
        try:
            return int(conn.execute("SELECT COUNT(*) FROM case_records").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def settled_count(db: Path, quiet_s: float = 0.5) -> int:
    """The number of case records once it has not changed for ``quiet_s`` (a killed process's
    last transaction may still be settling in the WAL)."""
    count, since = count_records(db), time.monotonic()
    deadline = since + 30
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.05)
        if (now := count_records(db)) != count:
            count, since = now, time.monotonic()
    return count


def scripted_run(tmp_path: Path, examples: Dataset, *, copies: int, concurrency: int,
                 run_id: str | None = None, delay_s: float = 0.05
                 ) -> tuple[list[str], dict[str, str], int, Path]:
    """An ``authpairs run`` command over ``copies`` x the examples with the slow scripted
    reviewer: the command, its environment, the number of cases and the records file."""
    cases = tmp_path / "cases.jsonl"
    total = write_cases(examples, cases, copies=copies)
    db = tmp_path / "records.sqlite"
    config = tmp_path / "scripted.yaml"
    config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.scripts:slow_allow\n")
    command = [sys.executable, "-m", "authpairs.cli", "run", "--config", str(config),
               "--dataset", str(cases), "--split", "all", "--no-enforce", "--quiet",
               "--concurrency", str(concurrency), "--records", str(db)]
    if run_id is not None:
        command += ["--run-id", run_id]
    env = {**os.environ, "AUTHPAIRS_TEST_DELAY": str(delay_s),
           "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return command, env, total, db
