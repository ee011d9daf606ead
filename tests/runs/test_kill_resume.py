"""kill -9 in the middle of a run, then the same command again: nothing lost, nothing doubled."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from authpairs.cases.dataset import Dataset
from tests.runs.run_processes import count_records, scripted_run, settled_count

pytestmark = pytest.mark.slow  # subprocess-heavy (whole CLI processes): the slow tier runs it

#: The run the tests stop: 320 cases, two at a time, each answered after 0.2 s (32 s in all), so
#: it is still going when the test, which may wait seconds for a CPU beside the other slow
#: tests, stops it after 10 records; the rerun answers at once.
COPIES = 40
RUN_DELAY_S = 0.2


def test_kill_9_then_rerun_completes_only_missing(tmp_path: Path, examples: Dataset) -> None:
    command, env, total, db = scripted_run(tmp_path, examples, copies=COPIES, concurrency=2,
                                           delay_s=RUN_DELAY_S)
    with subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE) as process:
        deadline = time.monotonic() + 60
        while count_records(db) < 10 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        os.kill(process.pid, signal.SIGKILL)
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
    command, env, total, db = scripted_run(tmp_path, examples, copies=COPIES, concurrency=2,
                                           delay_s=RUN_DELAY_S)
    out = tmp_path / "stdout.txt"
    # A job a non-interactive shell starts in the background (`cmd &`, as CI may run the tests)
    # has SIGINT ignored, and its children inherit that: the run would never see the Ctrl-C.
    # A terminal's foreground command has the default disposition; give the run that.
    with out.open("wb") as stdout, subprocess.Popen(
            command, env=env, stdout=stdout, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as process:
        deadline = time.monotonic() + 60
        while count_records(db) < 10 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        children = _children(process.pid)
        at_signal = count_records(db), time.monotonic()
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        code = process.wait(timeout=60)
        assert code == 130, (  # what the process said, should it ever end otherwise
            f"exit {code} {time.monotonic() - at_signal[1]:.1f} s after SIGINT at "
            f"{at_signal[0]} of {total} records, {count_records(db)} now; stdout: "
            f"{out.read_text()!r}; stderr: "
            f"{process.stderr.read().decode() if process.stderr else ''!r}")
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)
    stored = count_records(db)
    assert 10 <= stored < total
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    env["AUTHPAIRS_TEST_DELAY"] = "0"
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert count_records(db) == total
