"""Run addressing: RUN_ID or PATH::RUN_ID."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_helpers import rec, store_run

from authpairs.analysis.runref import RunNotFoundError, load_run, parse_run_ref


def test_parse_addresses() -> None:
    assert parse_run_ref("run-1", "d.sqlite") == parse_run_ref("d.sqlite::run-1")
    ref = parse_run_ref("C:/x/y.sqlite::run-2")
    assert ref.path == Path("C:/x/y.sqlite") and ref.run_id == "run-2"
    for bad in ("", "::run", "path::"):
        with pytest.raises(RunNotFoundError):
            parse_run_ref(bad)


def test_load_run_errors_and_success(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with pytest.raises(RunNotFoundError, match="records file not found"):
        load_run("x", db)
    assert not db.exists()
    store_run(db, "A", [rec("1"), rec("2", "forbidden", "BLOCK")])
    ref, records = load_run(f"{db}::A")
    assert ref.run_id == "A" and [r.case_id for r in records] == ["1", "2"]
    with pytest.raises(RunNotFoundError, match=r"no run 'B' \(runs here: A\)"):
        load_run("B", db)
