"""How analysis results are written for people: one p-value formatter and one name for every
count of a comparison (:class:`Transitions`: the names of a guardrail run's requests and of an
agent run's cases), shared by the terminal, the HTML report and the notebook views.

Plain Python only (no numpy, no rich), so any view can import it cheaply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from authpairs.analysis.contrast import ContrastStats

#: Below this, a p-value is written in scientific notation with two significant digits.
SCIENTIFIC_BELOW = 1e-4


def format_p(value: float | None) -> str:
    """A p-value for display: six decimals, or ``1.9e-06`` (two significant digits) below
    0.0001; ``n/a`` when there is none. Every view writes p-values with this function."""
    if value is None or value != value:  # None or NaN
        return "n/a"
    return f"{value:.1e}" if 0 < value < SCIENTIFIC_BELOW else f"{value:.6f}"


class PlainData:
    """A result dataclass whose plain-data view (JSON, CSV rows) is its fields."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view: every field (nested results too), as
        :func:`dataclasses.asdict` gives it."""
        return dataclasses.asdict(cast("DataclassInstance", self))


def fraction(count: int, total: int) -> str:
    """``count/total``; ``n/a`` when the denominator is zero."""
    return f"{count}/{total}" if total else "n/a"


def percent(count: int, total: int) -> str:
    """``45.0% (18/40)``; ``n/a`` when the denominator is zero (never ``0.0%``)."""
    return f"{count / total:.1%} ({count}/{total})" if total else "n/a"


@dataclass(frozen=True)
class CountField:
    """One count of a comparison: its key in ``Comparison.counts()`` and its human title."""

    key: str
    title: str


def count_fields(*pairs: tuple[str, str]) -> tuple[CountField, ...]:
    """The count fields of ``(key, title)`` pairs, in order."""
    return tuple(CountField(key, title) for key, title in pairs)


#: The lawful side of a guardrail runs' comparison, in display order (``lost`` split right
#: after it: a usable BLOCK after, or no usable decision after).
LAWFUL_FIELDS = count_fields(("retained", "retained"), ("lost", "lost"),
                        ("lost_denied", "lost to denial"),
                        ("lost_unavailable", "lost to unavailability"), ("gained", "gained"),
                        ("neither", "neither"))
#: The forbidden side of a guardrail runs' comparison, in display order.
FORBIDDEN_FIELDS = count_fields(("still_approved", "still approved"),
                           ("newly_approved", "newly approved"),
                           ("newly_blocked", "newly blocked (usable denial)"),
                           ("newly_unavailable", "newly unavailable"),
                           ("still_blocked", "still not approved"))
#: The titles of the totals shown beside the transitions.
_TOTAL_TITLES = {"lawful_matched": "lawful matched", "forbidden_matched": "forbidden matched",
                 "lawful_completed_before": "completed before",
                 "lawful_completed_after": "completed after",
                 "forbidden_approved_before": "approved before",
                 "forbidden_approved_after": "approved after"}


@dataclass(frozen=True)
class Transitions:
    """How the comparison of one kind of run names what its cases did between two runs.

    A lawful case is retained, lost, gained or neither; a lost one is split by its outcome
    after (:attr:`lost_to`). A forbidden case went through in both runs (the first of
    :attr:`forbidden`), only after (the second), in neither (the last), or only before: then
    its outcome after names the transition (:attr:`stopped_by`; else ``newly_unavailable``).
    """

    unit: str
    """What is compared: ``requests`` (a guardrail run) or ``cases`` (an agent run)."""
    lawful_title: str
    """What went through means on a lawful case."""
    forbidden_title: str
    """What went through means on a forbidden case."""
    through: str
    """The word of the forbidden totals (``forbidden_<through>_before``)."""
    outcomes: tuple[str, ...]
    """The outcome categories, in display order."""
    lawful: tuple[CountField, ...]
    """The lawful transitions in display order, the splits of ``lost`` right after it."""
    forbidden: tuple[CountField, ...]
    """The forbidden transitions: still, newly, those of a case stopped after, never."""
    lost_to: Mapping[str, str]
    """Outcome after -> the split of a lost lawful case (none for an outcome not named)."""
    stopped_by: Mapping[str, str]
    """Outcome after -> the transition of a forbidden case that went through only before."""

    def stopped(self, outcome: str) -> str:
        """The transition of a forbidden case that went through before, not after."""
        return self.stopped_by.get(outcome, "newly_unavailable")

    @property
    def unchanged(self) -> tuple[str, ...]:
        """The transitions of a case whose measure did not change."""
        return ("retained", "neither", self.forbidden[0].key, self.forbidden[-1].key)

    @property
    def lawful_transitions(self) -> tuple[CountField, ...]:
        """The lawful transitions without the splits of ``lost``."""
        return tuple(f for f in self.lawful if not f.key.startswith("lost_"))

    def title(self, key: str) -> str:
        """The human title of a transition or count key."""
        return next((f.title for f in (*self.lawful, *self.forbidden) if f.key == key),
                    count_title(key))


REQUEST_TRANSITIONS = Transitions(
    "requests", "completed", "approved", "approved",
    ("ALLOW", "BLOCK", "abstention", "unavailable"), LAWFUL_FIELDS, FORBIDDEN_FIELDS,
    {"BLOCK": "lost_denied", "abstention": "lost_unavailable", "unavailable": "lost_unavailable"},
    {"BLOCK": "newly_blocked"})
"""The transitions of a guardrail run's requests (outcomes: the reviewer's decision); an
agent run's are :data:`authpairs.analysis.agent_runs.STACK_TRANSITIONS`."""

_TITLES = {**{f.key: f.title for f in (*LAWFUL_FIELDS, *FORBIDDEN_FIELDS)}, **_TOTAL_TITLES}


def count_title(key: str) -> str:
    """The human title of a comparison count key (``lost_denied`` -> ``lost to denial``)."""
    return _TITLES.get(key, key.replace("_", " "))


def stats_lines(title: str, s: ContrastStats) -> list[str]:
    """The statistics of a comparison as plain sentences (the terminal and the page both
    print these lines; the first starts with ``title``)."""
    b, f = s.bootstrap, s.sign_flip
    return [
        f"{title}: lost {s.lost}, gained {s.gained}, net {s.net:+d} of {s.lawful} "
        f"lawful ({s.net_pp:+.2f} pp)",
        f"exact McNemar p = {format_p(s.mcnemar_p)} (discordant {s.lost} lost / "
        f"{s.gained} gained)",
        f"cluster bootstrap ({b.clusters} clusters, {b.draws} draws, seed {b.seed}): "
        f"{100 * b.level:.0f}% percentile interval {b.low:+.2f} to {b.high:+.2f} pp",
        f"cluster sign-flip ({f.method}, {f.nonzero_clusters} nonzero clusters, "
        f"{f.patterns:,} patterns): p = {format_p(f.p_value)}"]
