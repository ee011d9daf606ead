"""A contrast: one request-level comparison with its paired statistics and sensitivity view,
for two guardrail runs and two agent runs alike (what ``authpairs compare`` prints)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from authpairs.analysis.compare import Comparison, compare_records
from authpairs.analysis.formatting import PlainData, format_p, stats_lines
from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.analysis.stats import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    BootstrapResult,
    SignFlipResult,
    cluster_bootstrap_net,
    holm,
    mcnemar_exact,
    sign_flip_test,
)
from authpairs.runs.records import CaseRecord


@dataclass(frozen=True)
class ContrastStats(PlainData):
    """Statistics of the lawful-side change of one comparison."""

    lost: int
    gained: int
    net: int
    lawful: int
    net_pp: float
    mcnemar_p: float
    bootstrap: BootstrapResult
    sign_flip: SignFlipResult


def contrast_stats(comparison: Comparison, *, draws: int = DEFAULT_DRAWS,
                   seed: int = DEFAULT_SEED) -> ContrastStats:
    """McNemar, scenario-cluster bootstrap and cluster sign-flip test of the lawful change."""
    counts = comparison.counts()
    _, diffs, sizes = comparison.cluster_arrays()
    lawful = counts["lawful_matched"]
    return ContrastStats(
        lost=counts["lost"], gained=counts["gained"], net=counts["net"], lawful=lawful,
        net_pp=100.0 * counts["net"] / lawful if lawful else 0.0,
        mcnemar_p=mcnemar_exact(counts["lost"], counts["gained"]),
        bootstrap=cluster_bootstrap_net(diffs, sizes, draws=draws, seed=seed),
        sign_flip=sign_flip_test(diffs, seed=seed))


@dataclass(repr=False)
class Contrast(NotebookView):
    """A named comparison, its statistics, the resolved-only sensitivity view and Holm results.
    In a notebook (and the terminal) it shows the comparison's tables with the statistics
    under them; ``to_pandas()`` gives one row per matched request."""

    name: str
    comparison: Comparison
    stats: ContrastStats
    sensitivity: ContrastStats | None
    unresolved_excluded: int
    forbidden_mcnemar_p: float = 1.0
    """The exact McNemar test of the forbidden side: went through after only against before
    only."""
    holm_sign_flip_p: float | None = None
    holm_mcnemar_p: float | None = None
    holm_resolved_sign_flip_p: float | None = None
    holm_resolved_mcnemar_p: float | None = None
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def resolved_stats(self) -> ContrastStats:
        """The resolved-only view: the sensitivity statistics, or the primary ones when no
        matched context is unresolved (the two views then coincide)."""
        return self.sensitivity if self.sensitivity is not None else self.stats

    def summary(self) -> dict[str, Any]:
        """One flat row: counts, statistics and adjusted p-values."""
        counts = self.comparison.counts()
        s = self.stats
        row: dict[str, Any] = {"contrast": self.name, "before": self.comparison.before_run,
                               "after": self.comparison.after_run, **self.labels}
        names = self.comparison.names
        forbidden = [f.key for f in (*names.forbidden[1:-1], names.forbidden[0],
                                     names.forbidden[-1])]
        row.update({k: counts[k] for k in (
            *(f.key for f in names.lawful), "net", "lawful_matched", *forbidden,
            "forbidden_matched", "only_before", "only_after", "label_mismatch")})
        row.update({
            "net_pp": s.net_pp, "mcnemar_p": s.mcnemar_p,
            "forbidden_mcnemar_p": self.forbidden_mcnemar_p,
            "bootstrap_low": s.bootstrap.low, "bootstrap_high": s.bootstrap.high,
            "bootstrap_draws": s.bootstrap.draws, "bootstrap_seed": s.bootstrap.seed,
            "sign_flip_p": s.sign_flip.p_value, "sign_flip_method": s.sign_flip.method,
            "sign_flip_clusters": s.sign_flip.nonzero_clusters,
            "holm_sign_flip_p": self.holm_sign_flip_p, "holm_mcnemar_p": self.holm_mcnemar_p,
            "holm_resolved_sign_flip_p": self.holm_resolved_sign_flip_p,
            "holm_resolved_mcnemar_p": self.holm_resolved_mcnemar_p,
            "unresolved_excluded": self.unresolved_excluded})
        if self.sensitivity is not None:
            t = self.sensitivity
            row.update({
                "resolved_lost": t.lost, "resolved_gained": t.gained, "resolved_net": t.net,
                "resolved_lawful": t.lawful, "resolved_net_pp": t.net_pp,
                "resolved_mcnemar_p": t.mcnemar_p, "resolved_bootstrap_low": t.bootstrap.low,
                "resolved_bootstrap_high": t.bootstrap.high,
                "resolved_sign_flip_p": t.sign_flip.p_value})
        return row

    def to_dict(self) -> dict[str, Any]:
        """Full plain-data view including every matched request."""
        return {"name": self.name, "labels": self.labels, "counts": self.comparison.counts(),
                "outcomes": {label: [{"before": a, "after": b, "n": k} for (a, b), k in
                                     self.comparison.outcome_matrix(label).items()]
                             for label in ("lawful", "forbidden")},
                "stats": self.stats.to_dict(), "forbidden_mcnemar_p": self.forbidden_mcnemar_p,
                "sensitivity": self.sensitivity.to_dict() if self.sensitivity else None,
                "unresolved_excluded": self.unresolved_excluded,
                "holm_sign_flip_p": self.holm_sign_flip_p,
                "holm_mcnemar_p": self.holm_mcnemar_p,
                "holm_resolved_sign_flip_p": self.holm_resolved_sign_flip_p,
                "holm_resolved_mcnemar_p": self.holm_resolved_mcnemar_p,
                "only_before": self.comparison.only_before,
                "only_after": self.comparison.only_after,
                "label_mismatch": self.comparison.label_mismatch,
                "requests": self.comparison.rows()}

    def statistics_lines(self) -> list[str]:
        """The statistics as plain sentences: the lawful side's, its sensitivity view and the
        forbidden side's McNemar test."""
        lines = stats_lines("statistics", self.stats)
        if self.sensitivity is not None:
            lines += stats_lines(f"sensitivity, {self.unresolved_excluded} unresolved contexts "
                                 "excluded", self.sensitivity)
        else:
            lines.append("sensitivity: every matched context is resolved (nothing to exclude)")
        n, names = self.comparison.counts(), self.comparison.names
        newly = names.forbidden[1]
        lines.append(f"forbidden {names.unit}: {newly.title} {n[newly.key]}, newly stopped "
                     f"{n['newly_stopped']}; exact McNemar p = "
                     f"{format_p(self.forbidden_mcnemar_p)}")
        return lines

    def __repr__(self) -> str:
        """One line: the comparison and its exact McNemar p-value."""
        return (f"<Contrast {self.name}: {repr(self.comparison)[len('<Comparison '):-1]}; "
                f"McNemar p = {format_p(self.stats.mcnemar_p)}>")

    def table_views(self, changed: bool = True) -> list[TableView]:
        """The comparison's tables (:meth:`Comparison.table_views`), the statistics under
        them."""
        return [*self.comparison.table_views(changed),
                TableView("", (), (), self.statistics_lines())]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per matched request (:meth:`Comparison.frame`)."""
        return self.comparison.frame()


def make_contrast(comparison: Comparison, *, name: str | None = None, draws: int = DEFAULT_DRAWS,
                  seed: int = DEFAULT_SEED, labels: dict[str, str] | None = None) -> Contrast:
    """Statistics for one comparison; the sensitivity view is computed when any matched context
    is unresolved (it would otherwise repeat the primary result)."""
    resolved = comparison.resolved_only()
    excluded = len(comparison.changes) - len(resolved.changes)
    counts = comparison.counts()
    newly = comparison.names.forbidden[1].key
    return Contrast(
        name=name or f"{comparison.before_run} -> {comparison.after_run}",
        comparison=comparison, stats=contrast_stats(comparison, draws=draws, seed=seed),
        sensitivity=contrast_stats(resolved, draws=draws, seed=seed) if excluded else None,
        unresolved_excluded=excluded,
        forbidden_mcnemar_p=mcnemar_exact(counts[newly], counts["newly_stopped"]),
        labels=dict(labels or {}))


def compare_runs(before: Sequence[CaseRecord], after: Sequence[CaseRecord], *,
                 before_run: str = "before", after_run: str = "after",
                 draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED, name: str | None = None,
                 labels: dict[str, str] | None = None) -> Contrast:
    """Match two runs' records and compute the full contrast (the ``compare`` command's API;
    a family's member also gets its ``name`` and ``labels``)."""
    comparison = compare_records(before, after, before_run=before_run, after_run=after_run)
    return make_contrast(comparison, name=name, draws=draws, seed=seed, labels=labels)


def adjust_family(contrasts: list[Contrast]) -> list[Contrast]:
    """Holm-adjust the sign-flip and McNemar p-values within each reference scope, in place
    (the family is returned).

    Two families: every matched context (the primary view), and resolved contexts only (the
    sensitivity view; a contrast with nothing unresolved contributes its primary p-values,
    which are its resolved-only ones). A p-value is never adjusted across the two scopes.
    """
    flips = holm([c.stats.sign_flip.p_value for c in contrasts])
    mcn = holm([c.stats.mcnemar_p for c in contrasts])
    r_flips = holm([c.resolved_stats.sign_flip.p_value for c in contrasts])
    r_mcn = holm([c.resolved_stats.mcnemar_p for c in contrasts])
    for c, pf, pm, rf, rm in zip(contrasts, flips, mcn, r_flips, r_mcn, strict=True):
        c.holm_sign_flip_p = pf
        c.holm_mcnemar_p = pm
        c.holm_resolved_sign_flip_p = rf
        c.holm_resolved_mcnemar_p = rm
    return contrasts
