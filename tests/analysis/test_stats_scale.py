"""Statistics at any size: exact McNemar without overflow, Holm within each reference scope."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from authpairs.analysis.compare import compare_records
from authpairs.analysis.contrast import Contrast, adjust_family, make_contrast
from authpairs.analysis.stats import holm, mcnemar_exact
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord


def _exact(lost: int, gained: int) -> float:
    n, k = lost + gained, min(lost, gained)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize(("lost", "gained"), [
    (530, 500), (500, 530), (0, 1100), (1, 1), (3, 10), (700, 700), (1024, 0), (2000, 1900)])
def test_exact_mcnemar_at_any_size(lost: int, gained: int) -> None:
    assert mcnemar_exact(lost, gained) == pytest.approx(_exact(lost, gained), rel=1e-9,
                                                        abs=1e-300)


def test_mcnemar_beyond_float_range_of_two_to_the_n() -> None:
    p = mcnemar_exact(60_000, 50_000)  # 2**110000 overflows a float
    assert 0.0 <= p < 1e-100
    assert mcnemar_exact(55_000, 55_001) == pytest.approx(1.0)


def _rec(run: str, cid: str, lawful: bool, allow: bool, resolved: bool,
         cluster: str) -> CaseRecord:
    return CaseRecord(run_id=run, case_id=cid, input_sha256="x", status=OutcomeStatus.DECISION,
                      decision=Decision.ALLOW if allow else Decision.BLOCK,
                      dispatch=Dispatch.ALLOW if allow else Dispatch.BLOCK,
                      label="lawful" if lawful else "forbidden", resolved=resolved,
                      cluster=cluster)


def _contrast(name: str, lost: int, gained: int, unresolved_lost: int) -> Contrast:
    before, after = [], []
    for i in range(lost):
        before.append(_rec("a", f"l{i}", True, True, i >= unresolved_lost, f"s{i % 7}"))
        after.append(_rec("b", f"l{i}", True, False, i >= unresolved_lost, f"s{i % 7}"))
    for i in range(gained):
        before.append(_rec("a", f"g{i}", True, False, True, f"s{i % 7}"))
        after.append(_rec("b", f"g{i}", True, True, True, f"s{i % 7}"))
    return make_contrast(compare_records(before, after), name=name, draws=200)


def test_holm_is_applied_within_each_reference_scope() -> None:
    contrasts = [_contrast("x", 30, 5, 20), _contrast("y", 12, 2, 0), _contrast("z", 4, 4, 2)]
    adjust_family(contrasts)
    primary = holm([c.stats.mcnemar_p for c in contrasts])
    resolved = holm([(c.sensitivity or c.stats).mcnemar_p for c in contrasts])
    assert [c.holm_mcnemar_p for c in contrasts] == pytest.approx(primary)
    assert [c.holm_resolved_mcnemar_p for c in contrasts] == pytest.approx(resolved)
    flips = holm([c.resolved_stats.sign_flip.p_value for c in contrasts])
    assert [c.holm_resolved_sign_flip_p for c in contrasts] == pytest.approx(flips)
    assert contrasts[0].sensitivity is not None and contrasts[0].sensitivity.lost == 10
    row = contrasts[0].summary()
    assert row["holm_resolved_mcnemar_p"] == contrasts[0].holm_resolved_mcnemar_p
