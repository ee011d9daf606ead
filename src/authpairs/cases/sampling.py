"""A balanced, seeded slice of a split: ``authpairs run --sample N --sample-seed S``.

``--limit N`` takes the first N cases in file order; on the language dev split the first cases
are lawful, so a quick look at a model that approves everything shows perfect correctness.
:func:`sample_ids` instead picks N cases

* balanced by label: the counts of forbidden and lawful cases differ by at most one (unless a
  label has fewer cases than its half; then the other label fills the rest);
* spread over families: families are visited round-robin, so every family is present when N is
  at least the number of families (and each family has a case of a label with room left);
* deterministically from the seed: each case, label and family is ordered by the SHA-256 of
  the seed and its name, never by Python's ``hash`` or the file order, so the same seed gives
  the same ids in any process, and a resumed run reviews the same slice.

The chosen cases keep their file order. N at least the size of the split selects every case.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from authpairs.cases.models import Case

__all__ = ["SampleKey", "key_of", "label_quotas", "sample_cases", "sample_ids"]

FAMILY_ATTRIBUTE = "family"

_C = TypeVar("_C", bound=Case)


@dataclass(frozen=True)
class SampleKey:
    """What sampling reads of a case: its id, reference label and family ("" for none)."""

    case_id: str
    label: str
    family: str


def key_of(case: Case) -> SampleKey:
    """The :class:`SampleKey` of ``case``."""
    return SampleKey(case.case_id, case.reference.label.value,
                     case.attributes.get(FAMILY_ATTRIBUTE, ""))


def _rank(seed: int, kind: str, name: str) -> str:
    """A seeded sort key, the same in every process and Python version."""
    return hashlib.sha256(f"{seed}\x00{kind}\x00{name}".encode()).hexdigest()


def label_quotas(counts: dict[str, int], n: int, seed: int) -> dict[str, int]:
    """How many cases of each label a sample of ``n`` takes: as equal as the counts allow (a
    label short of its share gives the rest to the others); which label gets an odd case out
    is decided by the seed."""
    order = sorted(counts, key=lambda label: _rank(seed, "label", label))
    quotas = dict.fromkeys(order, 0)
    for _ in range(min(n, sum(counts.values()))):  # one case at a time, to the smallest quota
        open_labels = [label for label in order if quotas[label] < counts[label]]
        quotas[min(open_labels, key=quotas.__getitem__)] += 1
    return quotas


def sample_ids(keys: Iterable[SampleKey], n: int, seed: int = 0) -> list[str]:
    """The ids of a balanced sample of ``n`` of ``keys`` (see the module docstring), in the
    order of ``keys``; every id when ``n`` is at least their number."""
    if n < 1:
        raise ValueError(f"a sample needs at least one case, not {n}")
    items = list(keys)
    if n >= len(items):
        return [key.case_id for key in items]
    counts = Counter(key.label for key in items)
    families: dict[str, dict[str, list[SampleKey]]] = {}
    for key in items:
        families.setdefault(key.family, {}).setdefault(key.label, []).append(key)
    for by_label in families.values():
        for members in by_label.values():
            members.sort(key=lambda key: _rank(seed, "case", key.case_id), reverse=True)
    remaining = label_quotas(counts, n, seed)
    label_order = sorted(counts, key=lambda label: _rank(seed, "label", label))
    family_order = sorted(families, key=lambda family: _rank(seed, "family", family))
    chosen: set[str] = set()
    while any(remaining.values()):
        for family in family_order:
            open_labels = [label for label in label_order
                           if remaining[label] > 0 and families[family].get(label)]
            if not open_labels:
                continue
            label = max(open_labels, key=lambda name: remaining[name])  # first of the largest
            chosen.add(families[family][label].pop().case_id)
            remaining[label] -= 1
    return [key.case_id for key in items if key.case_id in chosen]


def sample_cases(cases: Sequence[_C], n: int, seed: int = 0) -> list[_C]:
    """The cases of a balanced sample of ``n`` (:func:`sample_ids`), in their given order."""
    chosen = set(sample_ids((key_of(case) for case in cases), n, seed))
    return [case for case in cases if case.case_id in chosen]
