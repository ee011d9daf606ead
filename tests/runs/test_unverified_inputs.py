"""Nothing decides on unverified records: score, compare, compose, gate, report and study refuse
a run whose SHA-256 chain fails (naming the run and the record), and with --allow-unverified use
it while every output (terminal, JSON, CSV, HTML) says so.

The tamper is the one that turned ``gate`` FAIL into PASS: one case of the candidate edited
from BLOCK to ALLOW in the records, re-stored canonically with its content hash recomputed (the
chain link is left as it was).
"""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.analysis.runref import (
    RunRef,
    UnverifiedRunError,
    load_records,
    unverified_allowed,
    unverified_notice,
)
from authpairs.cli import app
from authpairs.review.outcome import Decision, Dispatch
from authpairs.runs.api import run_async
from authpairs.runs.chain import text_sha256
from authpairs.runs.config import config_from_dict
from authpairs.runs.records import CaseRecord, stored_json
from authpairs.runs.store import RecordStore

runner = CliRunner()
LAWFUL = "EX-c64055c2cb7187da"  # a lawful example the always-block candidate blocks


def _run(records: Path, run_id: str, baseline: str) -> None:
    asyncio.run(run_async(config_from_dict({
        "dataset": "examples", "split": "all", "enforce": False, "records": str(records),
        "run_id": run_id, "reviewer": {"baseline": baseline}}), progress=False))


def tamper(records: Path, run_id: str, case_id: str = LAWFUL) -> None:
    """Edit one case record from BLOCK to ALLOW, re-stored canonically, content hash updated."""
    with sqlite3.connect(records) as conn:
        (text,) = conn.execute("SELECT record_json FROM case_records WHERE run_id=? AND "
                               "case_id=?", (run_id, case_id)).fetchone()
        record = CaseRecord.model_validate_json(text)
        assert record.dispatch is Dispatch.BLOCK
        edited = stored_json(record.model_copy(update={"decision": Decision.ALLOW,
                                                       "dispatch": Dispatch.ALLOW}))
        conn.execute("UPDATE case_records SET record_json=?, decision='ALLOW', dispatch='ALLOW', "
                     "content_sha256=? WHERE run_id=? AND case_id=?",
                     (edited, text_sha256(edited), run_id, case_id))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Intact records (base: always-allow, cand: always-block), the same with cand tampered,
    and a study plan whose always-block run is tampered."""
    folder = tmp_path_factory.mktemp("unverified")
    intact = folder / "intact.sqlite"
    _run(intact, "base", "always-allow")
    _run(intact, "cand", "always-block")
    tampered = folder / "tampered.sqlite"
    shutil.copyfile(intact, tampered)
    tamper(tampered, "cand")
    required = folder / "required.txt"
    required.write_text(f"{LAWFUL}\n")
    plan = folder / "plan.yaml"
    study_records = folder / "study.sqlite"
    plan.write_text(
        f"name: tamper\nrecords: {study_records}\n"
        "base: {dataset: examples, split: all, enforce: false}\n"
        "factors:\n  reviewer:\n    allow: {reviewer.baseline: always-allow}\n"
        "    block: {reviewer.baseline: always-block}\n"
        "seeds: [0]\nanalysis: {draws: 200, seed: 1}\n")
    result = runner.invoke(app, ["study", str(plan), "--no-progress"])
    assert result.exit_code == 0, result.output
    with RecordStore(study_records, readonly=True) as store:
        blocking = [r.run_id for r in store.list_runs()
                    if r.config["resolved"]["reviewer"]["baseline"] == "always-block"]
    tamper(study_records, blocking[0])
    return {"intact": intact, "tampered": tampered, "required": required, "plan": plan,
            "folder": folder, "study_run": Path(blocking[0])}


def _command(name: str, files: dict[str, Path], records: Path, out: Path) -> list[str]:
    rec = ["--records", str(records)]
    return {
        "score": ["score", "cand", *rec, "--out", str(out)],
        "score-many": ["score", "base", "cand", *rec, "--out", str(out)],
        "compare": ["compare", "base", "cand", *rec, "--no-list", "--out", str(out)],
        "compose": ["compose", "base", "cand", *rec, "--out", str(out)],
        "gate": ["gate", "--baseline", "base", "--candidate", "cand", "--required",
                 str(files["required"]), *rec, "--out", str(out)],
        "report": ["report", "base", "cand", *rec, "--out", str(out)],
        "study": ["study", str(files["plan"]), "--analyze-only", "--no-progress", "--out",
                  str(out)],
    }[name]


COMMANDS = ("score", "score-many", "compare", "compose", "gate", "report", "study")


def _written(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.suffix in (".json", ".csv"))


@pytest.mark.parametrize("name", COMMANDS)
def test_a_tampered_run_is_refused_with_the_record_named(files: dict[str, Path], name: str,
                                                          tmp_path: Path) -> None:
    run_id = "cand" if name != "study" else files["study_run"].name
    result = runner.invoke(app, _command(name, files, files["tampered"], tmp_path / "out"))
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"run '{run_id}' fails the integrity check" in text
    assert f"case record '{LAWFUL}'" in text and "--allow-unverified" in text
    assert not _written(tmp_path / "out")


@pytest.mark.parametrize("name", COMMANDS)
def test_allowed_unverified_runs_are_named_in_every_output(files: dict[str, Path], name: str,
                                                            tmp_path: Path) -> None:
    run_id = "cand" if name != "study" else files["study_run"].name
    out = tmp_path / "out"
    result = runner.invoke(app, [*_command(name, files, files["tampered"], out),
                                 "--allow-unverified"])
    assert result.exit_code in (0, 1), result.output
    text = " ".join(result.output.split())
    assert f"run {run_id} " in text and "is UNVERIFIED" in text
    assert "UNVERIFIED: the results" in text
    written = _written(out)
    assert written
    for path in written:
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            rows = data if isinstance(data, list) else [data]
            assert all(row["unverified_runs"] == [run_id] for row in rows), path
        else:
            with path.open(newline="") as handle:
                rows = list(csv.DictReader(handle))
            assert all(row["unverified_runs"] == run_id for row in rows), path
    if name == "report":
        html = (out / "report.html").read_text()
        assert 'id="unverified-warning"' in html and "run cand" in html


@pytest.mark.parametrize("name", [c for c in COMMANDS if c != "study"])
def test_intact_runs_say_nothing_of_verification(files: dict[str, Path], name: str,
                                                 tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, _command(name, files, files["intact"], out))
    assert result.exit_code in (0, 1), result.output
    assert "UNVERIFIED" not in result.output
    for path in _written(out):
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            rows = data if isinstance(data, list) else [data]
            assert all(not row.get("unverified_runs") for row in rows), path
        else:
            assert "unverified_runs" not in path.read_text().splitlines()[0], path
    if name == "report":
        assert "unverified-warning" not in (out / "report.html").read_text()


def test_the_tamper_that_turned_gate_fail_into_pass(files: dict[str, Path],
                                                    tmp_path: Path) -> None:
    intact = runner.invoke(app, _command("gate", files, files["intact"], tmp_path / "a"))
    assert intact.exit_code == 1 and "Acceptance test: FAIL" in intact.output
    refused = runner.invoke(app, _command("gate", files, files["tampered"], tmp_path / "b"))
    assert refused.exit_code == 2 and "Acceptance test" not in refused.output
    allowed = runner.invoke(app, [*_command("gate", files, files["tampered"], tmp_path / "c"),
                                  "--allow-unverified"])
    assert allowed.exit_code == 0 and "Acceptance test: PASS" in allowed.output
    assert "UNVERIFIED" in allowed.output
    gate = json.loads((tmp_path / "c" / "gate.json").read_text())
    assert gate["passed"] is True and gate["unverified_runs"] == ["cand"]


def test_the_python_api_refuses_too_unless_allowed(files: dict[str, Path]) -> None:
    ref = RunRef(files["tampered"], "cand")
    with pytest.raises(UnverifiedRunError, match=f"case record '{LAWFUL}'"):
        load_records(ref)
    seen_now: list[str] = []
    with unverified_allowed(notify=lambda run: seen_now.append(run.run_id)) as seen:
        assert len(load_records(ref)) == 8
        assert unverified_notice() == {"unverified_runs": ["cand"]}
    assert [r.run_id for r in seen] == ["cand"] and seen_now == ["cand"]
    assert unverified_notice() == {}
    with pytest.raises(UnverifiedRunError):  # the permission ends with the block
        load_records(ref)
    with unverified_allowed(False), pytest.raises(UnverifiedRunError):
        load_records(ref)
    assert len(load_records(RunRef(files["intact"], "cand"))) == 8
