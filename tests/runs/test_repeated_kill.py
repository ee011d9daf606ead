"""Repeated ``kill -9`` of ``authpairs run`` (at least 20 kills): nothing lost, nothing
duplicated, and the record chain still audits clean.

Slow (about a minute): run with ``pytest -m slow tests/runs/test_repeated_kill.py``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from authpairs.cases.dataset import Dataset
from tests.runs.run_processes import count_records, scripted_run, settled_count

KILLS = 20


@pytest.mark.slow
def test_twenty_kills_lose_and_duplicate_nothing(tmp_path: Path, examples: Dataset) -> None:
    # Each run is killed as soon as one of its batches (at most 0.2 s of cases) is stored: with
    # answers taking 0.2 s, four in flight, a kill records a handful of cases, far fewer than
    # the 480 there are.
    command, env, total, db = scripted_run(tmp_path, examples, copies=60, concurrency=4,
                                           run_id="killed", delay_s=0.2)
    cases = tmp_path / "cases.jsonl"
    kills = 0
    while kills < KILLS:
        before = count_records(db)
        assert before < total, f"finished after {kills} kills; use more cases"
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while count_records(db) < before + 1 and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
        settled_count(db)
        kills += 1
    final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr
    with sqlite3.connect(db) as conn:
        per_case = dict(conn.execute(
            "SELECT case_id, COUNT(*) FROM case_records GROUP BY case_id").fetchall())
        formal = dict(conn.execute("SELECT case_id, COUNT(*) FROM attempts WHERE "
                                   "kind='formal' GROUP BY case_id").fetchall())
    assert len(per_case) == total and set(per_case.values()) == {1}  # 0 lost, 0 duplicated
    assert len(formal) == total and set(formal.values()) == {1}
    audit = subprocess.run([sys.executable, "-m", "authpairs.cli", "audit", "killed",
                            "--records", str(db), "--dataset", str(cases)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    print(f"{kills} kills, {total} cases, 0 lost, 0 duplicated, audit clean")
