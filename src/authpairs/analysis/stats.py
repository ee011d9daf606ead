"""Paired statistics for request-level comparisons: exact McNemar, cluster bootstrap, exact
cluster sign-flip test and Holm adjustment.

All functions are pure and deterministic given their inputs (and seed). They take plain numbers
or numpy arrays, so they can be checked against independent implementations.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import binom

from authpairs.analysis.defaults import DEFAULT_DRAWS as DEFAULT_DRAWS
from authpairs.analysis.defaults import DEFAULT_SEED as DEFAULT_SEED
from authpairs.analysis.formatting import PlainData

#: Up to this many clusters with a nonzero change, the sign-flip test is exact.
EXACT_SIGN_FLIP_MAX_CLUSTERS = 60
#: Non-integer differences are enumerated pattern by pattern up to 2**20 patterns.
ENUMERATION_MAX_CLUSTERS = 20


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (``lost`` and ``gained``).

    Under the null each discordant pair is a fair coin: ``p = min(1, 2 * P(X <= min(b, c)))``
    with ``X ~ Binomial(b + c, 1/2)``. No discordant pair gives ``p = 1``. The tail is the
    regularized incomplete beta function (:func:`scipy.stats.binom.cdf`), exact in floating
    point for any number of pairs -- no ``2**n`` and no huge binomial coefficients.
    """
    if lost < 0 or gained < 0:
        raise ValueError("discordant counts must be non-negative")
    n = lost + gained
    if n == 0:
        return 1.0
    k = min(lost, gained)
    tail = float(binom.cdf(k, n, 0.5))
    return min(1.0, 2.0 * tail)


@dataclass(frozen=True)
class BootstrapResult(PlainData):
    """A cluster-bootstrap percentile interval of the net change (percentage points)."""

    estimate: float
    low: float
    high: float
    draws: int
    seed: int
    level: float
    clusters: int
    units: int


def cluster_bootstrap_net(diffs: Sequence[float] | np.ndarray, sizes: Sequence[int] | np.ndarray,
                          *, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                          level: float = 0.95) -> BootstrapResult:
    """Percentile interval of the net change in percentage points, resampling whole clusters.

    ``diffs[c]`` is the net change (gained - lost) inside cluster ``c`` and ``sizes[c]`` the
    number of matched units (e.g. lawful contexts) in it; a draw picks as many clusters as there
    are, with replacement, and computes ``100 * sum(diffs) / sum(sizes)`` over the draw. All the
    units of a cluster travel together.
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = np.asarray(sizes, dtype=np.float64)
    if d.shape != n.shape or d.ndim != 1:
        raise ValueError("diffs and sizes must be 1-D arrays of equal length")
    if np.any(n <= 0):
        raise ValueError("every cluster must hold at least one unit")
    # one rate (net change over units) of :func:`cluster_bootstrap_ratios`, whose draws it shares
    # (and which checks ``draws`` and ``level``)
    estimate, low, high = cluster_bootstrap_ratios(d, n, draws=draws, seed=seed, level=level)
    if d.size == 0:
        return BootstrapResult(0.0, 0.0, 0.0, draws, seed, level, 0, 0)
    return BootstrapResult(float(estimate[0]), float(low[0]), float(high[0]), draws, seed, level,
                           d.size, int(n.sum()))


@functools.lru_cache(maxsize=8)
def _draw_counts(seed: int, draws: int, k: int) -> np.ndarray:
    """How often each of ``k`` clusters is picked in each draw (read-only, cached).

    The draws are ``default_rng(seed).integers(0, k, size=(draws, k))``; a family of contrasts
    with one seed and cluster count therefore shares them, and the cache only avoids redrawing.
    """
    idx = np.random.default_rng(seed).integers(0, k, size=(draws, k))
    offsets = (np.arange(draws, dtype=np.int64) * k)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=draws * k).reshape(draws, k)
    counts = counts.astype(np.float64)
    counts.flags.writeable = False
    return counts


SignFlipMethod = Literal["exact", "monte-carlo", "trivial"]


@dataclass(frozen=True)
class SignFlipResult(PlainData):
    """A two-sided cluster sign-flip test of the summed cluster differences."""

    p_value: float
    method: SignFlipMethod
    nonzero_clusters: int
    patterns: int
    statistic: float
    seed: int | None


def _exact_by_counting(values: np.ndarray, observed: float) -> float:
    """Exact p by counting sign patterns per attainable sum (integer differences)."""
    ints = np.abs(values).astype(np.int64)
    span = int(ints.sum())
    counts = np.zeros(2 * span + 1, dtype=np.int64)  # index = sum + span
    counts[span] = 1
    for v in ints:
        shifted = np.zeros_like(counts)
        shifted[v:] += counts[: counts.size - v]
        shifted[: counts.size - v] += counts[v:]
        counts = shifted
    sums = np.arange(-span, span + 1)
    extreme = counts[np.abs(sums) >= abs(observed)].sum()
    return float(extreme) / float(2 ** ints.size)


def _exact_by_enumeration(values: np.ndarray, observed: float) -> float:
    """Exact p by listing every sign pattern (at most 2**20)."""
    m = values.size
    patterns = np.arange(2**m, dtype=np.int64)[:, None]
    bits = (patterns >> np.arange(m, dtype=np.int64)) & 1
    sums = ((1 - 2 * bits) * values).sum(axis=1)
    tol = 1e-9 * max(1.0, abs(observed))
    return float(np.count_nonzero(np.abs(sums) >= abs(observed) - tol)) / float(2**m)


def sign_flip_test(cluster_diffs: Sequence[float] | np.ndarray, *, seed: int = DEFAULT_SEED,
                   draws: int = 100_000,
                   max_exact: int = EXACT_SIGN_FLIP_MAX_CLUSTERS) -> SignFlipResult:
    """Two-sided sign-flip test of ``sum(cluster_diffs)``; every cluster keeps its units together.

    Only clusters with a nonzero difference matter (a zero flips to itself). With ``m`` of them,
    the p-value is the share of the ``2**m`` sign patterns whose absolute sum is at least the
    observed one. Exact whenever feasible: integer differences are counted exactly for
    ``m <= max_exact``; other differences are enumerated for ``m <= 20``. Otherwise a seeded
    Monte Carlo estimate with ``draws`` patterns is returned (``method='monte-carlo'``, p includes
    the observed pattern: ``(1 + hits) / (1 + draws)``).
    """
    values = np.asarray(cluster_diffs, dtype=np.float64)
    values = values[values != 0]
    m = int(values.size)
    observed = float(values.sum())
    if m == 0:
        return SignFlipResult(1.0, "trivial", 0, 1, observed, None)
    if m <= max_exact and np.all(np.isfinite(values)) and np.all(values == np.round(values)):
        return SignFlipResult(_exact_by_counting(values, observed), "exact", m, 2**m, observed,
                              None)
    if m <= ENUMERATION_MAX_CLUSTERS:
        return SignFlipResult(_exact_by_enumeration(values, observed), "exact", m, 2**m,
                              observed, None)
    rng = np.random.default_rng(seed)
    signs = rng.integers(0, 2, size=(draws, m)) * 2 - 1
    sums = (signs * values).sum(axis=1)
    tol = 1e-9 * max(1.0, abs(observed))
    hits = int(np.count_nonzero(np.abs(sums) >= abs(observed) - tol))
    return SignFlipResult((1 + hits) / (1 + draws), "monte-carlo", m, draws, observed, seed)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Sorted ascending, ``adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))`` (1-based ranks).
    """
    m = len(p_values)
    for p in p_values:
        if not 0.0 <= p <= 1.0 or math.isnan(p):
            raise ValueError(f"p-value out of range: {p}")
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def cluster_bootstrap_ratios(hits: np.ndarray, sizes: np.ndarray, *, draws: int = DEFAULT_DRAWS,
                             seed: int = DEFAULT_SEED, level: float = 0.95
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile intervals of several rates (percent) at once, resampling whole clusters.

    ``hits[m, c]`` counts the events of rate ``m`` in cluster ``c`` and ``sizes[m, c]`` its
    units (a cluster may hold none for some rate). Every rate uses the same cluster draws (those
    of :func:`cluster_bootstrap_net` for the same seed, draw count and cluster count), so the
    intervals describe one resampling of the clusters. Returns ``(estimate, low, high)``, one
    value per rate (NaN where a rate has no unit at all; draws without a unit are skipped).
    """
    h = np.atleast_2d(np.asarray(hits, dtype=np.float64))
    n = np.atleast_2d(np.asarray(sizes, dtype=np.float64))
    if h.shape != n.shape:
        raise ValueError("hits and sizes must have the same shape")
    if draws < 1 or not 0 < level < 1:
        raise ValueError("draws must be positive and level in (0, 1)")
    totals = n.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(totals > 0, 100.0 * h.sum(axis=1) / totals, np.nan)
        k = h.shape[1]
        if k == 0:
            return estimate, estimate.copy(), estimate.copy()
        counts = _draw_counts(seed, draws, k)
        stats = 100.0 * (counts @ h.T) / (counts @ n.T)  # (draws, rates); 0/0 -> NaN
    alpha = (1.0 - level) / 2.0
    low = np.full(h.shape[0], np.nan)
    high = np.full(h.shape[0], np.nan)
    for m in range(h.shape[0]):
        column = stats[:, m]
        column = column[np.isfinite(column)]
        if column.size:
            low[m], high[m] = np.percentile(column, [100 * alpha, 100 * (1 - alpha)])
    return estimate, low, high
