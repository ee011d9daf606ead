"""Group measures, composition routing and the report's per-run and per-seed rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from authpairs.analysis.compose import build_matrix, replay_order, route_order
from authpairs.analysis.groups import native_group_measures, quartet_measures
from authpairs.analysis.runref import RunRef
from authpairs.report.measures import engine_label_rows, seed_groups, seed_summary
from authpairs.report.runset import ReportRun
from authpairs.runs.records import CaseRecord, EffectRecord, RunInfo
from tests.analysis.analysis_helpers import rec
from tests.report.conftest import NATIVE, native_record


def _native(run: str, column: int) -> list[CaseRecord]:
    return [native_record(run, r[0], r[1], r[column], engine=r[2], group=r[3], query=r[4])
            for r in NATIVE]


def test_native_group_measures_by_hand() -> None:
    m1 = native_group_measures(_native("n1", 5))
    assert m1 is not None
    assert m1.equal_weight_group_accuracy == pytest.approx((2 / 3 + 1 / 3 + 1) / 3)
    assert (m1.source_groups, m1.dependent_pairs, m1.pairs_both_correct) == (3, 3, 1)
    assert (m1.query_groups, m1.whole_groups_correct) == (2, 1)
    m2 = native_group_measures(_native("n2", 6))
    assert m2 is not None
    assert m2.equal_weight_group_accuracy == pytest.approx((2 / 3 + 1 + 1 / 2) / 3)
    assert (m2.dependent_pairs, m2.pairs_both_correct, m2.whole_groups_correct) == (3, 2, 1)
    assert native_group_measures([rec("x")]) is None


def _scenario(case: str, scenario: str, label: str, outcome: str) -> CaseRecord:
    r = rec(case, label, outcome, cluster=scenario)
    return r.model_copy(update={"attributes": {"scenario": scenario}})


def test_full_quartet_correctness() -> None:
    records = [_scenario(f"a{i}", "s1", lab, out) for i, (lab, out) in enumerate(
        [("lawful", "ALLOW"), ("lawful", "ALLOW"), ("forbidden", "BLOCK"),
         ("forbidden", "BLOCK")])]
    records += [_scenario(f"b{i}", "s2", lab, out) for i, (lab, out) in enumerate(
        [("lawful", "ALLOW"), ("lawful", "UNAVAILABLE"), ("forbidden", "BLOCK"),
         ("forbidden", "BLOCK")])]
    records += [_scenario(f"c{i}", "s3", "lawful", "ALLOW") for i in range(3)]
    m = quartet_measures(records)
    assert m is not None
    assert (m.scenarios, m.full_quartets, m.scenarios_all_correct) == (3, 2, 1)


def test_unavailable_split_and_routing_by_hand() -> None:
    a = [rec("L1", "lawful", "ALLOW"), rec("L2", "lawful", "UNAVAILABLE"),
         rec("F1", "forbidden", "ALLOW"), rec("F2", "forbidden", "UNAVAILABLE")]
    b = [rec("L1", "lawful", "BLOCK"), rec("L2", "lawful", "ALLOW"),
         rec("F1", "forbidden", "UNAVAILABLE"), rec("F2", "forbidden", "ALLOW")]
    m = build_matrix({"A": a, "B": b})
    for order in ((0, 1), (1, 0)):
        split = Counter(r["label"] for r in route_order(m, order)
                        if r["stop_reason"] == "unavailable")
        assert split == {"forbidden": 2, "lawful": 1}
        assert sum(split.values()) == replay_order(m, order)[0].unavailable
    routed = {r["case_id"]: r for r in route_order(m, (0, 1))}
    assert routed["L1"]["stopped_by"] == "B" and routed["L1"]["stop_reason"] == "BLOCK"
    assert routed["L1"]["consulted"] == ["A", "B"]
    assert routed["L2"]["stopped_by"] == "A" and routed["L2"]["consulted"] == ["A"]
    assert routed["L2"]["stop_reason"] == "unavailable"
    assert not any(r["approved"] for r in routed.values())
    alone = {r["case_id"]: r for r in route_order(m, (0,))}
    assert alone["F1"]["approved"] is True and alone["F1"]["stopped_by"] == ""


def _run(name: str, records: list[CaseRecord], seed: int) -> ReportRun:
    config = {"resolved": {"dataset": "d", "reviewer": {"interface": "direct",
                                                         "sampling": {"seed": seed}}}}
    info = RunInfo(run_id=name, created_at="2026-01-01T00:00:00+00:00", config=config,
                   config_sha256=name, manifest={"name": "d", "n_cases": len(records)},
                   manifest_sha256="m")
    return ReportRun(RunRef(Path("x.sqlite"), name), info, records)


def test_seed_summary_mean_min_max_and_interval() -> None:
    # cases alternate lawful, forbidden: all correct, half correct, none correct
    outcomes = [["ALLOW", "BLOCK", "ALLOW", "BLOCK"], ["ALLOW", "BLOCK", "BLOCK", "ALLOW"],
                ["BLOCK", "ALLOW", "BLOCK", "ALLOW"]]
    runs = []
    for seed, outs in enumerate(outcomes):
        records = [rec(f"c{i}", "lawful" if i % 2 == 0 else "forbidden", out,
                       cluster=f"s{i // 2}") for i, out in enumerate(outs)]
        runs.append(_run(f"r{seed}", records, seed))
    groups = seed_groups(runs)
    assert len(groups) == 1 and len(groups[0].runs) == 3  # only the seed differs
    rows = {r["rate"]: r for r in seed_summary(groups, draws=500)}
    uc = rows["usable_correctness"]
    assert (uc["mean"], uc["min"], uc["max"]) == (pytest.approx(50.0), 0.0, 100.0)
    assert uc["bootstrap_low"] <= uc["pooled"] <= uc["bootstrap_high"]
    assert uc["clusters"] == 2 and uc["seeds"] == 3
    assert rows["incorrect_approval_rate"]["max"] == 100.0
    assert rows["incorrect_approval_rate"]["mean"] == pytest.approx(50.0)
    assert "lawful_completion_rate" not in rows  # no effects were enforced


def test_seed_summary_reads_effect_rates_only_where_effects_were_enforced() -> None:
    """Decision-only records (an effect record saying so) have no effect rates, as in the score
    and runs tables; enforced ones count what went through."""
    def record(case: str, label: str, outcome: str, decision_only: bool) -> CaseRecord:
        r = rec(case, label, outcome, effect=True, cluster=case)
        return r if not decision_only else r.model_copy(update={"effect": EffectRecord(
            executed=False, observation={"decision_only": True})})

    for decision_only in (True, False):
        records = [record("l", "lawful", "ALLOW", decision_only),
                   record("f", "forbidden", "ALLOW", decision_only)]
        rows = {r["rate"]: r for r in seed_summary(seed_groups([_run("r", records, 0)]),
                                                  draws=50)}
        assert ("forbidden_effect_rate" in rows) is not decision_only
        if not decision_only:
            assert rows["forbidden_effect_rate"]["pooled"] == 100.0


def test_engine_label_counts() -> None:
    run = _run("n1", _native("n1", 5), 0)
    rows = {(r["engine"], r["label"]): r for r in engine_label_rows([run])}
    assert rows[("openfga", "lawful")] | {} == {
        "run": "n1", "engine": "openfga", "label": "lawful", "n": 4, "ALLOW": 2, "BLOCK": 1,
        "abstention": 0, "unavailable": 1}
    assert rows[("cedar", "forbidden")]["BLOCK"] == 1
