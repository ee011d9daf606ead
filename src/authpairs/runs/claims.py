"""The cases one process of a run reviews: claimed a block at a time, handed out one by one.

Several processes may work on the same run (``docs/reliability.md``, Concurrency). Before a case
is reviewed it is *claimed* in the records file, so no other live process reviews it too.
:func:`claimed_cases` is the iterator the run's workers share: it claims the next block of pending
cases in one transaction whenever the cases it holds are handed out, and tells ``on_skipped``
about each case of a block that another process recorded or holds meanwhile. How many cases a
claim covers adapts to the run's pace (:class:`ClaimBlocks`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from authpairs.cases.models import Case
from authpairs.runs.store import RecordStore

#: A claim covers about this many seconds of work: after a block was handed out faster, the next
#: claim takes twice as many cases (up to the largest); after one that lasted over twice as long,
#: half as many (down to the smallest, the concurrency). Fast runs take few claim transactions;
#: slow runs (several processes sharing a slow model) still share the work a few cases at a time.
CLAIM_SPAN_S = 0.25


@dataclass
class ClaimBlocks:
    """How many cases the next claim covers (see :data:`CLAIM_SPAN_S`)."""

    smallest: int
    largest: int
    size: int = 0
    last: float | None = None

    def next_size(self, now: float) -> int:
        """The size of the claim made at ``now`` (monotonic seconds)."""
        if self.last is None:
            self.size = self.smallest
        elif now - self.last < CLAIM_SPAN_S:
            self.size = min(self.size * 2, self.largest)
        elif now - self.last > 2 * CLAIM_SPAN_S:
            self.size = max(self.size // 2, self.smallest)
        self.last = now
        return self.size


def claimed_cases(store: RecordStore, run_id: str, pending: Iterator[Case], blocks: ClaimBlocks,
                  lease_s: float, on_skipped: Callable[[str, bool], None]) -> Iterator[Case]:
    """The cases of ``pending`` this process holds a claim on in ``run_id`` (see the module
    docstring); ``on_skipped(case_id, recorded)`` is told about each case another process
    recorded (``recorded`` True) or holds. Claims last ``lease_s`` seconds."""
    while block := list(itertools.islice(pending, blocks.next_size(time.monotonic()))):
        held = set(store.claim_many(run_id, [c.case_id for c in block], lease_s))
        if len(held) < len(block):
            recorded = store.done_case_ids(run_id)
            for case in block:
                if case.case_id not in held:
                    on_skipped(case.case_id, case.case_id in recorded)
        yield from (case for case in block if case.case_id in held)
