"""Is a run complete? Recorded case ids against the ids the run header expects.

Every reader of a run (score, compare, report, export, gate) states ``n recorded of N expected``
and lists the missing ids, so an interrupted run is never mistaken for a finished one. An agent
run records a case only when one of its calls reached the guardrail, so there an expected case
without a record is one the agent declined, not a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from authpairs.runs.records import RunInfo

#: At most this many missing ids are spelled out in one-line messages.
SHOWN_IDS = 20


@dataclass(frozen=True)
class Completeness:
    """Recorded versus expected cases of one run."""

    run_id: str
    expected: int
    recorded: int
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    declined: int = 0
    """An agent run's expected cases without a record: the agent declined them."""

    @property
    def complete(self) -> bool:
        """True when every expected case has a record."""
        return not self.missing

    def describe(self) -> str:
        """``run R: n recorded of N expected`` plus the missing ids (at most 20 shown)."""
        text = f"run {self.run_id}: {self.recorded} recorded of {self.expected} expected"
        if self.missing:
            shown = ", ".join(self.missing[:SHOWN_IDS])
            more = f" and {len(self.missing) - SHOWN_IDS} more" if len(
                self.missing) > SHOWN_IDS else ""
            text += f"; INCOMPLETE, {len(self.missing)} missing: {shown}{more}"
        if self.declined:
            text += (f"; the agent declined the other {self.declined} (an agent run records a "
                     "case when a call reached the guardrail)")
        if self.unexpected:
            text += f"; {len(self.unexpected)} records not in the expected set"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain data for scores.json and exports."""
        return {"run_id": self.run_id, "expected": self.expected, "recorded": self.recorded,
                "complete": self.complete, "missing": list(self.missing),
                "unexpected": list(self.unexpected), "declined": self.declined}


def completeness(info: RunInfo, recorded_ids: Iterable[str]) -> Completeness:
    """Compare the recorded case ids with the run header's expected ids (each counted once).

    Both lists are compared sorted, side by side, rather than as sets: a run of 100,000 cases
    needs lists of references, not hash tables, while its records are read."""
    expected = [case_id for case_id, _ in groupby(sorted(info.expected_case_ids))]
    recorded = [case_id for case_id, _ in groupby(sorted(recorded_ids))]
    missing: list[str] = []
    unexpected: list[str] = []
    at = 0  # the first recorded id not yet compared
    for case_id in expected:
        while at < len(recorded) and recorded[at] < case_id:
            unexpected.append(recorded[at])
            at += 1
        if at < len(recorded) and recorded[at] == case_id:
            at += 1
        else:
            missing.append(case_id)
    unexpected += recorded[at:]
    declined = len(missing) if info.is_agent_run else 0
    return Completeness(run_id=info.run_id, expected=len(expected),
                        recorded=len(expected) - len(missing),
                        missing=() if info.is_agent_run else tuple(missing),
                        unexpected=tuple(unexpected), declined=declined)
