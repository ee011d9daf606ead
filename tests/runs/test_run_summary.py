"""The summary printed after ``authpairs run``: the numbers ``authpairs score`` gives, read once.

A run that created its chain and wrote every entry itself hands the chain head and length it
sealed to the summary (``RunProgress.written_chain``); the summary then reads the records as
stored instead of recomputing every hash. Anything else (a resumed run, another writer, an
edited header) is verified in full as before.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.analysis.runref import UnverifiedRunError, check_verified
from authpairs.cases.models import PublicCase
from authpairs.cli import app
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs import audit
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore

_ANSWERS = ("ALLOW", "BLOCK", "UNKNOWN", "neither")  # the last is unavailable (label parser)


def mixed(case: PublicCase) -> str:
    """A guardrail whose answers cover decisions, an abstention and an unreadable answer."""
    return _ANSWERS[hashlib.sha256(case.model_dump_json().encode()).digest()[0] % 4]


def _count_chain_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = audit.verify_chain

    def counting(store: RecordStore, run_id: str, on_case: object = None) -> audit.AuditReport:
        calls.append(run_id)
        return real(store, run_id, on_case)  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "verify_chain", counting)
    return calls


def _run(tmp_path: Path, db: Path, out: Path) -> list[str]:
    return ["run", "--dataset", "examples", "--split", "all", "--guardrail",
            f"{__name__}:mixed", "--no-enforce", "--records", str(db), "--run-id", "mix",
            "--quiet", "--by", "family", "--out", str(out)]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _tables(output: str) -> str:
    """The reviewer line and the score tables of a command's output."""
    return output[output.index("reviewer: "):]


def test_the_run_summary_is_what_score_gives(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    db = tmp_path / "r.sqlite"
    checks = _count_chain_checks(monkeypatch)
    ran = runner.invoke(app, _run(tmp_path, db, tmp_path / "run"))
    assert ran.exit_code == 0, ran.output
    assert checks == []  # this process wrote and sealed the whole chain: not re-hashed
    scored = runner.invoke(app, ["score", "mix", "--records", str(db), "--by", "family",
                                 "--out", str(tmp_path / "score")])
    assert scored.exit_code == 0, scored.output
    assert checks == ["mix"]
    assert _files(tmp_path / "run") == _files(tmp_path / "score")
    assert _tables(ran.output) == _tables(scored.output)
    with RecordStore(db, readonly=True) as store:
        statuses = {r.status for r in store.iter_case_records("mix")}
    assert statuses == set(OutcomeStatus)  # decisions, an abstention and unavailable answers


def test_a_resumed_run_is_verified_in_full(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    db = tmp_path / "r.sqlite"
    assert runner.invoke(app, _run(tmp_path, db, tmp_path / "a")).exit_code == 0
    with sqlite3.connect(db) as conn:  # an edit the chain catches
        conn.execute("UPDATE case_records SET record_json = replace(record_json, "
                     "'\"latency_s\":', '\"latency_s\": ') WHERE rowid = 1")
    checks = _count_chain_checks(monkeypatch)
    again = runner.invoke(app, _run(tmp_path, db, tmp_path / "b"))
    assert checks == ["mix"]
    assert again.exit_code != 0
    assert isinstance(again.exception, UnverifiedRunError) or \
        "integrity check" in again.output


def _info(run_id: str) -> RunInfo:
    return RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00", config={},
                   config_sha256=run_id, manifest={}, manifest_sha256="m")


def _record(run_id: str, case_id: str) -> CaseRecord:
    return CaseRecord(run_id=run_id, case_id=case_id, input_sha256="0" * 64,
                      status=OutcomeStatus.DECISION, decision=Decision.ALLOW,
                      dispatch=Dispatch.ALLOW, label="lawful", cluster="s")


def _header(db: Path, run_id: str) -> tuple[str, int]:
    with sqlite3.connect(db) as conn:
        head, length = conn.execute("SELECT chain_head, chain_length FROM runs WHERE run_id=?",
                                    (run_id,)).fetchone()
    return str(head), int(length)


def test_written_chain_is_only_a_chain_this_store_wrote_alone(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with RecordStore(db) as first, RecordStore(db) as second:
        first.open_run(_info("r"))
        assert first.written_chains.get("r") == _header(db, "r")  # created: the genesis, length 0
        first.add_cases([(_record("r", "1"), []), (_record("r", "2"), [])])
        assert first.written_chains.get("r") == _header(db, "r") and _header(db, "r")[1] == 2
        second.open_run(_info("r"))  # resumes: it did not create the run
        assert second.written_chains.get("r") is None
        second.add_case(_record("r", "3"), [])
        assert second.written_chains.get("r") is None
        first.add_case(_record("r", "4"), [])  # another writer appended in between
        assert first.written_chains.get("r") is None


def test_written_chain_is_forgotten_when_a_transaction_rolls_back(tmp_path: Path) -> None:
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info("r"))
        with pytest.raises(RuntimeError), store.transaction():
            raise RuntimeError("stop")
        assert store.written_chains.get("r") is None


def test_an_edited_header_is_verified_in_full(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with RecordStore(db) as store:
        store.open_run(_info("r"))
        store.add_cases([(_record("r", "1"), [])])
        written = store.written_chains.get("r")
    assert written is not None
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET expected_json = '[\"1\",\"2\"]' WHERE run_id = 'r'")
    seen: list[str] = []
    with RecordStore(db, readonly=True) as store, pytest.raises(UnverifiedRunError):
        check_verified(store, db, "r", lambda r: seen.append(r.case_id), written=written)


def test_the_written_chain_is_read_as_stored(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with RecordStore(db) as store:
        store.open_run(_info("r"))
        store.add_cases([(_record("r", "2"), []), (_record("r", "1"), [])])
        written = store.written_chains.get("r")
    seen: list[str] = []
    with RecordStore(db, readonly=True) as store:
        assert check_verified(store, db, "r", lambda r: seen.append(r.case_id),
                              written=written) is None
        assert check_verified(store, db, "r", written=(written[0], 1)  # type: ignore[index]
                              ) is None  # another end: verified in full, and it holds
    assert seen == ["1", "2"]
