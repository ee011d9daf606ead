"""Sandboxes after kill -9: the leftover directory is reclaimed at the next start; a kept
sandbox holds no private keys after the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from authpairs.enforce import layout
from authpairs.enforce.sandbox import PREFIX, Sandbox, reclaim_stale
from tests.conftest import REPO_ROOT


def test_a_sandbox_of_a_killed_run_is_reclaimed(tmp_path: Path) -> None:
    parent = tmp_path / "sandboxes"
    parent.mkdir()
    config = tmp_path / "s.yaml"
    config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.scripts:slow_allow_logged\n")
    env = {**os.environ, "AUTHPAIRS_SANDBOX_DIR": str(parent), "AUTHPAIRS_TEST_DELAY": "2",
           "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "authpairs.cli", "run", "--config", str(config), "--dataset",
         "examples", "--split", "all", "--records", str(tmp_path / "r.sqlite"), "--quiet"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list(parent.glob(f"{PREFIX}*")) and time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    if process.stderr is not None:
        process.stderr.close()
    left = list(parent.glob(f"{PREFIX}*"))
    assert len(left) == 1  # kill -9 leaves it behind ...
    with Sandbox(parent) as sandbox:  # ... and the next start reclaims it
        assert not left[0].exists()
        assert [p for p in parent.glob(f"{PREFIX}*")] == [sandbox.root]
    assert list(parent.glob(f"{PREFIX}*")) == []


def test_live_and_foreign_directories_are_left_alone(tmp_path: Path) -> None:
    live = tmp_path / f"{PREFIX}live"
    live.mkdir()
    (live / ".owner").write_text(f"{os.uname().nodename}\n{os.getpid()}\n")
    foreign = tmp_path / f"{PREFIX}foreign"
    foreign.mkdir()
    (foreign / ".owner").write_text("another-host\n1\n")
    unowned = tmp_path / f"{PREFIX}unowned"
    unowned.mkdir()
    assert reclaim_stale(tmp_path) == []
    assert live.exists() and foreign.exists() and unowned.exists()


def test_a_kept_sandbox_holds_no_private_keys(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, keep=True)
    with sandbox:
        root = sandbox.root
        private = root.joinpath(*layout.PRIVATE_KEYS)
        assert private.is_dir() and any(private.iterdir())
    assert root.exists() and not private.exists()
    assert not [p for p in root.rglob("*") if p.is_file() and b"PRIVATE KEY" in p.read_bytes()]
