"""Study plans: expansion, the contrast family with Holm, execution and resumption."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from analysis_helpers import rec, store_run

from authpairs.analysis.stats import holm
from authpairs.analysis.study import (
    StudyPlanError,
    analyze_family,
    contrast_family,
    expand_plan,
    load_plan,
    plan_from_dict,
    run_study,
)
from authpairs.runs.config import RunConfig

INTERFACES = ("direct", "structured", "nemo", "schema")


def _plan_dict(records: str) -> dict:
    return {
        "name": "matched",
        "records": records,
        "base": {"dataset": "language", "split": "test"},
        "factors": {
            "model": {"m9": {"reviewer.backend.model": "m9"},
                      "m27": {"reviewer.backend.model": "m27"}},
            "interface": {i: {"reviewer.interface": i} for i in INTERFACES},
        },
        "seeds": [0, 1, 2],
        "analysis": {"draws": 500, "seed": 11},
    }


def test_expansion_and_family_of_36(tmp_path: Path) -> None:
    plan = plan_from_dict(_plan_dict(str(tmp_path / "r.sqlite")))
    cells = expand_plan(plan)
    assert len(cells) == 24 and len({c.run_id for c in cells}) == 24
    assert {c.config.reviewer.sampling.seed for c in cells} == {0, 1, 2}
    family = contrast_family(plan, cells)
    assert len(family) == 36
    for spec in family:
        before, after = dict(spec.before.levels), dict(spec.after.levels)
        assert before["model"] == after["model"] and spec.before.seed == spec.after.seed
        assert INTERFACES.index(before["interface"]) < INTERFACES.index(after["interface"])
    assert family[0].name == "model=m9 seed=0: direct -> structured"


def test_plan_errors_name_the_field(tmp_path: Path) -> None:
    bad = _plan_dict("x.sqlite")
    bad["compare"] = "temperature"
    with pytest.raises(StudyPlanError, match="compare"):
        plan_from_dict(bad, origin="plan.yaml")
    bad = _plan_dict("x.sqlite")
    bad["factors"]["interface"]["direct"] = {"reviewer.nonsense": 1}
    with pytest.raises(StudyPlanError, match=r"reviewer\.nonsense|nonsense"):
        expand_plan(plan_from_dict(bad), origin="plan.yaml")
    same = _plan_dict("x.sqlite")
    same["factors"]["interface"]["direct"] = {"reviewer.interface": "schema"}
    with pytest.raises(StudyPlanError, match="same configuration"):
        expand_plan(plan_from_dict(same))
    path = tmp_path / "p.yaml"
    path.write_text("- not a mapping\n")
    with pytest.raises(StudyPlanError, match=r"p\.yaml"):
        load_plan(path)


def test_family_from_stored_records_with_holm(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    plan = plan_from_dict(_plan_dict(str(db)))
    cells = expand_plan(plan)
    rng = np.random.default_rng(3)
    for cell in cells:
        records = []
        for s in range(10):
            for k in range(2):
                outcome = "ALLOW" if rng.random() < 0.7 else "BLOCK"
                records.append(rec(f"L{s}{k}", "lawful", outcome, cluster=f"s{s}"))
                outcome = "ALLOW" if rng.random() < 0.2 else "UNAVAILABLE"
                records.append(rec(f"F{s}{k}", "forbidden", outcome, cluster=f"s{s}"))
        store_run(db, cell.run_id, records)
    result = run_study(plan, execute=False)
    assert len(result.contrasts) == 36
    raw = [c.stats.sign_flip.p_value for c in result.contrasts]
    assert [c.holm_sign_flip_p for c in result.contrasts] == pytest.approx(holm(raw))
    mc = [c.stats.mcnemar_p for c in result.contrasts]
    assert [c.holm_mcnemar_p for c in result.contrasts] == pytest.approx(holm(mc))
    assert all(c.stats.bootstrap.draws == 500 and c.stats.bootstrap.seed == 11
               for c in result.contrasts)
    row = result.summary()[0]
    assert row["model"] == "m9" and row["interface_before"] == "direct"
    # Missing records for a cell are a clear error.
    with pytest.raises(StudyPlanError, match="no records"):
        analyze_family(plan, cells, {})


def test_end_to_end_with_baseline_reviewers(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump({
        "records": str(db),
        "base": {"dataset": "examples", "split": "all", "concurrency": 2},
        "factors": {"reviewer": {"allow": {"reviewer.baseline": "always-allow"},
                                 "block": {"reviewer.baseline": "always-block"}}},
        "seeds": [0, 1],
        "analysis": {"draws": 200},
    }))
    calls: list[str] = []

    def executor(config: RunConfig) -> str:
        from authpairs.api import run

        calls.append(config.resolved_run_id())
        return run(config).run_id

    plan = load_plan(plan_file)
    first = run_study(plan, executor=executor)
    assert len(first.contrasts) == 2
    for c in first.contrasts:
        n = c.comparison.counts()
        assert (n["lost"], n["gained"], n["retained"]) == (4, 0, 0)
        assert (n["newly_blocked"], n["newly_approved"]) == (4, 0)
        assert c.stats.mcnemar_p == pytest.approx(2 * 0.5**4)
    # Re-running resumes: the same run ids, no duplicate records.
    again = run_study(plan, executor=executor)
    assert [c.summary() for c in again.contrasts] == [c.summary() for c in first.contrasts]
    assert calls[:4] == calls[4:]
