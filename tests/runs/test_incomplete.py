"""Incomplete runs are visible: run, score, compare, export and gate state n recorded of N
expected and name the missing cases; gate fails on an incomplete run unless told otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from tests.runs.scripts import DOWN_MARKER

runner = CliRunner()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    db = tmp_path / "r.sqlite"
    config = tmp_path / "down.yaml"
    config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.scripts:down_for_one\n"
                      "infra_retries: 0\n")
    result = runner.invoke(app, ["run", "--config", str(config), "--dataset", "examples",
                                 "--split", "all", "--records", str(db), "--run-id", "part",
                                 "--no-enforce", "--quiet"])
    assert result.exit_code == 3, result.output
    flat = " ".join(result.output.split())
    assert "7 recorded of 8 expected" in flat and DOWN_MARKER in flat
    assert "1 x ConnectError: connection refused" in flat
    result = runner.invoke(app, ["run", "--dataset", "examples", "--split", "all",
                                 "--baseline", "always-block", "--records", str(db),
                                 "--run-id", "full", "--no-enforce", "--quiet"])
    assert result.exit_code == 0, result.output
    return db


def test_score_states_missing_cases_and_writes_both_numbers(runs: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", "part", "--records", str(runs), "--out",
                                 str(tmp_path / "o")])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    assert "7 recorded of 8 expected; INCOMPLETE, 1 missing: " + DOWN_MARKER in flat
    rows = json.loads((tmp_path / "o" / "scores.json").read_text())
    assert rows[0]["expected"] == 8 and rows[0]["recorded"] == 7
    assert rows[0]["missing"] == [DOWN_MARKER] and rows[0]["complete"] is False
    strict = runner.invoke(app, ["score", "part", "--records", str(runs), "--require-complete"])
    assert strict.exit_code == 1


def test_compare_export_and_runs_state_completeness(runs: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", "full", "part", "--records", str(runs),
                                 "--no-list"])
    flat = " ".join(result.output.split())
    assert "run full: 8 recorded of 8 expected" in flat
    assert "run part: 7 recorded of 8 expected; INCOMPLETE" in flat
    out = tmp_path / "e.jsonl"
    result = runner.invoke(app, ["export", "part", "--records", str(runs), "--out", str(out)])
    assert result.exit_code == 0
    head = json.loads(out.read_text().splitlines()[0])
    assert head["completeness"]["missing"] == [DOWN_MARKER]
    listing = runner.invoke(app, ["runs", "--records", str(runs)]).output
    assert "7/8 INCOMPLETE" in " ".join(listing.split())


def test_gate_fails_on_an_incomplete_run_unless_allowed(runs: Path, tmp_path: Path) -> None:
    required = tmp_path / "required.txt"
    required.write_text("")
    args = ["gate", "--baseline", "full", "--candidate", "part", "--required", str(required),
            "--usable-scope", "designated", "--forbidden", str(required), "--records",
            str(runs)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "incomplete run(s): part" in " ".join(result.output.split())
    allowed = runner.invoke(app, [*args, "--allow-incomplete"])
    assert allowed.exit_code == 0, allowed.output
