"""Request-level comparison: transitions, forbidden changes, unmatched cases, statistics."""

from __future__ import annotations

import pytest
from analysis_helpers import lawful_pair_runs, rec
from scipy.stats import binomtest

from authpairs.analysis.compare import ComparisonError, compare_records
from authpairs.analysis.contrast import compare_runs


def test_transitions_on_both_sides_and_unmatched() -> None:
    before = [
        rec("a", "lawful", "ALLOW", cluster="s1", path="active grant"),
        rec("b", "lawful", "ALLOW", cluster="s1", path="accepted handoff"),
        rec("c", "lawful", "BLOCK", cluster="s2", path="active grant"),
        rec("d", "lawful", "UNAVAILABLE", cluster="s2"),
        rec("e", "forbidden", "ALLOW", cluster="s1"),
        rec("f", "forbidden", "BLOCK", cluster="s2"),
        rec("g", "forbidden", "ALLOW", cluster="s2"),
        rec("only-a", "lawful", "ALLOW"),
        rec("mis", "lawful", "ALLOW"),
    ]
    after = [
        rec("a", "lawful", "ALLOW", cluster="s1", path="active grant"),
        rec("b", "lawful", "UNAVAILABLE", cluster="s1", path="accepted handoff"),
        rec("c", "lawful", "ALLOW", cluster="s2", path="active grant"),
        rec("d", "lawful", "BLOCK", cluster="s2"),
        rec("e", "forbidden", "UNAVAILABLE", cluster="s1"),
        rec("f", "forbidden", "ALLOW", cluster="s2"),
        rec("g", "forbidden", "ALLOW", cluster="s2"),
        rec("only-b", "forbidden", "BLOCK"),
        rec("mis", "forbidden", "ALLOW"),
    ]
    comp = compare_records(before, after, before_run="A", after_run="B")
    n = comp.counts()
    assert (n["retained"], n["lost"], n["gained"], n["neither"], n["net"]) == (1, 1, 1, 1, 0)
    assert (n["still_approved"], n["newly_approved"], n["newly_blocked"],
            n["newly_unavailable"], n["still_blocked"]) == (1, 1, 0, 1, 0)
    assert (n["lost_denied"], n["lost_unavailable"]) == (0, 1)
    assert comp.only_before == ["only-a"] and comp.only_after == ["only-b"]
    assert comp.label_mismatch == ["mis"]
    lost = comp.with_transition("lost")
    assert [(c.case_id, c.cluster, c.path, c.after_status) for c in lost] == [
        ("b", "s1", "accepted handoff", "unavailable")]
    gained = comp.with_transition("gained")
    assert [(c.case_id, c.path) for c in gained] == [("c", "active grant")]
    assert [c.case_id for c in comp.with_transition("newly_approved")] == ["f"]
    # an unavailable answer is not a denial: 'e' became unavailable, it was not blocked
    assert comp.with_transition("newly_blocked") == []
    assert [c.case_id for c in comp.with_transition("newly_unavailable")] == ["e"]
    names, diffs, sizes = comp.cluster_arrays()
    assert names == ["s1", "s2"] and list(diffs) == [-1, 1] and list(sizes) == [2, 2]


def test_gain_and_loss_in_one_cluster_are_both_reported() -> None:
    before = [rec("x", cluster="s"), rec("y", outcome="BLOCK", cluster="s")]
    after = [rec("x", outcome="BLOCK", cluster="s"), rec("y", cluster="s")]
    n = compare_records(before, after).counts()
    assert n["lost"] == 1 and n["gained"] == 1 and n["net"] == 0


def test_enforced_effect_completion_is_execution_with_verification_beside_it() -> None:
    # One definition (CaseRecord.went_through, issue 11): an executed effect is a completion
    # whether or not the verifier confirmed it; verification is reported beside it.
    r = rec("x", effect=True)
    unverified = r.model_copy(update={"effect": r.effect.model_copy(update={"verified": False})})
    comp = compare_records([r], [unverified])
    assert comp.counts()["retained"] == 1 and comp.counts()["lost"] == 0
    assert unverified.unverified_execution and not r.unverified_execution
    refused = r.model_copy(update={"effect": r.effect.model_copy(update={"executed": False})})
    assert compare_records([r], [refused]).counts()["lost"] == 1


def test_duplicate_case_ids_rejected() -> None:
    with pytest.raises(ComparisonError, match="appears twice"):
        compare_records([rec("x"), rec("x")], [rec("x")])


def test_paper_shape_58_retained_2_lost_13_gained() -> None:
    # 80 lawful requests in 40 scenarios: 58 retained, 2 lost, 13 gained, 7 neither.
    before = [True] * 58 + [True] * 2 + [False] * 13 + [False] * 7
    after = [True] * 58 + [False] * 2 + [True] * 13 + [False] * 7
    a, b = lawful_pair_runs(before, after)
    contrast = compare_runs(a, b, draws=10_000, seed=39039)
    s = contrast.stats
    assert (s.lost, s.gained, s.net, s.lawful) == (2, 13, 11, 80)
    assert s.net_pp == pytest.approx(13.75)
    assert s.mcnemar_p == pytest.approx(0.007385, abs=5e-7)
    assert s.mcnemar_p == pytest.approx(binomtest(2, 15).pvalue)
    assert s.bootstrap.draws == 10_000 and s.bootstrap.seed == 39039
    assert s.bootstrap.low < 13.75 < s.bootstrap.high
    assert s.bootstrap.clusters == 40
    assert s.sign_flip.method == "exact"
    assert contrast.sensitivity is None and contrast.unresolved_excluded == 0


def test_sensitivity_excludes_unresolved_contexts() -> None:
    a, b = lawful_pair_runs([True, False, False, True], [False, True, True, True])
    b[1] = b[1].model_copy(update={"resolved": False})
    contrast = compare_runs(a, b)
    assert contrast.stats.gained == 2 and contrast.stats.lost == 1
    assert contrast.unresolved_excluded == 1
    assert contrast.sensitivity is not None
    assert (contrast.sensitivity.gained, contrast.sensitivity.lost,
            contrast.sensitivity.lawful) == (1, 1, 3)
    row = contrast.summary()
    assert row["resolved_lawful"] == 3 and row["unresolved_excluded"] == 1


def _paper_cohort() -> tuple[list, list]:
    """40 scenarios x 2 lawful contexts shaped like the paper's direct -> schema contrast:
    3 scenarios gain both contexts, 6 gain one (other retained), 1 loses one (other retained),
    1 loses one and gains the other, 29 hold 51 retained and 7 neither. Two retained contexts
    in two different unchanged scenarios are unresolved."""
    pattern: list[tuple[bool, bool]] = []
    pattern += [(False, True), (False, True)] * 3
    pattern += [(False, True), (True, True)] * 6
    pattern += [(True, False), (True, True)]
    pattern += [(True, False), (False, True)]
    rest = [(True, True)] * 51 + [(False, False)] * 7
    pattern += rest
    before, after = zip(*pattern, strict=True)
    a, b = lawful_pair_runs(list(before), list(after))
    for i in (30, 32):  # one retained context each in scenarios s15 and s16
        a[i] = a[i].model_copy(update={"resolved": False})
        b[i] = b[i].model_copy(update={"resolved": False})
    return a, b


def test_paper_direct_to_schema_reproduction() -> None:
    a, b = _paper_cohort()
    contrast = compare_runs(a, b, draws=10_000, seed=39039)
    n = contrast.comparison.counts()
    assert (n["retained"], n["lost"], n["gained"], n["neither"]) == (58, 2, 13, 7)
    assert (n["lawful_completed_before"], n["lawful_completed_after"]) == (60, 71)
    s = contrast.stats
    assert s.mcnemar_p == pytest.approx(0.007385, abs=5e-7)
    assert s.sign_flip.patterns == 1024 and s.sign_flip.nonzero_clusters == 10
    assert s.sign_flip.p_value == 0.015625
    assert s.net_pp == pytest.approx(13.75)
    # Sensitivity: 78 lawful, 58 and 69 successes, still 2 lost and 13 gained.
    t = contrast.sensitivity
    assert t is not None and contrast.unresolved_excluded == 2
    assert (t.lawful, t.lost, t.gained) == (78, 2, 13)
    assert t.sign_flip.p_value == 0.015625
    assert t.net_pp == pytest.approx(100 * 11 / 78)
    # The paper's percentile intervals (10,000 draws, seed 39039): 5.00 to 23.75 points, and
    # 5.06 to 24.68 with the unresolved contexts excluded.
    assert (s.bootstrap.low, s.bootstrap.high) == pytest.approx((5.00, 23.75), abs=0.005)
    assert (t.bootstrap.low, t.bootstrap.high) == pytest.approx((5.06, 24.68), abs=0.005)


def test_breakdown_by_attribute_keeps_gains_and_losses_apart() -> None:
    def r(cid: str, out: str, family: str, label: str = "lawful") -> object:
        base = rec(cid, label, out)
        return base.model_copy(update={"attributes": {"family": family, "path": "p"}})

    before = [r("a", "ALLOW", "revoke"), r("b", "BLOCK", "revoke"), r("c", "ALLOW", "amount"),
              r("f", "BLOCK", "amount", "forbidden")]
    after = [r("a", "BLOCK", "revoke"), r("b", "ALLOW", "revoke"), r("c", "ALLOW", "amount"),
             r("f", "ALLOW", "amount", "forbidden")]
    rows = {row["family"]: row for row in compare_records(before, after).breakdown("family")}
    assert (rows["revoke"]["lost"], rows["revoke"]["gained"], rows["revoke"]["net"]) == (1, 1, 0)
    assert (rows["amount"]["retained"], rows["amount"]["newly_approved"]) == (1, 1)
    clusters = compare_records(before, after).breakdown("cluster")
    assert [row["cluster"] for row in clusters] == ["s1"]
