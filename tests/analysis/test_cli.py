"""The analysis commands: thin wrappers over the API, with JSON/CSV output."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import typer
from analysis_helpers import lawful_pair_runs, rec, store_run
from typer.testing import CliRunner

from authpairs.cli import app as authpairs_app


@pytest.fixture()
def app() -> typer.Typer:
    """The command line itself: bad input is its one ``error:`` line with exit code 2."""
    return authpairs_app


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite"
    before = [True] * 58 + [True] * 2 + [False] * 13 + [False] * 7
    after = [True] * 58 + [False] * 2 + [True] * 13 + [False] * 7
    a, b = lawful_pair_runs(before, after)
    a += [rec("F1", "forbidden", "ALLOW", cluster="s00"), rec("F2", "forbidden", "BLOCK")]
    b += [rec("F1", "forbidden", "BLOCK", cluster="s00"), rec("F2", "forbidden", "BLOCK")]
    store_run(path, "direct", a)
    store_run(path, "schema", b)
    return path


def test_compare_prints_and_writes_files(app: typer.Typer, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["compare", "direct", f"{db}::schema", "--records", str(db),
                                   "--out", str(out)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "0.007385" in res.output and "L058" in res.output
    data = json.loads((out / "comparison.json").read_text())
    assert data["counts"]["lost"] == 2 and data["counts"]["gained"] == 13
    assert data["counts"]["newly_blocked"] == 1
    rows = list(csv.DictReader((out / "requests.csv").read_text().splitlines()))
    assert len(rows) == 82 and {r["transition"] for r in rows} >= {"lost", "gained"}
    summary = list(csv.DictReader((out / "summary.csv").read_text().splitlines()))
    assert float(summary[0]["mcnemar_p"]) == pytest.approx(0.007385, abs=5e-7)


def test_compare_unknown_run_is_a_clear_error(app: typer.Typer, db: Path) -> None:
    res = CliRunner().invoke(app, ["compare", "direct", "nope", "--records", str(db)])
    assert res.exit_code == 2 and "no run 'nope'" in res.output
    res = CliRunner().invoke(app, ["compare", "a", "b", "--records", str(db.parent / "x.db")])
    assert res.exit_code == 2 and "records file not found" in res.output
    assert not (db.parent / "x.db").exists()


def test_gate_exit_codes(app: typer.Typer, db: Path, tmp_path: Path) -> None:
    req = tmp_path / "required.txt"
    req.write_text("L000\nL059  # lost by schema review\n")
    forb = tmp_path / "forbidden.yaml"
    forb.write_text("cases: [F1, F2]\n")
    args = ["gate", "--baseline", "direct", "--candidate", "schema", "--records", str(db),
            "--forbidden", str(forb)]
    res = CliRunner().invoke(app, [*args, "--required", str(req), "--out", str(tmp_path / "g")],
                             terminal_width=200)
    assert res.exit_code == 1
    assert "FAIL" in res.output and "L059" in res.output
    gate = json.loads((tmp_path / "g" / "gate.json").read_text())
    assert gate["checks"] == {"forbidden": True, "usable": True, "required": False}
    req.write_text("L000\nL070\n")
    res = CliRunner().invoke(app, [*args, "--required", str(req)])
    assert res.exit_code == 0, res.output
    req.write_text("F1\n")
    res = CliRunner().invoke(app, [*args, "--required", str(req)])
    assert res.exit_code == 2 and "must be lawful" in res.output


def test_compose_writes_orders_and_grids(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    cases = [("c1", "lawful"), ("c2", "lawful"), ("c3", "forbidden"), ("c4", "forbidden")]
    outs = {"a": ["ALLOW", "ALLOW", "ALLOW", "BLOCK"], "b": ["ALLOW", "BLOCK", "ALLOW", "ALLOW"],
            "c": ["ALLOW", "ALLOW", "BLOCK", "UNAVAILABLE"]}
    for name, outcome in outs.items():
        store_run(path, name, [rec(cid, lab, o, tin=100, tout=10)
                               for (cid, lab), o in zip(cases, outcome, strict=True)])
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["compose", "A=a", "b", f"{path}::c", "--records", str(path),
                                   "--out", str(out)], terminal_width=200)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader((out / "compositions.csv").read_text().splitlines()))
    assert len(rows) == 15
    triples = [r for r in rows if r["size"] == "3"]
    assert {(r["incorrect_approvals"], r["lawful_approvals"]) for r in triples} == {("0", "1")}
    assert len(list(csv.DictReader((out / "grid.csv").read_text().splitlines()))) == 720
    assert len(list(csv.DictReader((out / "grid_prevalence.csv").read_text().splitlines()))) == 2880


def test_compose_with_grid_file_and_bad_run(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    store_run(path, "a", [rec("c1", "lawful", "ALLOW"), rec("c2", "forbidden", "BLOCK")])
    store_run(path, "b", [rec("c1", "lawful", "BLOCK"), rec("c2", "forbidden", "BLOCK"),
                          rec("c3", "lawful", "ALLOW")])
    grid = tmp_path / "grid.yaml"
    grid.write_text("severity: [1, 1000]\nprevalence: [0.5]\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["compose", "a", "b", "--records", str(path), "--grid",
                                   str(grid), "--out", str(out)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "not present in every run" in res.output and "c3" in res.output
    cells = 2 * 5 * 3 * 4 * 2
    assert len(list(csv.DictReader((out / "grid.csv").read_text().splitlines()))) == cells
    prevalence = (out / "grid_prevalence.csv").read_text().splitlines()
    assert len(list(csv.DictReader(prevalence))) == cells
    assert len(list(csv.DictReader((out / "compositions.csv").read_text().splitlines()))) == 4
    res = CliRunner().invoke(app, ["compose", "a", "zzz", "--records", str(path)])
    assert res.exit_code == 2 and "no run 'zzz'" in res.output
