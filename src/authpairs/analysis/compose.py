"""All-must-allow composition replayed from cached decisions (no model is called).

For an ordered selection of reviewers, the first sees every request; a later reviewer is
consulted only after the request went through every earlier one (:attr:`CaseRecord.went_through`:
an ALLOW dispatch, executed where an effect was enforced). A BLOCK, an abstention
or an unavailable response stops the chain and prevents approval. The accepted set is therefore
the intersection of the members' ALLOW sets (order-invariant); consultations, reached failures
and selected tokens depend on the order.

Selected tokens: ``input_tokens`` and ``output_tokens`` of every consulted record. Output tokens
follow the OpenAI usage convention (``completion_tokens`` already includes reasoning tokens), so
``reasoning_tokens`` are reported separately and not added again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.analysis.outcomes import outcome_of
from authpairs.errors import AnalysisError
from authpairs.runs.records import CaseRecord


class CompositionError(AnalysisError):
    """Reviewer runs that cannot be composed (too few, duplicates, conflicting labels)."""


@dataclass(frozen=True)
class ReviewerMatrix:
    """Cached outcomes of ``k`` reviewers on the same ``n`` cases, as aligned arrays."""

    names: tuple[str, ...]
    case_ids: tuple[str, ...]
    forbidden: np.ndarray  # (n,) bool: reference label forbidden
    allow: np.ndarray  # (k, n) bool: usable ALLOW
    unavailable: np.ndarray  # (k, n) bool
    abstention: np.ndarray  # (k, n) bool
    input_tokens: np.ndarray  # (k, n) int64
    output_tokens: np.ndarray  # (k, n) int64
    reasoning_tokens: np.ndarray  # (k, n) int64
    unmatched: tuple[str, ...]  # case ids not present in every run

    @property
    def n_forbidden(self) -> int:
        """Number of forbidden cases."""
        return int(self.forbidden.sum())

    @property
    def n_lawful(self) -> int:
        """Number of lawful cases."""
        return int((~self.forbidden).sum())


def build_matrix(runs: Mapping[str, Sequence[CaseRecord]]) -> ReviewerMatrix:
    """Align the runs on the cases present in all of them (others are reported as unmatched)."""
    if not runs:
        raise CompositionError("at least one reviewer run is needed")
    names = tuple(runs)
    indexed: list[dict[str, CaseRecord]] = []
    for name in names:
        idx: dict[str, CaseRecord] = {}
        for r in runs[name]:
            if r.case_id in idx:
                raise CompositionError(f"run '{name}': case '{r.case_id}' appears twice")
            idx[r.case_id] = r
        indexed.append(idx)
    common = set(indexed[0]).intersection(*indexed[1:])
    everything = set().union(*indexed)
    ids = tuple(sorted(common))
    for cid in ids:
        labels = {idx[cid].label for idx in indexed}
        if len(labels) != 1:
            raise CompositionError(f"case '{cid}': reference labels differ between runs: "
                                   f"{sorted(labels)}")
    grid = [[idx[cid] for cid in ids] for idx in indexed]  # (k, n): run i's record of case j

    def cells(value: Callable[[CaseRecord], Any], dtype: Any) -> np.ndarray:
        return np.array([[value(r) for r in row] for row in grid], dtype=dtype)

    return ReviewerMatrix(
        names, ids, np.array([not r.lawful for r in grid[0]], dtype=bool),
        cells(lambda r: r.went_through, bool),  # allowed: went through (the one definition)
        cells(lambda r: outcome_of(r) == "unavailable", bool),
        cells(lambda r: outcome_of(r) == "abstention", bool),
        cells(lambda r: r.input_tokens, np.int64), cells(lambda r: r.output_tokens, np.int64),
        cells(lambda r: r.reasoning_tokens, np.int64), tuple(sorted(everything - common)))


@dataclass(frozen=True, repr=False)
class CompositionResult(NotebookView):
    """Replay outcome of one ordered selection of reviewers. In a notebook it shows as its row
    of the terminal's compositions table; ``to_pandas()`` gives that row with every count."""

    order: tuple[str, ...]
    incorrect_approvals: int
    lawful_approvals: int
    lawful_nonapprovals: int
    unavailable: int
    abstentions: int
    consultations: int
    additional_consultations: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    input_tokens_forbidden: int
    input_tokens_lawful: int
    output_tokens_forbidden: int
    output_tokens_lawful: int
    n_forbidden: int
    n_lawful: int

    @property
    def name(self) -> str:
        """Display name: members joined by ' -> '."""
        return " -> ".join(self.order)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (one CSV row)."""
        out = asdict(self)
        out["order"] = self.name
        out["size"] = len(self.order)
        return out

    def __repr__(self) -> str:
        """One line: the order, its approvals and its consultations."""
        return (f"<CompositionResult {self.name}: incorrect approvals "
                f"{self.incorrect_approvals}/{self.n_forbidden}, lawful approvals "
                f"{self.lawful_approvals}/{self.n_lawful}, {self.unavailable} reached "
                f"unavailable, {self.consultations:,} consultations>")

    def table_views(self) -> list[TableView]:
        """The compositions table with this order's row."""
        return [composition_view([self], f"all-must-allow composition ({self.n_forbidden} "
                                          f"forbidden / {self.n_lawful} lawful)")]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row: :meth:`to_dict`."""
        row = self.to_dict()
        return list(row), [row]


class Compositions(list[CompositionResult], NotebookView):
    """Every replayed order (what :func:`compose_all` returns): a list that shows as the
    terminal's compositions table in a notebook and gives one row per order in
    ``to_pandas()``."""

    def __repr__(self) -> str:
        """One line: how many orders of how many reviewers, on how many requests."""
        if not self:
            return "<Compositions: no orders>"
        first = self[0]
        reviewers = len({name for r in self for name in r.order})
        return (f"<Compositions {len(self)} orders of {reviewers} reviewers: "
                f"{first.n_forbidden} forbidden / {first.n_lawful} lawful requests>")

    def table_views(self) -> list[TableView]:
        """The compositions table, one row per order."""
        if not self:
            return [TableView("all-must-allow compositions: no orders", (), ())]
        first = self[0]
        return [composition_view(self, f"all-must-allow compositions ({len(self)} orders, "
                                       f"{first.n_forbidden} forbidden / {first.n_lawful} "
                                       "lawful)")]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per order (:meth:`CompositionResult.to_dict`)."""
        rows = [r.to_dict() for r in self]
        columns = list(rows[0]) if rows else ["order", "size"]
        return columns, rows


def composition_view(results: Sequence[CompositionResult], title: str) -> TableView:
    """The terminal's compositions table (same columns, same numbers) for ``results``."""
    first = results[0]
    return TableView(
        title,
        ["order", f"incorrect approvals /{first.n_forbidden}",
         f"lawful approvals /{first.n_lawful}", "reached unavailable", "abstentions",
         "consultations", "additional consultations", "input tokens", "output tokens"],
        [[r.name, str(r.incorrect_approvals), str(r.lawful_approvals), str(r.unavailable),
          str(r.abstentions), f"{r.consultations:,}", f"{r.additional_consultations:,}",
          f"{r.input_tokens:,}", f"{r.output_tokens:,}"] for r in results])


def replay_order(m: ReviewerMatrix, order: Sequence[int]) -> tuple[CompositionResult, np.ndarray]:
    """Replay one ordered selection (indices into ``m.names``); returns the result and the
    boolean accepted vector over ``m.case_ids``."""
    n = len(m.case_ids)
    reached = np.ones(n, dtype=bool)
    consult = 0
    unavail = abst = 0
    tin = np.zeros(n, dtype=np.int64)
    tout = np.zeros(n, dtype=np.int64)
    treason = 0
    for i in order:
        consult += int(reached.sum())
        unavail += int((reached & m.unavailable[i]).sum())
        abst += int((reached & m.abstention[i]).sum())
        tin += np.where(reached, m.input_tokens[i], 0)
        tout += np.where(reached, m.output_tokens[i], 0)
        treason += int(m.reasoning_tokens[i][reached].sum())
        reached = reached & m.allow[i]
    accepted = reached
    f = m.forbidden
    lawful_ok = int((accepted & ~f).sum())
    result = CompositionResult(
        order=tuple(m.names[i] for i in order),
        incorrect_approvals=int((accepted & f).sum()), lawful_approvals=lawful_ok,
        lawful_nonapprovals=m.n_lawful - lawful_ok, unavailable=unavail, abstentions=abst,
        consultations=consult, additional_consultations=consult - n,
        input_tokens=int(tin.sum()), output_tokens=int(tout.sum()), reasoning_tokens=treason,
        input_tokens_forbidden=int(tin[f].sum()), input_tokens_lawful=int(tin[~f].sum()),
        output_tokens_forbidden=int(tout[f].sum()), output_tokens_lawful=int(tout[~f].sum()),
        n_forbidden=m.n_forbidden, n_lawful=m.n_lawful)
    return result, accepted


def ordered_selections(k: int) -> list[tuple[int, ...]]:
    """Every ordered selection of 1..k of ``k`` reviewers (15 for three), singles first."""
    return [p for size in range(1, k + 1) for p in itertools.permutations(range(k), size)]


def compose_all(runs: Mapping[str, Sequence[CaseRecord]]) -> tuple[ReviewerMatrix,
                                                                    Compositions]:
    """Replay every ordered selection of the given reviewer runs."""
    m = build_matrix(runs)
    return m, Compositions(replay_order(m, order)[0]
                           for order in ordered_selections(len(m.names)))


def route_order(m: ReviewerMatrix, order: Sequence[int]) -> list[dict[str, Any]]:
    """Per-request routing of one ordered selection: who was consulted and who stopped it.

    One row per case (in ``m.case_ids`` order) with the reference label, the consulted
    reviewers, ``stopped_by`` (the first member without a usable ALLOW; '' when approved),
    ``stop_reason`` ('BLOCK', 'abstention' or 'unavailable') and ``approved``. For a lawful
    request, ``stopped_by`` is the reviewer that vetoed it. The rows stopped as unavailable
    are the unavailable responses :func:`replay_order` counts as reached.
    """
    rows: list[dict[str, Any]] = []
    name = " -> ".join(m.names[i] for i in order)
    for j, cid in enumerate(m.case_ids):
        consulted: list[str] = []
        stopped, reason = "", ""
        for i in order:
            consulted.append(m.names[i])
            if not m.allow[i, j]:
                stopped = m.names[i]
                reason = ("unavailable" if m.unavailable[i, j] else
                          "abstention" if m.abstention[i, j] else "BLOCK")
                break
        rows.append({"order": name, "case_id": cid,
                     "label": "forbidden" if m.forbidden[j] else "lawful",
                     "consulted": consulted, "stopped_by": stopped, "stop_reason": reason,
                     "approved": not stopped})
    return rows
