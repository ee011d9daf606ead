"""Statistics checked against independent computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from authpairs.analysis.stats import (
    cluster_bootstrap_net,
    holm,
    mcnemar_exact,
    sign_flip_test,
)


def test_mcnemar_paper_value() -> None:
    assert mcnemar_exact(2, 13) == pytest.approx(0.007385, abs=5e-7)
    assert mcnemar_exact(2, 13) == pytest.approx(binomtest(2, 15, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize("lost,gained", [(0, 0), (0, 1), (1, 1), (3, 9), (10, 4), (0, 27),
                                         (1, 27), (50, 61), (7, 7)])
def test_mcnemar_matches_scipy_binomtest(lost: int, gained: int) -> None:
    expected = 1.0 if lost + gained == 0 else binomtest(lost, lost + gained, 0.5).pvalue
    assert mcnemar_exact(lost, gained) == pytest.approx(expected, rel=1e-10)
    assert mcnemar_exact(lost, gained) == mcnemar_exact(gained, lost)


def test_mcnemar_rejects_negative() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_holm_hand_computed() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> max-accumulated 0.06
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([1.5])


def _brute_sign_flip(diffs: list[float]) -> float:
    nz = [d for d in diffs if d != 0]
    obs = abs(sum(nz))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(nz)):
        if abs(sum(s * d for s, d in zip(signs, nz, strict=True))) >= obs - 1e-12:
            hits += 1
    return hits / 2 ** len(nz)


@pytest.mark.parametrize("diffs", [
    [1, 1, 1, 1, 1, 1, 1, 1, 1, -1] + [0] * 30,
    [2, 2, 1, 1, 1, 1, 1, 1, 1, -1, 0, 0],
    [1, -1, 2, -2, 1, 0],
    [3, 1, -2, 2, 2, 1, -1, 1, 2, 1, 1, 2, -1],
    [5],
])
def test_sign_flip_exact_matches_brute_force(diffs: list[int]) -> None:
    result = sign_flip_test(diffs)
    assert result.method == "exact"
    assert result.nonzero_clusters == sum(d != 0 for d in diffs)
    assert result.p_value == pytest.approx(_brute_sign_flip(diffs), abs=1e-15)


def test_sign_flip_paper_shape() -> None:
    # Nine positive and one negative unit change among 40 scenarios: 1,024 patterns.
    result = sign_flip_test([1] * 9 + [-1] + [0] * 30)
    assert result.patterns == 1024
    assert result.p_value == pytest.approx(22 / 1024)


def test_sign_flip_non_integer_enumerates() -> None:
    diffs = [0.5, 1.25, -0.75, 2.0, 0.1]
    result = sign_flip_test(diffs)
    assert result.method == "exact"
    assert result.p_value == pytest.approx(_brute_sign_flip(diffs))


def test_sign_flip_monte_carlo_when_too_many_clusters() -> None:
    rng = np.random.default_rng(1)
    diffs = rng.integers(-2, 4, size=30)
    diffs[diffs == 0] = 1
    exact = sign_flip_test(diffs)
    mc = sign_flip_test(diffs, max_exact=10, draws=200_000, seed=7)
    assert exact.method == "exact" and mc.method == "monte-carlo" and mc.seed == 7
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.01)
    again = sign_flip_test(diffs, max_exact=10, draws=200_000, seed=7)
    assert again.p_value == mc.p_value


def test_sign_flip_all_zero() -> None:
    r = sign_flip_test([0, 0, 0])
    assert r.p_value == 1.0 and r.method == "trivial"


def test_bootstrap_matches_loop_over_same_draws() -> None:
    diffs = np.array([1, 0, 2, -1, 0, 0, 1, 1, 0, 2], dtype=float)
    sizes = np.full(10, 2.0)
    res = cluster_bootstrap_net(diffs, sizes, draws=2000, seed=5)
    idx = np.random.default_rng(5).integers(0, 10, size=(2000, 10))
    stats = []
    for row in idx:
        num = sum(diffs[i] for i in row)
        den = sum(sizes[i] for i in row)
        stats.append(100.0 * num / den)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    assert res.low == pytest.approx(lo) and res.high == pytest.approx(hi)
    assert res.estimate == pytest.approx(100 * 6 / 20)
    assert res.draws == 2000 and res.seed == 5 and res.clusters == 10 and res.units == 20


def test_bootstrap_is_seeded_and_degenerate_when_constant() -> None:
    diffs = np.ones(8)
    sizes = np.full(8, 2.0)
    r = cluster_bootstrap_net(diffs, sizes)
    assert r.low == r.high == r.estimate == 50.0
    d = np.array([1.0, -1.0, 0.0, 2.0])
    n = np.array([2.0, 2.0, 2.0, 2.0])
    assert cluster_bootstrap_net(d, n, seed=3) == cluster_bootstrap_net(d, n, seed=3)
    assert cluster_bootstrap_net(d, n, seed=3) != cluster_bootstrap_net(d, n, seed=4)
