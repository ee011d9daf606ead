"""Every read command works on records the user cannot write, and leaves them untouched.

The records file is made read-only (mode 0444, its folder 0555) and each command runs in a
child process as a user that cannot write it: when the tests run as root, the child runs as
uid/gid 65534 (``nobody``, through ``setpriv`` or by dropping privileges before it starts);
otherwise the file's owner is the user, and mode
0444 already denies it writes. The setup is checked first (the child must fail to open the file
for writing), so a user that could write the file fails the test rather than passing it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # subprocess-heavy (whole CLI processes): the slow tier runs it

NOBODY = 65534
"""The uid and gid a root test process drops to."""


def _as_unprivileged(command: list[str]) -> tuple[list[str], Callable[[], None] | None]:
    """``command`` run as an unprivileged user: unchanged when the tests are not root; else
    through ``setpriv`` (util-linux) when installed, or with the uid and gid dropped in the
    child before it starts."""
    if os.geteuid() != 0:
        return command, None
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                *command], None

    def drop() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    return command, drop


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    """A world-readable folder holding a read-only records file with two runs, and a
    world-writable ``out`` folder for what the commands write."""
    root = Path(tempfile.mkdtemp(prefix="authpairs-ro-"))
    root.chmod(0o755)
    records = root / "records"
    records.mkdir()
    db = records / "r.sqlite"
    for run_id, baseline in (("base", "always-allow"), ("cand", "always-block")):
        # a process of its own: its exit closes the store, which folds the WAL into the file
        result = subprocess.run([sys.executable, "-m", "authpairs.cli", "run", "--dataset",
                                 "examples", "--split", "all", "--baseline", baseline,
                                 "--records", str(db), "--run-id", run_id, "--no-enforce",
                                 "--quiet"], capture_output=True, text=True, timeout=300,
                                check=False)
        assert result.returncode == 0, result.stdout + result.stderr
    (records / "required.txt").write_text("")
    (records / "family.yaml").write_text(f"records: {db}\ndraws: 200\nseed: 1\n"
                                         "contrasts:\n  - [base, cand]\n")
    # a copy whose pages are all still in its WAL: the writer exits without closing
    pending = records / "pending.sqlite"
    copy = ("import os, sqlite3, sys; src = sqlite3.connect(sys.argv[1]); "
            "dst = sqlite3.connect(sys.argv[2]); dst.execute('PRAGMA journal_mode=WAL'); "
            "dst.execute('PRAGMA wal_autocheckpoint=0'); src.backup(dst); os._exit(0)")
    subprocess.run([sys.executable, "-c", copy, str(db), str(pending)], check=True)
    assert Path(f"{pending}-wal").stat().st_size > 0
    for path in records.iterdir():
        path.chmod(0o444)
    records.chmod(0o555)
    out = root / "out"
    out.mkdir()
    out.chmod(0o777)
    yield root
    records.chmod(0o755)
    shutil.rmtree(root)


def _files(folder: Path) -> dict[str, str]:
    """Name -> SHA-256 of every file in the records folder (side files included)."""
    return {p.name: _digest(p) for p in sorted((folder / "records").iterdir())}


def _run(args: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """``authpairs ARGS`` (or a Python snippet for ``-c``) as the unprivileged user."""
    env = {**os.environ, "HOME": str(folder / "out"), "AUTHPAIRS_CACHE": str(folder / "out"),
           "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    command = ([sys.executable, *args] if args[0] == "-c"
               else [sys.executable, "-m", "authpairs.cli", *args])
    command, preexec = _as_unprivileged(command)
    return subprocess.run(command, env=env, cwd=folder / "out", capture_output=True,
                          text=True, timeout=300, preexec_fn=preexec, check=False)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commands(folder: Path) -> dict[str, list[str]]:
    db = str(folder / "records" / "r.sqlite")
    out = folder / "out"
    required = str(folder / "records" / "required.txt")
    rec = ["--records", db]
    return {
        "runs": ["runs", *rec],
        "score": ["score", "base", "cand", *rec, "--out", str(out / "score")],
        "compare": ["compare", "base", "cand", *rec, "--no-list", "--out", str(out / "cmp")],
        "compose": ["compose", "base", "cand", *rec, "--out", str(out / "compose")],
        "contrasts": ["contrasts", str(folder / "records" / "family.yaml"),
                      "--out", str(out / "contrasts")],
        "gate": ["gate", "--baseline", "base", "--candidate", "cand", "--required", required,
                 "--usable-scope", "designated", "--forbidden", required, *rec,
                 "--out", str(out / "gate")],
        "audit": ["audit", "cand", *rec],
        "export": ["export", "cand", *rec, "--out", str(out / "cand.jsonl")],
        "report": ["report", "base", "cand", *rec, "--out", str(out / "report")],
        "runs-pending-wal": ["runs", "--records", str(folder / "records" / "pending.sqlite")],
        "audit-pending-wal": ["audit", "cand", "--records",
                              str(folder / "records" / "pending.sqlite")],
        "api": ["-c", "import authpairs, sys; store = authpairs.open_records(sys.argv[1]); "
                "print(len(store.case_records('cand'))); store.close()", db],
    }


COMMANDS = ("runs", "score", "compare", "compose", "contrasts", "gate", "audit", "export",
            "report", "api", "runs-pending-wal", "audit-pending-wal")


def test_the_user_cannot_write_the_records(folder: Path) -> None:
    db = folder / "records" / "r.sqlite"
    probe = _run(["-c", "import sys; open(sys.argv[1], 'r+b')", str(db)], folder)
    assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe.stderr
    probe = _run(["-c", "import sys; open(sys.argv[1] + '-wal', 'wb')", str(db)], folder)
    assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe.stderr


@pytest.mark.parametrize("name", COMMANDS)
def test_a_read_command_works_on_read_only_records(folder: Path, name: str) -> None:
    before = _files(folder)
    result = _run(_commands(folder)[name], folder)
    text = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0, text
    assert "Traceback" not in text and "readonly database" not in text, text
    assert {"runs": "cand", "score": "cand", "compare": "cand", "compose": "cand",
            "contrasts": "cand",
            "gate": "Acceptance test", "audit": "audit passed", "export": "wrote",
            "report": "report.html", "api": "8", "runs-pending-wal": "cand",
            "audit-pending-wal": "audit passed"}[name] in text, text
    assert _files(folder) == before
