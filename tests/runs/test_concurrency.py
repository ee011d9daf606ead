"""Two ``authpairs run`` processes on the same records file and run id: no crash, every case
recorded once, and no case reviewed twice (per-case claims), including the start-up race on a
fresh file."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from authpairs.cases.dataset import Dataset
from tests.conftest import REPO_ROOT
from tests.runs.run_processes import write_cases


def _command(cases: Path, db: Path, config: Path) -> list[str]:
    return [sys.executable, "-m", "authpairs.cli", "run", "--config", str(config),
            "--dataset", str(cases), "--split", "all", "--no-enforce", "--quiet",
            "--concurrency", "3", "--records", str(db), "--run-id", "shared"]


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_two_processes_on_one_run_never_review_a_case_twice(tmp_path: Path,
                                                            examples: Dataset) -> None:
    cases = tmp_path / "cases.jsonl"
    total = write_cases(examples, cases, copies=8)
    db = tmp_path / "records.sqlite"
    log = tmp_path / "reviews.log"
    config = tmp_path / "scripted.yaml"
    config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.scripts:slow_allow_logged\n")
    env = {**os.environ, "AUTHPAIRS_TEST_DELAY": "0.03", "AUTHPAIRS_TEST_LOG": str(log),
           "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    processes = [subprocess.Popen(_command(cases, db, config), env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        assert "Traceback" not in out + err
    reviews = Counter(line.split()[1] for line in log.read_text().splitlines())
    assert len(reviews) == total and set(reviews.values()) == {1}
    pids = {line.split()[0] for line in log.read_text().splitlines()}
    assert len(pids) == 2  # both processes did part of the work
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT case_id, COUNT(*) FROM case_records GROUP BY case_id")
        counts = dict(rows.fetchall())
        formal = conn.execute("SELECT COUNT(*) FROM attempts WHERE kind='formal'").fetchone()[0]
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        claims = conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
    assert len(counts) == total and set(counts.values()) == {1}
    assert formal == total and runs == 1 and claims == 0
    audit = subprocess.run([sys.executable, "-m", "authpairs.cli", "audit", "shared",
                            "--records", str(db), "--dataset", str(cases)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode == 0, audit.stdout + audit.stderr
