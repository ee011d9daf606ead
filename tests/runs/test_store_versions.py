"""Records files: schema version in the file, clear messages for older/newer files, fixture files
of the current version, and read-only access for score, compare, export and audit."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.analysis.scoring import score_records
from authpairs.cli import app
from authpairs.errors import RecordsError
from authpairs.runs import store as store_module
from authpairs.runs.audit import audit_run, verify_chain
from authpairs.runs.records import RunInfo
from authpairs.runs.store import (
    SCHEMA_VERSION,
    RecordStore,
    RecordStoreError,
    RecordsVersionError,
)
from tests.runs.fixtures.make import RECORDS, RUNS, SCORES

runner = CliRunner()


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_fixture_is_the_current_version_and_scores_as_recorded() -> None:
    with sqlite3.connect(f"file:{RECORDS}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    expected = json.loads(SCORES.read_text())
    with RecordStore(RECORDS, readonly=True) as store:
        for run in RUNS:
            assert score_records(store.case_records(run)).to_dict() == expected[run]
            report = audit_run(store, run)
            assert report.ok, [str(f) for f in report.findings]
            assert not report.skipped
            assert report.checked["decisions re-parsed"] == 8


def test_new_files_carry_the_schema_version(tmp_path: Path) -> None:
    RecordStore(tmp_path / "r.sqlite").close()
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_older_newer_and_foreign_files_get_clear_messages(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as conn:  # the unversioned layout before issue 11
        conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT)")
    with pytest.raises(RecordsVersionError, match=r"version 1 .*reads version 2"):
        RecordStore(old, readonly=True)
    with pytest.raises(RecordsVersionError, match="version 1"):
        RecordStore(old)
    new = tmp_path / "new.sqlite"
    RecordStore(new).close()
    with sqlite3.connect(new) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    with pytest.raises(RecordsVersionError, match="newer than this authpairs"):
        RecordStore(new, readonly=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all " * 100)
    with pytest.raises(RecordsError, match="not a usable records file"):
        RecordStore(junk, readonly=True)
    result = runner.invoke(app, ["score", "x", "--records", str(new)])
    assert result.exit_code == 2 and "newer than this authpairs" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_reading_never_creates_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    result = runner.invoke(app, ["score", "r", "--records", str(missing)])
    assert result.exit_code == 2 and "not found" in result.output
    assert not missing.exists()


@pytest.mark.parametrize("immutable", [False, True])
def test_read_only_files_are_scored_compared_exported_and_audited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, immutable: bool) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "records.sqlite"
    shutil.copy(RECORDS, path)
    if immutable:  # as on a read-only mount or a file the user may not write
        monkeypatch.setattr(store_module, "writable", lambda path: False)
    path.chmod(0o444)
    folder.chmod(0o555)
    before = _digest(folder)
    out = tmp_path / "out"
    try:
        commands = [
            ["score", RUNS[1], "--records", str(path), "--out", str(out / "s")],
            ["compare", RUNS[0], RUNS[1], "--records", str(path), "--no-list"],
            ["export", RUNS[1], "--records", str(path), "--out", str(out / "e.jsonl")],
            ["audit", RUNS[1], "--records", str(path)],
            ["runs", "--records", str(path)],
        ]
        for command in commands:
            result = runner.invoke(app, command)
            assert result.exit_code == 0, (command, result.output)
            assert "8 recorded of 8 expected" in result.output or command[0] == "runs"
        assert _digest(folder) == before
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
    scores = json.loads((out / "s" / "scores.json").read_text())
    assert scores[0]["expected"] == 8 and scores[0]["recorded"] == 8


def _info(run_id: str, config_sha: str = "c", cases: tuple[str, ...] = ("a", "b")) -> RunInfo:
    return RunInfo(run_id=run_id, created_at="t", config={}, config_sha256=config_sha,
                   manifest={}, manifest_sha256="m", expected_case_ids=list(cases))


def test_a_run_id_cannot_be_reused_for_other_settings_or_cases(tmp_path: Path) -> None:
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info("r"))
        assert store.open_run(_info("r")).run_id == "r"
        with pytest.raises(RecordStoreError, match="different configuration"):
            store.open_run(_info("r", config_sha="other"))
        with pytest.raises(RecordStoreError, match="different set of cases"):
            store.open_run(_info("r", cases=("a",)))
        assert verify_chain(store, "r").ok


def test_simultaneous_start_writes_one_header(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def start() -> None:
        try:
            barrier.wait()
            with RecordStore(path) as store:
                store.open_run(_info("same"))
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with RecordStore(path, readonly=True) as store:
        assert [r.run_id for r in store.list_runs()] == ["same"]
