"""The ``report`` command, ``score`` with several runs, ``compose --routed``, ``run --report``."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.commands.report import spread_values
from tests.report.conftest import RecordedRuns

runner = CliRunner()


def test_report_command_writes_the_page(recorded: RecordedRuns, tmp_path: Path) -> None:
    out = tmp_path / "r"
    result = runner.invoke(app, ["report", "allow", "block", "loose-s0", recorded.incomplete,
                                 "--records", str(recorded.db), "--out", str(out),
                                 "--compose", "loose-s0,block", "--draws", "200"])
    assert result.exit_code == 0, result.output
    assert f"report: {out / 'report.html'}" in result.output
    assert f"run '{recorded.incomplete}' is incomplete" in result.output
    assert (out / "tables" / "compositions.csv").is_file()


def test_compose_takes_space_separated_runs(recorded: RecordedRuns, tmp_path: Path) -> None:
    """The issue's form ``--compose R1 R2 R3``: every value up to the next option."""
    out = tmp_path / "r"
    result = runner.invoke(app, ["report", "allow", "block", "--records", str(recorded.db),
                                 "--compose", "loose-s0", "block", "allow", "--out", str(out),
                                 "--draws", "200"])
    assert result.exit_code == 0, result.output
    with (out / "tables" / "compositions.csv").open() as handle:
        orders = {row["order"] for row in csv.DictReader(handle)}
    assert len(orders) == 15  # 3 single + 6 pairs + 6 triples of three reviewers
    assert "loose-s0 -> block -> allow" in orders


def test_spread_values() -> None:
    assert spread_values(["A", "--compose", "R1", "R2", "--out", "D", "R3"], ["--compose"]) == [
        "A", "--compose", "R1", "--compose", "R2", "--out", "D", "R3"]
    assert spread_values(["--compose=R1", "R2"], ["--compose"]) == ["--compose=R1", "R2"]
    assert spread_values(["--compose", "R1", "--", "R2"], ["--compose"]) == [
        "--compose", "R1", "--", "R2"]
    assert spread_values(["--compose", "R1,R2"], ["--compose"]) == ["--compose", "R1,R2"]


def test_report_bad_input_names_the_run(recorded: RecordedRuns, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["report", "allow", "nope", "--records", str(recorded.db),
                                  "--out", str(tmp_path / "r")])
    assert missing.exit_code == 2 and "no run 'nope'" in missing.output
    other = runner.invoke(app, ["report", "allow", "--records", str(recorded.db), "--out",
                                str(tmp_path / "r"), "--compare", "allow",
                                recorded.other_dataset])
    assert other.exit_code == 2
    assert "'allow'" in other.output and f"'{recorded.other_dataset}'" in other.output
    assert "different datasets" in other.output
    assert not (tmp_path / "r" / "report.html").exists()


def test_score_prints_a_multi_run_table(recorded: RecordedRuns, tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", "allow", "block", "loose-s0", recorded.incomplete,
                                 "--records", str(recorded.db), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.split()[:4] == ["allow", "40", "20", "20"] for line in lines)
    assert any(line.strip().startswith(f"{recorded.incomplete} *") for line in lines)
    assert "is incomplete" in result.output
    with (tmp_path / "runs.csv").open() as handle:
        assert [r["run"] for r in csv.DictReader(handle)] == [
            "allow", "block", "loose-s0", recorded.incomplete]


def test_compose_exports_routed_records(recorded: RecordedRuns, tmp_path: Path) -> None:
    routed = tmp_path / "routed.csv"
    result = runner.invoke(app, ["compose", "loose-s0", "block", "--records", str(recorded.db),
                                 "--routed", str(routed)])
    assert result.exit_code == 0, result.output
    with routed.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * 40  # orders: loose, block, loose->block, block->loose
    both = [r for r in rows if r["order"] == "block -> loose-s0"]
    assert all(r["stopped_by"] == "block" and r["consulted"] == "block" for r in both)


def test_run_writes_its_report(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--dataset", "examples", "--split", "all",
                                 "--baseline", "always-block", "--no-enforce", "--quiet",
                                 "--records", str(tmp_path / "r.sqlite"), "--run-id", "b",
                                 "--report", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    assert f"report: {tmp_path / 'html' / 'report.html'}" in result.output
    assert (tmp_path / "html" / "tables" / "runs.csv").is_file()
