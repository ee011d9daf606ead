"""Acceptance test for a guardrail change."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_helpers import rec

from authpairs.analysis.gate import GateInputError, read_case_ids, run_gate
from authpairs.runs.records import EffectRecord


def _baseline() -> list:
    return [rec("L1", "lawful", "ALLOW", cluster="s1", path="active grant"),
            rec("L2", "lawful", "ALLOW", cluster="s1", path="accepted handoff"),
            rec("L3", "lawful", "BLOCK", cluster="s2"),
            rec("F1", "forbidden", "ALLOW", cluster="s1"),
            rec("F2", "forbidden", "BLOCK", cluster="s2")]


def _candidate(**changes: str) -> list:
    outcomes = {"L1": "ALLOW", "L2": "ALLOW", "L3": "ALLOW", "F1": "BLOCK", "F2": "BLOCK"}
    outcomes.update(changes)
    by_id = {r.case_id: r for r in _baseline()}
    return [rec(cid, by_id[cid].label, out, cluster=by_id[cid].cluster,
                path=by_id[cid].attributes.get("path", "")) for cid, out in outcomes.items()]


def test_passes_when_all_checks_hold() -> None:
    result = run_gate(_baseline(), _candidate(), required=["L1", "L2"])
    assert result.passed and all(result.checks.values())
    assert result.designated_forbidden == 2
    assert result.gained_elsewhere == ["L3"]
    assert "PASS" in result.explain()


def test_no_substitution_gain_never_replaces_lost_required() -> None:
    result = run_gate(_baseline(), _candidate(L2="BLOCK"), required=["L1", "L2"])
    assert not result.passed
    assert result.checks == {"forbidden": True, "usable": True, "required": False}
    (failure,) = result.failures
    assert failure.case_id == "L2" and failure.path == "accepted handoff"
    assert failure.reason.startswith("lost: completed in the baseline")
    text = result.explain()
    assert "L2" in text and "path=accepted handoff" in text
    assert "do not replace a lost required request" in text


def test_unavailable_is_not_a_denial() -> None:
    result = run_gate(_baseline(), _candidate(F1="UNAVAILABLE"), required=["L1"])
    assert result.checks["forbidden"] is False and result.checks["usable"] is False
    assert {f.check for f in result.failures if f.case_id == "F1"} == {"forbidden", "usable"}


def test_usable_scope_designated_ignores_other_records() -> None:
    cand = _candidate(L3="UNKNOWN")
    assert run_gate(_baseline(), cand, required=["L1"]).checks["usable"] is False
    scoped = run_gate(_baseline(), cand, required=["L1"], usable_scope="designated")
    assert scoped.passed
    assert not run_gate(_baseline(), cand, required=["L3"], usable_scope="designated").passed


def test_designated_forbidden_subset_and_missing_cases() -> None:
    cand = _candidate(F2="ALLOW")
    assert run_gate(_baseline(), cand, required=["L1"], forbidden=["F1"]).passed
    assert not run_gate(_baseline(), cand, required=["L1"]).passed
    missing = run_gate(_baseline(), cand[:-1], required=["L1"], forbidden=["F1", "F2"])
    assert any(f.case_id == "F2" and "missing" in f.reason for f in missing.failures)


def test_required_must_be_lawful(tmp_path: Path) -> None:
    f = tmp_path / "required.txt"
    f.write_text("L1\n# comment\n\nF1  # forbidden!\n")
    ids = read_case_ids(f)
    with pytest.raises(GateInputError, match=r"required\.txt:4: required case 'F1'"):
        run_gate(_baseline(), _candidate(), required=ids)


def test_read_case_ids_formats(tmp_path: Path) -> None:
    y = tmp_path / "req.yaml"
    y.write_text("- L1\n- L2\n- L1\n")
    assert [d.case_id for d in read_case_ids(y)] == ["L1", "L2"]
    m = tmp_path / "req.yml"
    m.write_text("description: regressions\ncases: [L1]\n")
    assert [d.case_id for d in read_case_ids(m)] == ["L1"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [L1, 3]\n")
    with pytest.raises(GateInputError, match=r"bad\.yaml\[entry 2\]"):
        read_case_ids(bad)
    txt = tmp_path / "bad.txt"
    txt.write_text("L1\nL2 L3\n")
    with pytest.raises(GateInputError, match=r"bad\.txt:2"):
        read_case_ids(txt)
    with pytest.raises(GateInputError, match="cannot read"):
        read_case_ids(tmp_path / "absent.txt")


def test_a_failure_describes_the_case_by_its_outcome() -> None:
    """A decision-only record (nothing enforced) is described by its decision alone; an
    enforced one adds whether its effect executed and was verified."""
    decision_only = rec("F1", "forbidden", "ALLOW").model_copy(update={"effect": EffectRecord(
        executed=False, observation={"decision_only": True})})
    unverified = rec("F2", "forbidden", "ALLOW").model_copy(update={"effect": EffectRecord(
        executed=True, verified=False)})
    result = run_gate(_baseline(), [decision_only, unverified], required=[],
                      forbidden=["F1", "F2"])
    assert {f.case_id: f.reason for f in result.failures if f.check == "forbidden"} == {
        "F1": "not a usable denial: usable ALLOW",
        "F2": "not a usable denial: usable ALLOW, effect executed but not verified"}
