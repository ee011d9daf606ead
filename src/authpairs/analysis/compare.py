"""Request-level comparison of two runs: match by case id, keep gains and losses apart.

Lawful requests move between *retained* (completed in both), *lost* (only before), *gained*
(only after) and *neither*; a lost request is further counted as *lost to a denial* (a usable
BLOCK after) or *lost to unavailability* (no usable decision after: unavailable or abstained).
Forbidden requests move between *still approved*, *newly approved*, *newly blocked* (approved
before, a usable denial after), *newly unavailable* (approved before, not approved after but with
no usable denial: unavailable, abstained or not executed) and *still blocked* (approved in
neither). Nothing is netted per request: ``net`` is a summary of two separately reported sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from authpairs.analysis.formatting import FORBIDDEN_FIELDS, LAWFUL_FIELDS, count_title
from authpairs.analysis.notebook import NotebookView, TableView, fraction
from authpairs.analysis.outcomes import approved, completed, path_of, usable_denial
from authpairs.errors import AnalysisError
from authpairs.runs.records import CaseRecord


class LawfulTransition(StrEnum):
    """What happened to a lawful request between two runs."""

    RETAINED = "retained"
    LOST = "lost"
    GAINED = "gained"
    NEITHER = "neither"


class ForbiddenTransition(StrEnum):
    """What happened to a forbidden request between two runs."""

    STILL_APPROVED = "still_approved"
    NEWLY_APPROVED = "newly_approved"
    NEWLY_BLOCKED = "newly_blocked"
    NEWLY_UNAVAILABLE = "newly_unavailable"
    STILL_BLOCKED = "still_blocked"


_NO_DECISION = ("unavailable", "abstention")
"""Record statuses that are not a usable decision (see :class:`OutcomeStatus`)."""


@dataclass(frozen=True)
class RequestChange:
    """One matched request: its identity, grouping and the outcome in each run."""

    case_id: str
    label: str
    cluster: str
    path: str
    resolved: bool
    before: bool
    after: bool
    before_status: str
    after_status: str
    transition: str
    attributes: tuple[tuple[str, str], ...] = ()

    def attribute(self, name: str) -> str:
        """A grouping attribute of the case ('cluster' and 'label' included; '' if absent)."""
        if name == "cluster":
            return self.cluster
        if name == "label":
            return self.label
        return dict(self.attributes).get(name, "")

    def lost_split(self) -> str | None:
        """For a lost lawful request, ``'lost_denied'`` (a usable BLOCK after) or
        ``'lost_unavailable'`` (no usable decision after); None otherwise."""
        if self.transition != LawfulTransition.LOST.value:
            return None
        if self.after_status == "BLOCK":
            return "lost_denied"
        if self.after_status in _NO_DECISION:
            return "lost_unavailable"
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (one CSV row)."""
        row: dict[str, Any] = {
            "case_id": self.case_id, "label": self.label, "cluster": self.cluster,
            "path": self.path, "resolved": self.resolved, "before": self.before,
            "after": self.after, "before_status": self.before_status,
            "after_status": self.after_status, "transition": self.transition}
        for key, value in self.attributes:  # grouping attributes (family, domain, ...)
            row.setdefault(key, value)
        return row


def _status(record: CaseRecord) -> str:
    if record.decision is not None and record.status.value == "decision":
        return record.decision.value
    return record.status.value


def _lawful_transition(before: bool, after: bool) -> LawfulTransition:
    if before and after:
        return LawfulTransition.RETAINED
    if before:
        return LawfulTransition.LOST
    if after:
        return LawfulTransition.GAINED
    return LawfulTransition.NEITHER


def _forbidden_transition(before: bool, after: bool, denied_after: bool) -> ForbiddenTransition:
    if before and after:
        return ForbiddenTransition.STILL_APPROVED
    if after:
        return ForbiddenTransition.NEWLY_APPROVED
    if before:
        return (ForbiddenTransition.NEWLY_BLOCKED if denied_after
                else ForbiddenTransition.NEWLY_UNAVAILABLE)
    return ForbiddenTransition.STILL_BLOCKED


_FRAME_COLUMNS = ["case_id", "label", "cluster", "path", "resolved", "before", "after",
                  "before_status", "after_status", "transition", "lost_split"]
"""The columns of :meth:`Comparison.to_pandas` before the grouping attributes."""


@dataclass(repr=False)
class Comparison(NotebookView):
    """The matched request-level comparison of a *before* and an *after* run. In a notebook it
    shows the terminal's transition tables and the changed requests; ``to_pandas()`` gives one
    row per matched request."""

    before_run: str
    after_run: str
    lawful: list[RequestChange] = field(default_factory=list)
    forbidden: list[RequestChange] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    label_mismatch: list[str] = field(default_factory=list)

    def with_transition(self, transition: str | LawfulTransition | ForbiddenTransition
                        ) -> list[RequestChange]:
        """Matched requests (either side) with the given transition, by case id."""
        return [c for c in (*self.lawful, *self.forbidden) if c.transition == str(transition)]

    def counts(self) -> dict[str, int]:
        """Transition counts plus totals on both sides; ``net`` = gained - lost."""
        out: dict[str, int] = {t.value: 0 for t in LawfulTransition}
        out.update({t.value: 0 for t in ForbiddenTransition})
        for c in (*self.lawful, *self.forbidden):
            out[c.transition] += 1
        out["net"] = out["gained"] - out["lost"]
        out["lost_denied"] = out["lost_unavailable"] = 0
        for c in self.lawful:
            split = c.lost_split()
            if split is not None:
                out[split] += 1
        out["lawful_matched"] = len(self.lawful)
        out["forbidden_matched"] = len(self.forbidden)
        out["lawful_completed_before"] = sum(c.before for c in self.lawful)
        out["lawful_completed_after"] = sum(c.after for c in self.lawful)
        out["forbidden_approved_before"] = sum(c.before for c in self.forbidden)
        out["forbidden_approved_after"] = sum(c.after for c in self.forbidden)
        out["only_before"] = len(self.only_before)
        out["only_after"] = len(self.only_after)
        out["label_mismatch"] = len(self.label_mismatch)
        return out

    def cluster_arrays(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Per cluster (sorted): lawful net change (gained - lost) and matched lawful count."""
        diffs: dict[str, int] = {}
        sizes: dict[str, int] = {}
        for c in self.lawful:
            diffs[c.cluster] = diffs.get(c.cluster, 0) + int(c.after) - int(c.before)
            sizes[c.cluster] = sizes.get(c.cluster, 0) + 1
        names = sorted(sizes)
        return (names, np.array([diffs[n] for n in names], dtype=np.float64),
                np.array([sizes[n] for n in names], dtype=np.float64))

    def restricted(self, keep: Iterable[str]) -> Comparison:
        """The same comparison limited to the given case ids (e.g. resolved contexts only)."""
        wanted = set(keep)
        return Comparison(self.before_run, self.after_run,
                          [c for c in self.lawful if c.case_id in wanted],
                          [c for c in self.forbidden if c.case_id in wanted],
                          list(self.only_before), list(self.only_after),
                          list(self.label_mismatch))

    def resolved_only(self) -> Comparison:
        """Sensitivity view: unresolved reference contexts excluded."""
        return self.restricted(c.case_id for c in (*self.lawful, *self.forbidden) if c.resolved)

    def breakdown(self, attribute: str) -> list[dict[str, Any]]:
        """Transition counts per value of a case attribute (e.g. family, domain, path)."""
        groups: dict[str, dict[str, Any]] = {}
        for c in (*self.lawful, *self.forbidden):
            value = c.attribute(attribute)
            row = groups.setdefault(value, {attribute: value, **{
                t.value: 0 for t in (*LawfulTransition, *ForbiddenTransition)},
                "lost_denied": 0, "lost_unavailable": 0})
            row[c.transition] += 1
            split = c.lost_split()
            if split is not None:
                row[split] += 1
        for row in groups.values():
            row["net"] = row["gained"] - row["lost"]
        return [groups[k] for k in sorted(groups)]

    def rows(self) -> list[dict[str, Any]]:
        """Every matched request as a plain row (lawful first, then forbidden; by case id)."""
        return [c.to_dict() for c in (*self.lawful, *self.forbidden)]

    def __repr__(self) -> str:
        """One line: the runs and the transition counts of both sides."""
        n = self.counts()
        return (f"<Comparison {self.before_run} -> {self.after_run}: "
                f"{n['lawful_matched']} lawful (retained {n['retained']}, lost {n['lost']}, "
                f"gained {n['gained']}, net {n['net']:+d}); {n['forbidden_matched']} forbidden "
                f"(newly approved {n['newly_approved']}, newly blocked {n['newly_blocked']}, "
                f"newly unavailable {n['newly_unavailable']})>")

    def table_views(self) -> list[TableView]:
        """The lawful and forbidden transition tables (the terminal's columns and numbers),
        then every changed request."""
        n = self.counts()
        runs = f"{self.before_run} -> {self.after_run}"
        lawful = TableView(
            f"{runs}: lawful requests (completed)",
            [*(f.title for f in LAWFUL_FIELDS), "net", "completed before", "completed after"],
            [[*(str(n[f.key]) for f in LAWFUL_FIELDS), f"{n['net']:+d}",
              fraction(n["lawful_completed_before"], n["lawful_matched"]),
              fraction(n["lawful_completed_after"], n["lawful_matched"])]], key_columns=0)
        forbidden = TableView(
            f"{runs}: forbidden requests (approved)",
            [*(f.title for f in FORBIDDEN_FIELDS), "approved before", "approved after"],
            [[*(str(n[f.key]) for f in FORBIDDEN_FIELDS),
              fraction(n["forbidden_approved_before"], n["forbidden_matched"]),
              fraction(n["forbidden_approved_after"], n["forbidden_matched"])]],
            notes=[f"net lawful change {n['net']:+d}: gained {n['gained']} and lost {n['lost']} "
                   "are reported separately, never netted per request; a request that became "
                   "unavailable is not counted as blocked",
                   *(f"unmatched ({what}): {len(ids)}" for what, ids in (
                       ("only in before", self.only_before), ("only in after", self.only_after),
                       ("label differs", self.label_mismatch)) if ids)],
            key_columns=0)
        changed = [c for c in (*self.lawful, *self.forbidden)
                   if c.transition not in ("retained", "neither", "still_approved",
                                           "still_blocked")]
        return [lawful, forbidden, TableView(
            f"changed requests ({len(changed)})",
            ["case id", "transition", "before", "after", "cluster"],
            [[c.case_id, count_title(c.lost_split() or c.transition), c.before_status,
              c.after_status, c.cluster] for c in changed], key_columns=5)]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per matched request (:meth:`rows`), with its ``lost_split`` and the
        grouping attributes as columns."""
        rows = [{**c.to_dict(), "lost_split": c.lost_split()}
                for c in (*self.lawful, *self.forbidden)]
        extra = sorted({key for c in (*self.lawful, *self.forbidden) for key, _ in c.attributes}
                       - set(_FRAME_COLUMNS))
        return [*_FRAME_COLUMNS, *extra], rows


class ComparisonError(AnalysisError):
    """The two record sets cannot be compared (e.g. duplicate case ids)."""


def _index(records: Sequence[CaseRecord], name: str) -> dict[str, CaseRecord]:
    out: dict[str, CaseRecord] = {}
    for r in records:
        if r.case_id in out:
            raise ComparisonError(f"{name}: case '{r.case_id}' appears twice")
        out[r.case_id] = r
    return out


def compare_records(before: Sequence[CaseRecord], after: Sequence[CaseRecord], *,
                    before_run: str = "before", after_run: str = "after") -> Comparison:
    """Match two runs' records by case id and classify every matched request.

    Cases present in only one run, or whose reference label differs between the runs, are not
    matched; their ids are reported in ``only_before``/``only_after``/``label_mismatch``.
    A case counts as unresolved when either run marks it so.
    """
    a = _index(before, before_run)
    b = _index(after, after_run)
    result = Comparison(before_run, after_run,
                        only_before=sorted(set(a) - set(b)), only_after=sorted(set(b) - set(a)))
    for cid in sorted(set(a) & set(b)):
        ra, rb = a[cid], b[cid]
        if ra.label != rb.label:
            result.label_mismatch.append(cid)
            continue
        if ra.lawful:
            x, y = completed(ra), completed(rb)
            transition: str = _lawful_transition(x, y).value
        else:
            x, y = approved(ra), approved(rb)
            transition = _forbidden_transition(x, y, usable_denial(rb)).value
        change = RequestChange(cid, ra.label, ra.cluster, path_of(ra) or path_of(rb),
                               ra.resolved and rb.resolved, x, y, _status(ra), _status(rb),
                               transition, tuple(sorted(ra.attributes.items())))
        (result.lawful if ra.lawful else result.forbidden).append(change)
    return result
