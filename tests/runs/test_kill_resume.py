"""kill -9 in the middle of a run, then the same command again: nothing lost, nothing doubled."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

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


def _write_cases(examples: Dataset, path: Path, copies: int) -> int:
    """A JSONL dataset of ``copies`` x the examples, each with a fresh id."""
    rows = [json.dumps(row) for row in copied_rows(examples, copies)]
    path.write_text("\n".join(rows) + "\n")
    return len(rows)


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=10) as conn:
        try:
            return int(conn.execute("SELECT COUNT(*) FROM case_records").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def settled_count(db: Path, quiet_s: float = 0.5) -> int:
    """The number of case records once it stops changing (a records process still stores the
    batches it had received when the run's process was killed, then exits)."""
    count, since = _count(db), time.monotonic()
    deadline = since + 30
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.05)
        if (now := _count(db)) != count:
            count, since = now, time.monotonic()
    return count


def scripted_run(tmp_path: Path, examples: Dataset, *, copies: int, concurrency: int,
                 run_id: str | None = None, delay_s: float = 0.05
                 ) -> tuple[list[str], dict[str, str], int, Path]:
    """An ``authpairs run`` command over ``copies`` x the examples with the slow scripted
    reviewer: the command, its environment, the number of cases and the records file."""
    cases = tmp_path / "cases.jsonl"
    total = _write_cases(examples, cases, copies=copies)
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


def test_kill_9_then_rerun_completes_only_missing(tmp_path: Path, examples: Dataset) -> None:
    command, env, total, db = scripted_run(tmp_path, examples, copies=10, concurrency=2)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _count(db) < 10 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    if process.stderr is not None:
        process.stderr.close()
    partial = settled_count(db)
    assert 10 <= partial < total

    env["AUTHPAIRS_TEST_DELAY"] = "0"
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{partial} already recorded, {total - partial} new" in done.stdout.replace("\n", " ")
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT case_id, COUNT(*) FROM case_records GROUP BY case_id").fetchall()
        formal = conn.execute("SELECT case_id, COUNT(*) FROM attempts WHERE kind='formal' "
                              "GROUP BY case_id").fetchall()
    assert len(rows) == total and all(n == 1 for _, n in rows)
    assert len(formal) == total and all(n == 1 for _, n in formal)


def _children(pid: int) -> list[int]:
    """Pids of the processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ctrl_c_stores_what_finished_frees_the_claims_and_leaves_no_process(
        tmp_path: Path, examples: Dataset) -> None:
    command, env, total, db = scripted_run(tmp_path, examples, copies=10, concurrency=2)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while _count(db) < 10 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    children = _children(process.pid)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    assert process.wait(timeout=60) == 130
    if process.stderr is not None:
        process.stderr.close()
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)
    stored = _count(db)
    assert 10 <= stored < total
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    env["AUTHPAIRS_TEST_DELAY"] = "0"
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _count(db) == total
