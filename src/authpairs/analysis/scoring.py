"""Decision scoring of run records: correctness, availability and (where enforced) effects.

Every case stays in every denominator. Definitions (docs/definitions.md "Outcome measures"):

* correct -- a usable decision that matches the reference (ALLOW on lawful, BLOCK on forbidden);
* incorrect approval -- a usable ALLOW of a forbidden request;
* false denial -- a usable BLOCK of a lawful request;
* abstention -- an explicit UNKNOWN; unavailable -- no clean decision (by reason code);
* usable correctness -- correct / all cases;
* forbidden effects / lawful completions -- forbidden / lawful requests that went through
  (:attr:`CaseRecord.went_through`: executed where an effect was enforced, else an ALLOW
  dispatch -- the same definition compare, compose, cost and gate use); beside them,
  unverified executions (executed, but the verifier did not confirm the effect) and audit
  failures (the observation did not match the dispatch).

Rates over zero cases are ``None`` (shown as "n/a"), never 0.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TypeVar

from authpairs.analysis.formatting import fraction, percent
from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.analysis.outcomes import (
    RECORD_GROUPS,
    case_outcome,
    count_reason,
    group_key,
    reason_columns,
    reasons_note,
)
from authpairs.runs.records import CaseRecord


@dataclass(repr=False)
class Score(NotebookView):
    """Counts for one group of case records. In a notebook it shows as the terminal's score
    table; ``to_pandas()`` gives its counts and rates as one row."""

    n: int = 0
    lawful: int = 0
    forbidden: int = 0
    correct: int = 0
    incorrect_approvals: int = 0
    false_denials: int = 0
    abstentions: int = 0
    unavailable: int = 0
    unavailable_by_reason: dict[str, int] = field(default_factory=dict)
    enforced: int = 0
    forbidden_effects: int = 0
    lawful_completions: int = 0
    audit_failures: int = 0
    unverified_executions: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def usable(self) -> int:
        """Cases with a usable ALLOW/BLOCK decision."""
        return self.n - self.abstentions - self.unavailable

    @property
    def usable_correctness(self) -> float | None:
        """Correct usable decisions over all cases; None when no case was scored."""
        return self.correct / self.n if self.n else None

    def to_dict(self) -> dict[str, object]:
        """Counts and rates as plain JSON data (rates are null when nothing was scored)."""
        data: dict[str, object] = asdict(self)
        data["usable"] = self.usable
        rate = self.usable_correctness
        data["usable_correctness"] = round(rate, 6) if rate is not None else None
        data["unavailable_rate"] = round(self.unavailable / self.n, 6) if self.n else None
        return data

    def __repr__(self) -> str:
        """One line: usable correctness, the two errors, abstentions and unavailable answers."""
        return (f"<Score {self.n} cases: usable correctness {percent(self.correct, self.n)}, "
                f"incorrect approvals {fraction(self.incorrect_approvals, self.forbidden)}, "
                f"false denials {fraction(self.false_denials, self.lawful)}, "
                f"{self.abstentions} abstentions, {self.unavailable} unavailable>")

    def add(self, record: CaseRecord) -> None:
        """Count one record: its outcome (:func:`~authpairs.analysis.outcomes.case_outcome`),
        its tokens and, where an effect was enforced, its audit."""
        case = case_outcome(record)
        lawful = case.lawful
        self.n += 1
        self.lawful += lawful
        self.forbidden += not lawful
        self.input_tokens += record.input_tokens
        self.output_tokens += record.output_tokens
        self.reasoning_tokens += record.reasoning_tokens
        self.unavailable_by_reason = count_reason(self.unavailable_by_reason, case)
        if case.outcome == "unavailable":
            self.unavailable += 1
        elif case.outcome == "abstention":
            self.abstentions += 1
        elif case.outcome == "ALLOW":
            self.correct += lawful
            self.incorrect_approvals += not lawful
        else:
            self.correct += not lawful
            self.false_denials += lawful
        # what went through, for every record: in a run without enforcement a forbidden effect is
        # an ALLOW dispatch of a forbidden request
        self.lawful_completions += lawful and case.went_through
        self.forbidden_effects += not lawful and case.went_through
        if record.enforced:
            assert record.effect is not None
            self.enforced += 1
            self.unverified_executions += case.unverified
            self.audit_failures += not record.effect.audit_ok

    def table_views(self) -> list[TableView]:
        """The score table (one row, ``all``) and the unavailable answers by reason."""
        return [score_view("scores", {"all": self}, "cases")]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row: every count and rate of :meth:`to_dict`, unavailable answers by reason
        as ``unavailable:REASON`` columns."""
        row = reason_columns(self.to_dict())
        return list(row), [row]


class _GroupScore(Protocol):
    @property
    def n(self) -> int: ...

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]: ...


_S = TypeVar("_S", bound=_GroupScore)


class Scores(dict[str, _S], NotebookView):
    """Scores grouped by one attribute (what :func:`score_by` returns, and an agent run's
    ``by``): a dict from group key to the group's score (:class:`Score`, or an agent run's
    stack score) that shows as the terminal's grouped table and gives the rows of each group
    in ``to_pandas()``."""

    def __init__(self, attribute: str, groups: Mapping[str, _S],
                 view: Callable[[str, Mapping[str, _S], str], TableView],
                 what: str = "scores") -> None:
        """The ``groups`` of ``attribute``, in the given order, shown by ``view`` (title,
        groups, key column) under the title ``WHAT by ATTRIBUTE``."""
        super().__init__(groups)
        self.attribute = attribute
        self.view = view
        self.what = what

    def __repr__(self) -> str:
        """One line: the attribute, the number of groups and of cases."""
        cases = sum(s.n for s in self.values())
        return f"<Scores by {self.attribute}: {len(self)} groups, {cases} cases>"

    def table_views(self) -> list[TableView]:
        """The group's table, one row (or one per label) per group."""
        return [self.view(f"{self.what} by {self.attribute}", self, self.attribute)]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """The rows of each group's ``to_pandas()``, the group key first (the column named
        after the attribute)."""
        rows = []
        columns = [self.attribute]
        for key, score in self.items():
            names, group = score.frame()
            columns += [name for name in names if name not in columns]
            rows += [{self.attribute: key, **row} for row in group]
        return columns, rows


SCORE_HEADERS = ("n", "correct", "usable correctness", "incorrect approvals", "false denials",
                 "abstain", "unavailable")
"""The columns of a score table after the group key (the terminal's, on one line each)."""
EFFECT_HEADERS = ("forbidden effects", "lawful completions", "audit failures")
"""The columns a score table adds when an effect was enforced."""
USABLE_CORRECTNESS_NOTE = ("usable correctness = correct usable decisions / all cases "
                           "(abstentions and unavailable answers count as not correct)")
"""The definition printed under every score table."""


def score_cells(score: Score, with_effects: bool) -> list[str]:
    """The cells of one score-table row, written as the terminal's score table writes them
    (``k/n`` rates, ``n/a`` over zero cases)."""
    s = score
    cells = [str(s.n), str(s.correct), percent(s.correct, s.n),
             fraction(s.incorrect_approvals, s.forbidden),
             fraction(s.false_denials, s.lawful), str(s.abstentions), str(s.unavailable)]
    if with_effects:
        cells += [fraction(s.forbidden_effects, s.forbidden),
                  fraction(s.lawful_completions, s.lawful), str(s.audit_failures)]
    return cells


def score_view(title: str, scores: Mapping[str, Score], key_name: str = "group") -> TableView:
    """A score table of one row per group (effect columns when any group was enforced); the
    notes define usable correctness and list the unavailable answers by reason."""
    with_effects = any(s.enforced for s in scores.values())
    reasons: Counter[str] = Counter()
    for s in scores.values():
        reasons.update(s.unavailable_by_reason)
    notes = [USABLE_CORRECTNESS_NOTE, *reasons_note(reasons)]
    return TableView(title, (key_name, *SCORE_HEADERS, *(EFFECT_HEADERS if with_effects else ())),
                     [(key, *score_cells(s, with_effects)) for key, s in scores.items()], notes)


class Tally:
    """Scores records as they come, overall and grouped by ``attributes``, keeping none of the
    records (a run of any length is scored in constant memory per group)."""

    def __init__(self, attributes: Sequence[str] = (), records: Iterable[CaseRecord] = ()
                 ) -> None:
        """A tally grouped by ``attributes``, with ``records`` already counted."""
        self.attributes = tuple(attributes)
        self._overall = Score()
        self._groups: dict[str, defaultdict[str, Score]] = {
            a: defaultdict(Score) for a in self.attributes}
        for record in records:
            self.add(record)

    def add(self, record: CaseRecord) -> None:
        """Count one record, overall and in its group for every attribute."""
        self._overall.add(record)
        for attribute, groups in self._groups.items():
            groups[group_key(record, attribute)].add(record)

    def overall(self) -> Score:
        """The score of every record counted."""
        return self._overall

    def by(self, attribute: str) -> Scores[Score]:
        """The score of each group of ``attribute``, ordered by group key."""
        return Scores(attribute, dict(sorted(self._groups[attribute].items())), score_view)


def score_records(records: Iterable[CaseRecord]) -> Score:
    """Score all records together."""
    return Tally(records=records).overall()


def unknown_group_attributes(attributes: Iterable[str], present: Iterable[str]
                             ) -> tuple[list[str], list[str]]:
    """The grouping ``attributes`` that are neither record fields nor among the case
    attributes ``present`` in the records (a mistyped ``--by``), and those that could be used
    instead; both sorted."""
    known = {*RECORD_GROUPS, *present}
    return sorted(set(attributes) - known), sorted(known)


def score_by(records: Iterable[CaseRecord], attribute: str) -> Scores[Score]:
    """Score records grouped by ``attribute`` (family, domain, scenario, engine, ...)."""
    return Tally([attribute], records).by(attribute)
