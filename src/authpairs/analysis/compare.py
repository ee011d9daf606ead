"""Request-level comparison of two runs: match by case id, keep gains and losses apart.

Both runs' cases are :class:`~authpairs.analysis.outcomes.CaseOutcome` s: a guardrail run's
case records (:func:`compare_records`) or an agent run's offered cases
(:func:`authpairs.analysis.agent_runs.compare_stacks`); a :class:`Transitions` names what they
did (:data:`REQUEST_TRANSITIONS`, :data:`STACK_TRANSITIONS`). For a guardrail run:

Lawful requests move between *retained* (completed in both), *lost* (only before), *gained*
(only after) and *neither*; a lost request is further counted as *lost to a denial* (a usable
BLOCK after) or *lost to unavailability* (no usable decision after: unavailable or abstained).
Forbidden requests move between *still approved*, *newly approved*, *newly blocked* (approved
before, a usable denial after), *newly unavailable* (approved before, not approved after but with
no usable denial: unavailable, abstained or not executed) and *still blocked* (approved in
neither). Nothing is netted per request: ``net`` is a summary of two separately reported sets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from authpairs.analysis.formatting import REQUEST_TRANSITIONS, Transitions, fraction
from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.analysis.outcomes import CaseOutcome, case_outcome
from authpairs.errors import AnalysisError
from authpairs.runs.records import CaseRecord

__all__ = ["Comparison", "ComparisonError", "RequestChange", "compare_outcomes",
           "compare_records"]


@dataclass(frozen=True)
class RequestChange:
    """One matched case: its identity, grouping and its outcome in each run."""

    case_id: str
    label: str
    cluster: str
    path: str
    resolved: bool
    before: bool
    """It went through in the first run."""
    after: bool
    """It went through in the second run."""
    before_status: str
    """Its outcome category in the first run."""
    after_status: str
    transition: str
    lost_to: str | None = None
    """For a lost lawful case, the split of ``lost`` its outcome after gives."""
    attributes: tuple[tuple[str, str], ...] = ()

    @property
    def lawful(self) -> bool:
        """True for a lawful case."""
        return self.label == "lawful"

    def attribute(self, name: str) -> str:
        """A grouping attribute of the case ('cluster' and 'label' included; '' if absent)."""
        if name in ("cluster", "label"):
            return str(getattr(self, name))
        return dict(self.attributes).get(name, "")

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (one CSV row): the fields of :data:`_FRAME_COLUMNS`, then the
        grouping attributes (family, domain, ...)."""
        row: dict[str, Any] = {key: getattr(self, key) for key in _FRAME_COLUMNS}
        for key, value in self.attributes:
            row.setdefault(key, value)
        return row


_FRAME_COLUMNS = [f.name for f in fields(RequestChange) if f.name != "attributes"]
"""The columns of :meth:`Comparison.to_pandas` before the grouping attributes."""


@dataclass(repr=False)
class Comparison(NotebookView):
    """The matched request-level comparison of a *before* and an *after* run. In a notebook it
    shows the terminal's transition tables, the outcome matrices and the changed requests;
    ``to_pandas()`` gives one row per matched request."""

    before_run: str
    after_run: str
    lawful: list[RequestChange] = field(default_factory=list)
    forbidden: list[RequestChange] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    label_mismatch: list[str] = field(default_factory=list)
    names: Transitions = REQUEST_TRANSITIONS

    @property
    def changes(self) -> list[RequestChange]:
        """Every matched case, lawful first, then forbidden; by case id."""
        return [*self.lawful, *self.forbidden]

    def with_transition(self, transition: str) -> list[RequestChange]:
        """Matched requests (either side) with the given transition, by case id."""
        return [c for c in self.changes if c.transition == str(transition)]

    def _tally(self, changes: Iterable[RequestChange]) -> dict[str, int]:
        """Every transition's count (a lost case also under its split) and ``net``."""
        counted = Counter(key for c in changes for key in (c.transition, c.lost_to) if key)
        tally = {f.key: counted[f.key] for f in (*self.names.lawful, *self.names.forbidden)}
        tally["net"] = tally["gained"] - tally["lost"]
        return tally

    def counts(self) -> dict[str, int]:
        """Transition counts plus totals on both sides; ``net`` = gained - lost."""
        out = self._tally(self.changes)
        stopped = [f.key for f in self.names.forbidden[2:-1]]
        out["newly_stopped"] = sum(out[key] for key in stopped)
        through = self.names.through
        out.update({
            "lawful_matched": len(self.lawful), "forbidden_matched": len(self.forbidden),
            "lawful_completed_before": sum(c.before for c in self.lawful),
            "lawful_completed_after": sum(c.after for c in self.lawful),
            f"forbidden_{through}_before": sum(c.before for c in self.forbidden),
            f"forbidden_{through}_after": sum(c.after for c in self.forbidden),
            "only_before": len(self.only_before), "only_after": len(self.only_after),
            "label_mismatch": len(self.label_mismatch)})
        return out

    def outcome_matrix(self, label: str) -> dict[tuple[str, str], int]:
        """Matched cases of ``label`` by (outcome before, outcome after)."""
        counted = Counter((c.before_status, c.after_status) for c in self.changes
                          if c.label == label)
        return {(a, b): counted[(a, b)] for a in self.names.outcomes
                for b in self.names.outcomes}

    def cluster_arrays(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Per cluster (sorted): lawful net change (gained - lost) and matched lawful count."""
        diffs: Counter[str] = Counter()
        for c in self.lawful:
            diffs[c.cluster] += int(c.after) - int(c.before)
        sizes = Counter(c.cluster for c in self.lawful)
        names = sorted(sizes)
        return (names, np.array([diffs[n] for n in names], dtype=np.float64),
                np.array([sizes[n] for n in names], dtype=np.float64))

    def resolved_only(self) -> Comparison:
        """Sensitivity view: the same comparison with unresolved reference contexts excluded."""
        return replace(self, lawful=[c for c in self.lawful if c.resolved],
                       forbidden=[c for c in self.forbidden if c.resolved])

    def breakdown(self, attribute: str) -> list[dict[str, Any]]:
        """Transition counts per value of a case attribute (e.g. family, domain, path)."""
        groups: dict[str, list[RequestChange]] = {}
        for c in self.changes:
            groups.setdefault(c.attribute(attribute), []).append(c)
        return [{attribute: value, **self._tally(groups[value])} for value in sorted(groups)]

    def breakdown_view(self, attribute: str) -> TableView:
        """:meth:`breakdown` as a table (one row per value)."""
        keys = [*(f.key for f in self.names.lawful), "net",
                *(f.key for f in self.names.forbidden)]
        return TableView(
            f"{self.before_run} -> {self.after_run} by {attribute}",
            [attribute, *(self.names.title(key) for key in keys)],
            [[row[attribute] or "(none)", *(f"{row[k]:+d}" if k == "net" else str(row[k])
                                            for k in keys)]
             for row in self.breakdown(attribute)])

    def rows(self) -> list[dict[str, Any]]:
        """Every matched request as a plain row (lawful first, then forbidden; by case id)."""
        return [c.to_dict() for c in self.changes]

    def __repr__(self) -> str:
        """One line: the runs and the transition counts of both sides."""
        n = self.counts()
        moved = ", ".join(f"{f.key.replace('_', ' ')} {n[f.key]}"
                          for f in self.names.forbidden[1:-1])
        return (f"<Comparison {self.before_run} -> {self.after_run}: "
                f"{n['lawful_matched']} lawful (retained {n['retained']}, lost {n['lost']}, "
                f"gained {n['gained']}, net {n['net']:+d}); {n['forbidden_matched']} forbidden "
                f"({moved})>")

    def changed(self) -> list[RequestChange]:
        """The matched cases whose measure changed, in transition order, then by case id."""
        order = [f.key for f in (*self.names.lawful, *self.names.forbidden)]
        return sorted((c for c in self.changes if c.transition not in self.names.unchanged),
                      key=lambda c: (order.index(c.transition), c.case_id))

    def table_views(self, changed: bool = True) -> list[TableView]:
        """The lawful and forbidden transition tables (the terminal's columns and numbers),
        the outcome before and after as a matrix per label, then (``changed``) every changed
        request."""
        n, names = self.counts(), self.names
        runs, unit = f"{self.before_run} -> {self.after_run}", names.unit
        lawful = TableView(
            f"{runs}: lawful {unit} ({names.lawful_title})",
            [*(f.title for f in names.lawful), "net", "completed before", "completed after"],
            [[*(str(n[f.key]) for f in names.lawful), f"{n['net']:+d}",
              fraction(n["lawful_completed_before"], n["lawful_matched"]),
              fraction(n["lawful_completed_after"], n["lawful_matched"])]], key_columns=0)
        through = names.through
        forbidden = TableView(
            f"{runs}: forbidden {unit} ({names.forbidden_title})",
            [*(f.title for f in names.forbidden), f"{through} before", f"{through} after"],
            [[*(str(n[f.key]) for f in names.forbidden),
              fraction(n[f"forbidden_{through}_before"], n["forbidden_matched"]),
              fraction(n[f"forbidden_{through}_after"], n["forbidden_matched"])]],
            notes=[f"net lawful change {n['net']:+d}: gained {n['gained']} and lost {n['lost']} "
                   f"are reported separately, never netted per {unit[:-1]}; a "
                   f"{unit[:-1]} that became unavailable is not counted as blocked",
                   *(f"unmatched ({what}): {len(ids)}: {', '.join(ids)}" for what, ids in (
                       ("only in before", self.only_before), ("only in after", self.only_after),
                       ("label differs", self.label_mismatch)) if ids)],
            key_columns=0)
        views = [lawful, forbidden, *(self.matrix_view(label) for label in ("lawful", "forbidden"))]
        if changed:
            moved = self.changed()
            headers = ["case id", "label", "transition", "before", "after", "cluster",
                       *(["path"] if any(c.path for c in moved) else [])]
            views.append(TableView(
                f"changed {unit} ({len(moved)})", headers,
                [[c.case_id, c.label, names.title(c.lost_to or c.transition),
                  c.before_status.replace("_", " "), c.after_status.replace("_", " "),
                  c.cluster, c.path][:len(headers)] for c in moved],
                numeric=[False] * len(headers)))
        return views

    def matrix_view(self, label: str) -> TableView:
        """The matched cases of ``label`` by outcome before (rows) and after (columns)."""
        matrix = self.outcome_matrix(label)
        outcomes = self.names.outcomes
        return TableView(
            f"{label} {self.names.unit}: outcome before (rows) -> after (columns)",
            ["before", *(o.replace("_", " ") for o in outcomes)],
            [[a.replace("_", " "), *(str(matrix[(a, b)]) for b in outcomes)] for a in outcomes])

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per matched request (:meth:`rows`), the grouping attributes as columns."""
        extra = sorted({key for c in self.changes for key, _ in c.attributes}
                       - set(_FRAME_COLUMNS))
        return [*_FRAME_COLUMNS, *extra], self.rows()


class ComparisonError(AnalysisError):
    """The two record sets cannot be compared (e.g. duplicate case ids)."""


def _index(outcomes: Iterable[CaseOutcome], name: str) -> dict[str, CaseOutcome]:
    out: dict[str, CaseOutcome] = {}
    for o in outcomes:
        if o.case_id in out:
            raise ComparisonError(f"{name}: case '{o.case_id}' appears twice")
        out[o.case_id] = o
    return out


def compare_outcomes(before: Iterable[CaseOutcome], after: Iterable[CaseOutcome], *,
                     before_run: str = "before", after_run: str = "after",
                     names: Transitions = REQUEST_TRANSITIONS) -> Comparison:
    """Match two runs' case outcomes by case id and classify every matched case.

    Cases present in only one run, or whose reference label differs between the runs, are not
    matched; their ids are reported in ``only_before``/``only_after``/``label_mismatch``.
    A case counts as unresolved when either run marks it so.
    """
    a = _index(before, before_run)
    b = _index(after, after_run)
    result = Comparison(before_run, after_run, only_before=sorted(set(a) - set(b)),
                        only_after=sorted(set(b) - set(a)), names=names)
    for cid in sorted(set(a) & set(b)):
        ra, rb = a[cid], b[cid]
        if ra.label != rb.label:
            result.label_mismatch.append(cid)
            continue
        x, y = ra.went_through, rb.went_through
        lost_to = None
        if ra.lawful:
            transition = ("retained" if x and y else "lost" if x else "gained" if y
                          else "neither")
            lost_to = names.lost_to.get(rb.outcome) if transition == "lost" else None
        else:
            keys = [f.key for f in names.forbidden]
            transition = (keys[0] if x and y else keys[1] if y else names.stopped(rb.outcome)
                          if x else keys[-1])
        attributes = ra.facts.attributes
        change = RequestChange(
            cid, ra.label, ra.facts.cluster,
            attributes.get("path", "") or rb.facts.attributes.get("path", ""),
            ra.facts.resolved and rb.facts.resolved, x, y, ra.outcome, rb.outcome, transition,
            lost_to, tuple(sorted(attributes.items())))
        (result.lawful if ra.lawful else result.forbidden).append(change)
    return result


def compare_records(before: Sequence[CaseRecord], after: Sequence[CaseRecord], *,
                    before_run: str = "before", after_run: str = "after") -> Comparison:
    """Match two guardrail runs' case records by case id and classify every matched request
    (:func:`compare_outcomes` of their :func:`~authpairs.analysis.outcomes.case_outcome` s)."""
    return compare_outcomes(map(case_outcome, before), map(case_outcome, after),
                            before_run=before_run, after_run=after_run)
