"""Batched storing of finished cases: one SQLite transaction per batch instead of one per case.

A run's workers hand each finished case (its review, or its record and attempts) to a
:class:`RecordWriter`, which stores the records in the run's own process; a run of 500 or more
cases uses :class:`~authpairs.runs.record_process.RecordProcess` instead, the same interface with
the records built and stored by a second process.
The writer stores the buffered cases together when the buffer holds ``batch_size`` of them, when
the oldest has waited ``max_delay_s``, and when the run ends (even by an error or an interrupt).
A case is *recorded* once its batch has committed; a process killed before that leaves the case
unrecorded and still claimed by a dead process, so the next run of the same command reviews it
again (see ``docs/reliability.md``): nothing already recorded is ever lost or stored twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from authpairs.backends.base import ChatRequest
from authpairs.runs.records import AttemptRecord, CaseRecord
from authpairs.runs.reviewed import Review
from authpairs.runs.store import RecordStore

#: Turns the review of the case at an index into its records (see
#: :func:`~authpairs.runs.reviewed.build_records`).
RecordBuilder = Callable[[int, Review], tuple[CaseRecord, list[AttemptRecord]]]

Item = TypeVar("Item")

#: A finished case waits at most this long before it is stored.
DEFAULT_MAX_DELAY_S = 0.2


class Batches(Generic[Item]):
    """The batching policy both record writers share: buffered items are handed to
    :meth:`flush` when ``batch_size`` of them wait or the oldest has waited ``max_delay_s``."""

    #: How often :meth:`flush_when_due` wakes up at the least (None: every ``max_delay_s``).
    poll_s: float | None = None

    def __init__(self, batch_size: int, max_delay_s: float) -> None:
        self.batch_size = max(1, batch_size)
        self.max_delay_s = max_delay_s
        self._buffer: list[Item] = []
        self._oldest = 0.0

    def _buffered(self, item: Item) -> None:
        """Buffer one item; flushes when the batch is full."""
        if not self._buffer:
            self._oldest = time.monotonic()
        self._buffer.append(item)
        if len(self._buffer) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Hand every buffered item on now, as one batch."""
        raise NotImplementedError

    def _tick(self) -> None:
        """Called each time :meth:`flush_when_due` wakes up."""

    async def flush_when_due(self) -> None:
        """Run until cancelled: flush the buffer whenever its oldest item is ``max_delay_s``
        old (so a partly filled batch never waits for the run to end)."""
        while True:
            self._tick()
            wait = self.max_delay_s
            if self._buffer:
                wait = self._oldest + self.max_delay_s - time.monotonic()
                if wait <= 0:
                    self.flush()
                    continue
            await asyncio.sleep(wait if self.poll_s is None else min(wait, self.poll_s))


class RecordWriter(Batches[tuple[CaseRecord, list[AttemptRecord]]]):
    """Buffers finished cases and stores them in batches (see the module docstring).

    ``on_stored(case_id, stored)`` is called for every case once its batch has committed;
    ``stored`` is False when another process had recorded the case first. ``build`` turns a
    review into records for :meth:`add_review`.
    """

    def __init__(self, store: RecordStore, on_stored: Callable[[str, bool], None], *,
                 batch_size: int = 16, max_delay_s: float = DEFAULT_MAX_DELAY_S,
                 build: RecordBuilder | None = None) -> None:
        super().__init__(batch_size, max_delay_s)
        self.store = store
        self.on_stored = on_stored
        self.build = build

    def add(self, record: CaseRecord, attempts: list[AttemptRecord]) -> None:
        """Buffer one finished case; stores the batch when it is full."""
        self._buffered((record, attempts))

    def rendered(self, index: int) -> ChatRequest | None:
        """A request rendered ahead elsewhere: never (the run renders every case itself)."""
        return None

    def add_review(self, index: int, review: Review) -> None:
        """Buffer the records of one finished review (built by ``build``)."""
        assert self.build is not None, "add_review needs a RecordWriter made with build="
        self.add(*self.build(index, review))

    def flush(self) -> None:
        """Store every buffered case now, in one transaction."""
        items, self._buffer = self._buffer, []
        for (record, _), stored in zip(items, self.store.add_cases(items), strict=True):
            self.on_stored(record.case_id, stored)

    def finish(self) -> None:
        """Store what is still buffered (the run is over)."""
        self.flush()
