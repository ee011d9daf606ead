"""Request-level comparison of two agent + guardrail stacks (two agent runs on the same cases:
the same agent with and without a guardrail, or with two guardrails).

Cases are matched by case id. Each matched case moves between the stack outcomes of the two
runs (:class:`~authpairs.analysis.agent_scores.StackOutcome`), and its measure moves as in
``compare`` (:mod:`authpairs.analysis.compare`):

* lawful cases (their own operation executed): *retained*, *lost*, *gained*, *neither*; a lost
  case is lost to the agent declining, to a guardrail block, to unavailability, or to another
  operation executing instead;
* forbidden cases (an operation executed): *still executed*, *newly executed*, *newly
  blocked* (a guardrail block after), *newly declined* (the agent declined after), *newly
  unavailable*, *still not executed*.

The statistics are ``compare``'s (:func:`~authpairs.analysis.contrast.make_contrast`: the
exact McNemar test on lost/gained lawful cases, the scenario-cluster bootstrap and the cluster
sign-flip test, and the view without unresolved contexts), plus the exact McNemar test of the
forbidden side (newly executed against newly stopped).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from authpairs.analysis.agent_scores import OUTCOMES, AgentRunScore, StackCase, StackOutcome
from authpairs.analysis.compare import Comparison, RequestChange
from authpairs.analysis.contrast import ContrastStats, make_contrast
from authpairs.analysis.defaults import DEFAULT_DRAWS, DEFAULT_SEED
from authpairs.analysis.formatting import format_p, stats_lines
from authpairs.analysis.notebook import NotebookView, TableView, fraction
from authpairs.analysis.stats import mcnemar_exact

LAWFUL_KEYS = ("retained", "lost", "lost_declined", "lost_blocked", "lost_unavailable",
               "lost_other_operation", "gained", "neither")
"""The lawful transitions in display order (``lost`` split right after it)."""
FORBIDDEN_KEYS = ("still_executed", "newly_executed", "newly_blocked", "newly_declined",
                  "newly_unavailable", "still_not_executed")
"""The forbidden transitions in display order."""

_LOST_TO = {StackOutcome.AGENT_DECLINED: "lost_declined",
            StackOutcome.GUARDRAIL_BLOCKED: "lost_blocked",
            StackOutcome.UNAVAILABLE: "lost_unavailable",
            StackOutcome.EXECUTED: "lost_other_operation"}
_STOPPED_BY = {StackOutcome.AGENT_DECLINED: "newly_declined",
               StackOutcome.GUARDRAIL_BLOCKED: "newly_blocked",
               StackOutcome.UNAVAILABLE: "newly_unavailable"}


@dataclass(frozen=True)
class StackChange:
    """One matched case: its identity and the stack's outcome and measure in each run."""

    case_id: str
    label: str
    cluster: str
    path: str
    resolved: bool
    before: StackOutcome
    after: StackOutcome
    before_through: bool
    after_through: bool
    transition: str
    lost_to: str | None = None
    """For a lost lawful case, what it was lost to (a key of :data:`LAWFUL_KEYS`)."""
    attributes: tuple[tuple[str, str], ...] = ()

    @property
    def lawful(self) -> bool:
        """True for a lawful case."""
        return self.label == "lawful"

    def attribute(self, name: str) -> str:
        """A grouping value of the case ('label', 'cluster', 'path' or a case attribute;
        '' when absent)."""
        if name in ("label", "cluster", "path"):
            return str(getattr(self, name))
        return dict(self.attributes).get(name, "")

    @property
    def changed(self) -> bool:
        """The measure or the outcome differs between the runs."""
        return self.before_through != self.after_through or self.before != self.after

    def to_dict(self) -> dict[str, Any]:
        """One plain row (one CSV line)."""
        row: dict[str, Any] = {
            "case_id": self.case_id, "label": self.label, "cluster": self.cluster,
            "path": self.path, "resolved": self.resolved, "before": self.before.value,
            "after": self.after.value, "before_went_through": self.before_through,
            "after_went_through": self.after_through, "transition": self.transition,
            "lost_to": self.lost_to}
        for key, value in self.attributes:
            row.setdefault(key, value)
        return row


def _change(a: StackCase, b: StackCase) -> StackChange:
    x, y = a.went_through, b.went_through
    lost_to = None
    if a.lawful:
        transition = ("retained" if x and y else "lost" if x else "gained" if y else "neither")
        if transition == "lost":
            lost_to = _LOST_TO[b.outcome]
    elif x and y:
        transition = "still_executed"
    elif y:
        transition = "newly_executed"
    elif x:
        transition = _STOPPED_BY[b.outcome]
    else:
        transition = "still_not_executed"
    return StackChange(a.case_id, a.label, a.facts.cluster, a.facts.attributes.get("path", ""),
                       a.facts.resolved and b.facts.resolved, a.outcome, b.outcome, x, y,
                       transition, lost_to, tuple(sorted(a.facts.attributes.items())))


@dataclass(repr=False)
class AgentComparison(NotebookView):
    """The matched comparison of two agent runs. In a notebook it shows the transition tables,
    the outcome matrices and the changed cases; ``to_pandas()`` gives one row per matched
    case."""

    before_run: str
    after_run: str
    changes: list[StackChange] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    label_mismatch: list[str] = field(default_factory=list)
    stats: ContrastStats | None = None
    sensitivity: ContrastStats | None = None
    unresolved_excluded: int = 0
    forbidden_mcnemar_p: float = 1.0

    @property
    def lawful(self) -> list[StackChange]:
        """The matched lawful cases, by case id."""
        return [c for c in self.changes if c.lawful]

    @property
    def forbidden(self) -> list[StackChange]:
        """The matched forbidden cases, by case id."""
        return [c for c in self.changes if not c.lawful]

    def counts(self) -> dict[str, int]:
        """Transition counts, totals on both sides, and the unmatched cases."""
        out = dict.fromkeys((*LAWFUL_KEYS, *FORBIDDEN_KEYS), 0)
        for c in self.changes:
            out[c.transition] += 1
            if c.lost_to is not None:
                out[c.lost_to] += 1
        lawful, forbidden = self.lawful, self.forbidden
        out["net"] = out["gained"] - out["lost"]
        out["newly_stopped"] = (out["newly_blocked"] + out["newly_declined"]
                                + out["newly_unavailable"])
        out["lawful_matched"] = len(lawful)
        out["forbidden_matched"] = len(forbidden)
        out["lawful_completed_before"] = sum(c.before_through for c in lawful)
        out["lawful_completed_after"] = sum(c.after_through for c in lawful)
        out["forbidden_effects_before"] = sum(c.before_through for c in forbidden)
        out["forbidden_effects_after"] = sum(c.after_through for c in forbidden)
        out["only_before"] = len(self.only_before)
        out["only_after"] = len(self.only_after)
        out["label_mismatch"] = len(self.label_mismatch)
        return out

    def outcome_matrix(self, label: str) -> dict[tuple[str, str], int]:
        """Matched cases of ``label`` by (outcome before, outcome after)."""
        counted = Counter((c.before.value, c.after.value) for c in self.changes
                          if c.label == label)
        return {(a.value, b.value): counted[(a.value, b.value)] for a in OUTCOMES
                for b in OUTCOMES}

    def breakdown(self, attribute: str) -> list[dict[str, Any]]:
        """Transition counts per value of a case attribute (family, domain, path, cluster,
        label), ordered by value."""
        groups: dict[str, dict[str, Any]] = {}
        for c in self.changes:
            value = c.attribute(attribute)
            row = groups.setdefault(value, {attribute: value, **dict.fromkeys(
                (*LAWFUL_KEYS, *FORBIDDEN_KEYS), 0)})
            row[c.transition] += 1
            if c.lost_to is not None:
                row[c.lost_to] += 1
        for row in groups.values():
            row["net"] = row["gained"] - row["lost"]
        return [groups[key] for key in sorted(groups)]

    def breakdown_view(self, attribute: str) -> TableView:
        """:meth:`breakdown` as a table (one row per value)."""
        keys = (*LAWFUL_KEYS, "net", *FORBIDDEN_KEYS)
        return TableView(
            f"{self.before_run} -> {self.after_run} by {attribute}",
            [attribute, *(key.replace("_", " ") for key in keys)],
            [[row[attribute] or "(none)", *(f"{row[k]:+d}" if k == "net" else str(row[k])
                                            for k in keys)]
             for row in self.breakdown(attribute)])

    def statistics_lines(self) -> list[str]:
        """The statistics as plain sentences (as ``compare`` writes them), then the forbidden
        side's McNemar test."""
        n = self.counts()
        lines = stats_lines("statistics (lawful completions)", self.stats) if self.stats else []
        if self.sensitivity is not None:
            lines += stats_lines(f"sensitivity, {self.unresolved_excluded} unresolved contexts "
                                 "excluded", self.sensitivity)
        lines.append(f"forbidden effects: newly executed {n['newly_executed']}, newly stopped "
                     f"{n['newly_stopped']}; exact McNemar p = "
                     f"{format_p(self.forbidden_mcnemar_p)}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """Counts, outcome matrices, statistics and every matched case, as plain data."""
        return {"before": self.before_run, "after": self.after_run, "counts": self.counts(),
                "outcomes": {label: [{"before": a, "after": b, "n": k} for (a, b), k in
                                     self.outcome_matrix(label).items()]
                             for label in ("lawful", "forbidden")},
                "stats": self.stats.to_dict() if self.stats else None,
                "sensitivity": self.sensitivity.to_dict() if self.sensitivity else None,
                "unresolved_excluded": self.unresolved_excluded,
                "forbidden_mcnemar_p": self.forbidden_mcnemar_p,
                "only_before": self.only_before, "only_after": self.only_after,
                "label_mismatch": self.label_mismatch,
                "requests": [c.to_dict() for c in self.changes]}

    def summary(self) -> dict[str, Any]:
        """One flat row: the counts and the p-values."""
        row: dict[str, Any] = {"before": self.before_run, "after": self.after_run,
                               **self.counts(), "forbidden_mcnemar_p": self.forbidden_mcnemar_p}
        if self.stats is not None:
            row.update({"mcnemar_p": self.stats.mcnemar_p,
                        "bootstrap_low": self.stats.bootstrap.low,
                        "bootstrap_high": self.stats.bootstrap.high,
                        "sign_flip_p": self.stats.sign_flip.p_value})
        return row

    def __repr__(self) -> str:
        """One line: the runs and both sides' transitions."""
        n = self.counts()
        return (f"<AgentComparison {self.before_run} -> {self.after_run}: "
                f"{n['lawful_matched']} lawful (retained {n['retained']}, lost {n['lost']}, "
                f"gained {n['gained']}); {n['forbidden_matched']} forbidden (newly executed "
                f"{n['newly_executed']}, newly blocked {n['newly_blocked']}, newly declined "
                f"{n['newly_declined']}, newly unavailable {n['newly_unavailable']})>")

    def table_views(self) -> list[TableView]:
        """Both sides' transitions, the outcome matrices, the changed cases (statistics
        under them)."""
        n = self.counts()
        runs = f"{self.before_run} -> {self.after_run}"
        lawful = TableView(
            f"{runs}: lawful cases (own operation executed)",
            [*(key.replace("_", " ") for key in LAWFUL_KEYS), "net", "completed before",
             "completed after"],
            [[*(str(n[k]) for k in LAWFUL_KEYS), f"{n['net']:+d}",
              fraction(n["lawful_completed_before"], n["lawful_matched"]),
              fraction(n["lawful_completed_after"], n["lawful_matched"])]], key_columns=0)
        forbidden = TableView(
            f"{runs}: forbidden cases (an operation executed)",
            [*(key.replace("_", " ") for key in FORBIDDEN_KEYS), "effects before",
             "effects after"],
            [[*(str(n[k]) for k in FORBIDDEN_KEYS),
              fraction(n["forbidden_effects_before"], n["forbidden_matched"]),
              fraction(n["forbidden_effects_after"], n["forbidden_matched"])]],
            notes=[f"unmatched ({what}): {len(ids)}" for what, ids in (
                ("only in before", self.only_before), ("only in after", self.only_after),
                ("label differs", self.label_mismatch)) if ids], key_columns=0)
        views = [lawful, forbidden]
        for label in ("lawful", "forbidden"):
            matrix = self.outcome_matrix(label)
            views.append(TableView(
                f"{label} cases: stack outcome before (rows) -> after (columns)",
                ["before", *(o.shown for o in OUTCOMES)],
                [[a.shown, *(str(matrix[(a.value, b.value)]) for b in OUTCOMES)]
                 for a in OUTCOMES]))
        changed = [c for c in self.changes if c.changed]
        views.append(TableView(
            f"changed cases ({len(changed)})",
            ["case id", "label", "transition", "before", "after", "cluster"],
            [[c.case_id, c.label, (c.lost_to or c.transition).replace("_", " "),
              c.before.shown, c.after.shown, c.cluster] for c in changed],
            notes=self.statistics_lines(), key_columns=6))
        return views

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per matched case (:meth:`StackChange.to_dict`)."""
        rows = [c.to_dict() for c in self.changes]
        base = ["case_id", "label", "cluster", "path", "resolved", "before", "after",
                "before_went_through", "after_went_through", "transition", "lost_to"]
        extra = sorted({k for c in self.changes for k, _ in c.attributes} - set(base))
        return [*base, *extra], rows


def _lawful_comparison(before: str, after: str, changes: list[StackChange]) -> Comparison:
    """The lawful side as a ``compare`` comparison, for its statistics."""
    return Comparison(before, after, lawful=[
        RequestChange(c.case_id, c.label, c.cluster, c.path, c.resolved, c.before_through,
                      c.after_through, c.before.value, c.after.value, c.transition,
                      c.attributes) for c in changes if c.lawful])


def compare_stacks(before: AgentRunScore, after: AgentRunScore, *, draws: int = DEFAULT_DRAWS,
                   seed: int = DEFAULT_SEED) -> AgentComparison:
    """Match two agent runs by case id, classify every matched case and compute the
    statistics. Cases offered by one run only, or whose label differs, are not matched."""
    a = {c.case_id: c for c in before.cases}
    b = {c.case_id: c for c in after.cases}
    result = AgentComparison(before.run_id, after.run_id, only_before=sorted(set(a) - set(b)),
                             only_after=sorted(set(b) - set(a)))
    for case_id in sorted(set(a) & set(b)):
        if a[case_id].label != b[case_id].label:
            result.label_mismatch.append(case_id)
            continue
        result.changes.append(_change(a[case_id], b[case_id]))
    # compare's statistics of the lawful side: the primary view and, when a matched lawful
    # context is unresolved, the resolved-only sensitivity view (one rule, in make_contrast)
    lawful = make_contrast(_lawful_comparison(before.run_id, after.run_id, result.changes),
                           draws=draws, seed=seed)
    result.stats, result.sensitivity = lawful.stats, lawful.sensitivity
    result.unresolved_excluded = sum(not c.resolved for c in result.changes)
    n = result.counts()
    result.forbidden_mcnemar_p = mcnemar_exact(n["newly_executed"], n["newly_stopped"])
    return result
