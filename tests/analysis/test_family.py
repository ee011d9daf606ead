"""Declared contrast families (existing runs, Holm over the listed contrasts)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import typer
from analysis_helpers import lawful_pair_runs, store_run
from typer.testing import CliRunner

from authpairs.analysis.family import FamilyError, load_family, run_family
from authpairs.analysis.stats import holm
from authpairs.commands.analysis import register


@pytest.fixture()
def family_file(tmp_path: Path) -> Path:
    db = tmp_path / "r.sqlite"
    other = tmp_path / "other.sqlite"
    a, b = lawful_pair_runs([True] * 10 + [False] * 10, [False] * 2 + [True] * 18)
    c, _ = lawful_pair_runs([True] * 20, [True] * 20)
    store_run(db, "A", a)
    store_run(db, "B", b)
    store_run(other, "C", c)
    f = tmp_path / "family.yaml"
    f.write_text(f"records: {db}\ndraws: 300\nseed: 5\ncontrasts:\n"
                 "  - {name: a-to-b, before: A, after: B}\n"
                 f"  - [B, {other}::C]\n  - [A, {other}::C]\n")
    return f


def test_family_holm_over_declared_contrasts(family_file: Path) -> None:
    spec = load_family(family_file)
    assert spec.contrasts[0].name == "a-to-b" and spec.draws == 300
    results = run_family(spec)
    assert len(results) == 3
    ab = results[0].comparison.counts()
    assert (ab["lost"], ab["gained"]) == (2, 10)
    assert results[1].comparison.before_run == "B" and results[1].comparison.after_run == "C"
    raw = [c.stats.sign_flip.p_value for c in results]
    assert [c.holm_sign_flip_p for c in results] == pytest.approx(holm(raw))
    assert all(c.stats.bootstrap.seed == 5 for c in results)


def test_family_cli(family_file: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    register(app, typer.Typer())
    res = CliRunner().invoke(app, ["contrasts", str(family_file), "--out", str(tmp_path / "o")],
                             terminal_width=220)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader((tmp_path / "o" / "contrasts.csv").read_text().splitlines()))
    assert rows[0]["contrast"] == "a-to-b" and len(rows) == 3


@pytest.mark.parametrize("body,message", [
    ("contrasts: []\n", "non-empty list"),
    ("contrasts:\n  - [A]\n", r"contrasts\[0\]: expected \[before, after\]"),
    ("contrasts:\n  - {before: A}\n", "field 'after'"),
    ("contrasts:\n  - [A, B]\n  - [A, B]\n", "duplicate contrast name"),
    ("draws: 0\ncontrasts:\n  - [A, B]\n", "draws"),
    ("bogus: 1\ncontrasts:\n  - [A, B]\n", "unknown field"),
])
def test_family_file_errors(tmp_path: Path, body: str, message: str) -> None:
    f = tmp_path / "fam.yaml"
    f.write_text(body)
    with pytest.raises(FamilyError, match=message):
        load_family(f)
