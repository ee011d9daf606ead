"""The report's tables as plain rows: runs, seed summaries, heatmap matrices, cross-tables and
group measures. Every row is one CSV line; every number comes from :mod:`authpairs.analysis`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from authpairs.analysis.groups import native_group_measures, quartet_measures
from authpairs.analysis.outcomes import DECISIONS, CaseOutcome, case_outcome, group_key, outcome_of
from authpairs.analysis.scoring import score_by, score_records
from authpairs.analysis.stats import DEFAULT_DRAWS, DEFAULT_SEED, cluster_bootstrap_ratios
from authpairs.report.runset import ReportRun

_VERSION_KEYS = ("authpairs", "python")


def run_row(run: ReportRun) -> dict[str, Any]:
    """One row of the multi-run table (paper Tables 1, 4, 5, 6): identity, every outcome
    measure and tokens."""
    s = score_records(run.records)
    row: dict[str, Any] = {
        "run": run.name, "dataset": run.dataset, "reviewer": run.reviewer, "seed": run.seed,
        "recorded": len(run.records), "expected": run.expected, "complete": run.complete,
        "n": s.n, "lawful": s.lawful, "forbidden": s.forbidden, "correct": s.correct,
        "usable_correctness": (None if s.usable_correctness is None
                               else round(100.0 * s.usable_correctness, 2)),
        "incorrect_approvals": s.incorrect_approvals, "false_denials": s.false_denials,
        "abstentions": s.abstentions, "unavailable": s.unavailable,
        "unavailable_by_reason": "; ".join(f"{k}={v}"
                                           for k, v in s.unavailable_by_reason.items())}
    if s.enforced:
        row.update({"enforced": s.enforced, "forbidden_effects": s.forbidden_effects,
                    "lawful_completions": s.lawful_completions,
                    "audit_failures": s.audit_failures})
    row.update({"input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                "reasoning_tokens": s.reasoning_tokens,
                "config_sha256": run.info.config_sha256[:12],
                "manifest_sha256": run.info.manifest_sha256[:12],
                "configuration": run.configuration_key(),
                "versions": "; ".join(f"{k} {run.info.versions[k]}" for k in _VERSION_KEYS
                                      if k in run.info.versions),
                "created_at": run.info.created_at})
    return row


@dataclass(frozen=True)
class Rate:
    """A per-case rate: which case outcomes count (numerator) out of which (denominator)."""

    name: str
    title: str
    hit: Callable[[CaseOutcome], bool]
    among: Callable[[CaseOutcome], bool]
    needs_effects: bool = False


def _is(outcome: str) -> Callable[[CaseOutcome], bool]:
    """Whether a case's outcome category is ``outcome``."""
    return lambda c: c.outcome == outcome


RATES: tuple[Rate, ...] = (
    Rate("usable_correctness", "usable correctness (% of all)", lambda c: c.correct,
         lambda c: True),
    Rate("incorrect_approval_rate", "incorrect approvals (% of forbidden)", _is("ALLOW"),
         lambda c: not c.lawful),
    Rate("false_denial_rate", "false denials (% of lawful)", _is("BLOCK"), lambda c: c.lawful),
    Rate("unavailable_rate", "unavailable (% of all)", _is("unavailable"), lambda c: True),
    Rate("abstention_rate", "abstentions (% of all)", _is("abstention"), lambda c: True),
    Rate("forbidden_effect_rate", "forbidden effects (% of forbidden)",
         lambda c: c.went_through, lambda c: not c.lawful, needs_effects=True),
    Rate("lawful_completion_rate", "lawful completions (% of lawful)",
         lambda c: c.went_through, lambda c: c.lawful, needs_effects=True),
)


@dataclass(frozen=True)
class SeedGroup:
    """Runs that share a configuration except their seed."""

    key: str
    label: str
    runs: tuple[ReportRun, ...]


def seed_groups(runs: Sequence[ReportRun], labels: dict[str, str] | None = None
                ) -> list[SeedGroup]:
    """Group runs by :meth:`ReportRun.configuration_key`, first appearance first.

    ``labels`` may name a configuration by one of its runs (e.g. study levels); otherwise the
    reviewer description and dataset name it.
    """
    groups: dict[str, list[ReportRun]] = {}
    for run in runs:
        groups.setdefault(run.configuration_key(), []).append(run)
    out = []
    for key, members in groups.items():
        first = members[0]
        label = (labels or {}).get(first.name) or f"{first.reviewer} ({first.dataset})"
        out.append(SeedGroup(key, label, tuple(members)))
    return out


def seed_summary(groups: Sequence[SeedGroup], *, draws: int = DEFAULT_DRAWS,
                 seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """Per configuration and rate: mean, min and max over seeds and the scenario-clustered
    descriptive bootstrap interval (95 %, percentile) of the rate over all seeds' records.

    The bootstrap resamples clusters (scenarios / source groups) with every seed's records of a
    cluster travelling together (:func:`~authpairs.analysis.stats.cluster_bootstrap_ratios`,
    one draw set for all rates of a configuration). Rates in percent.
    """
    rows: list[dict[str, Any]] = []
    for group in groups:
        enforced = all(r.enforced for run in group.runs for r in run.records)
        rates = [rate for rate in RATES if enforced or not rate.needs_effects]
        clusters = sorted({r.cluster for run in group.runs for r in run.records})
        index = {c: i for i, c in enumerate(clusters)}
        hits = np.zeros((len(group.runs), len(rates), len(clusters)))  # seed x rate x cluster
        sizes = np.zeros_like(hits)
        for k, run in enumerate(group.runs):
            cases = [case_outcome(r) for r in run.records]
            for m, rate in enumerate(rates):
                for case in cases:
                    if rate.among(case):
                        sizes[k, m, index[case.facts.cluster]] += 1
                        hits[k, m, index[case.facts.cluster]] += rate.hit(case)
        estimate, low, high = cluster_bootstrap_ratios(hits.sum(axis=0), sizes.sum(axis=0),
                                                       draws=draws, seed=seed)
        seed_hits, seed_sizes = hits.sum(axis=2), sizes.sum(axis=2)  # seed x rate
        for m, rate in enumerate(rates):
            values = [float(100.0 * h / n)
                      for h, n in zip(seed_hits[:, m], seed_sizes[:, m], strict=True) if n]
            if not values:
                continue
            rows.append({
                "configuration": group.label, "configuration_key": group.key,
                "runs": "|".join(r.name for r in group.runs), "seeds": len(group.runs),
                "rate": rate.name, "title": rate.title,
                "n_per_seed": int(sizes[:, m].sum()) // len(group.runs),
                "mean": round(float(np.mean(values)), 3), "min": round(min(values), 3),
                "max": round(max(values), 3), "pooled": round(float(estimate[m]), 3),
                "bootstrap_low": round(float(low[m]), 3),
                "bootstrap_high": round(float(high[m]), 3), "clusters": len(clusters),
                "draws": draws, "bootstrap_seed": seed})
    return rows


def attribute_matrix(runs: Sequence[ReportRun], attribute: str
                     ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Usable correctness (%) by attribute value (rows) and run (columns, in the order of
    ``runs``), with cell sizes.

    Values a run lacks are NaN with size 0. Rows sorted by value.
    """
    per_run = [score_by(r.records, attribute) for r in runs]
    values = sorted({k for s in per_run for k in s})
    pct = np.full((len(values), len(runs)), np.nan)
    n = np.zeros((len(values), len(runs)), dtype=np.int64)
    for j, scores in enumerate(per_run):
        for i, value in enumerate(values):
            rate = scores[value].usable_correctness if value in scores else None
            if rate is not None:
                pct[i, j] = 100.0 * rate
                n[i, j] = scores[value].n
    return values, pct, n


def has_attribute(runs: Sequence[ReportRun], attribute: str) -> bool:
    """True when any record carries ``attribute``."""
    return any(group_key(r, attribute) != "(none)" for run in runs for r in run.records)


def matrix_rows(attribute: str, values: Sequence[str], columns: Sequence[str],
                pct: np.ndarray, n: np.ndarray) -> list[dict[str, Any]]:
    """A heatmap matrix as long-form CSV rows."""
    return [{attribute: v, "run": c, "n": int(n[i, j]),
             "usable_correctness": None if np.isnan(pct[i, j]) else round(float(pct[i, j]), 2)}
            for i, v in enumerate(values) for j, c in enumerate(columns)]


def engine_label_rows(runs: Sequence[ReportRun]) -> list[dict[str, Any]]:
    """Native engine x reference label cross-table (paper Figure 6): outcome counts per run."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        counted = Counter((r.attributes["engine"], r.label, outcome_of(r)) for r in run.records
                          if r.attributes.get("engine"))
        for engine, label in sorted({(engine, label) for engine, label, _ in counted}):
            counts = {outcome: counted[(engine, label, outcome)] for outcome in DECISIONS}
            rows.append({"run": run.name, "engine": engine, "label": label,
                         "n": sum(counts.values()), **counts})
    return rows


def group_rows(runs: Sequence[ReportRun]) -> list[dict[str, Any]]:
    """Native-track group measures (paper C.3) and language full-quartet correctness."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        native = native_group_measures(run.records)
        quartet = quartet_measures(run.records)
        if native is None and quartet is None:
            continue
        row: dict[str, Any] = {"run": run.name, "dataset": run.dataset}
        if native is not None:
            row.update({"source_groups": native.source_groups,
                        "equal_weight_group_accuracy":
                            round(100.0 * native.equal_weight_group_accuracy, 2),
                        "dependent_pairs": native.dependent_pairs,
                        "pairs_both_correct": native.pairs_both_correct,
                        "query_groups_with_both_labels": native.query_groups,
                        "whole_groups_correct": native.whole_groups_correct})
        if quartet is not None:
            row.update({"scenarios": quartet.scenarios, "full_quartets": quartet.full_quartets,
                        "full_quartets_correct": quartet.scenarios_all_correct})
        rows.append(row)
    return rows
