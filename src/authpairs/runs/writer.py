"""Batched storing of finished cases: one SQLite transaction per batch instead of one per case.

A run's workers hand each finished case (its record and attempts, or only the attempts of a case
whose infrastructure retries ran out) to the run's :class:`RecordWriter`, which stores the buffered
cases together when the buffer holds ``batch_size`` of them, when the oldest has waited
``max_delay_s``, and when the run ends (even by an error or an interrupt). A case is *recorded* once
its batch has committed; a process killed before that leaves the case unrecorded and still claimed
by a dead process, so the next run of the same command reviews it again (see
``docs/reliability.md``): nothing already recorded is ever lost or stored twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from authpairs.runs.records import AttemptRecord, CaseRecord
from authpairs.runs.store import RecordStore

#: A finished case waits at most this long before it is stored.
DEFAULT_MAX_DELAY_S = 0.2


class RecordWriter:
    """Buffers finished cases and stores them in batches (see the module docstring).

    ``on_stored(case_id, stored)`` is called for every case with a record once its batch has
    committed; ``stored`` is False when another process had recorded the case first.
    """

    def __init__(self, store: RecordStore, on_stored: Callable[[str, bool], None], *,
                 batch_size: int, max_delay_s: float = DEFAULT_MAX_DELAY_S) -> None:
        self.store = store
        self.on_stored = on_stored
        self.batch_size = max(1, batch_size)
        self.max_delay_s = max_delay_s
        self._buffer: list[tuple[CaseRecord | None, list[AttemptRecord]]] = []
        self._oldest = 0.0

    def add(self, record: CaseRecord | None, attempts: list[AttemptRecord]) -> None:
        """Buffer one finished case (``record`` None: its attempts only, the case stays
        unrecorded and its claim is freed); stores the batch when it is full."""
        if not self._buffer:
            self._oldest = time.monotonic()
        self._buffer.append((record, attempts))
        if len(self._buffer) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Store every buffered case now, in one transaction."""
        items, self._buffer = self._buffer, []
        for (record, _), stored in zip(items, self.store.add_cases(items), strict=True):
            if record is not None:
                self.on_stored(record.case_id, stored)

    async def flush_when_due(self) -> None:
        """Run until cancelled: flush the buffer whenever its oldest case is ``max_delay_s``
        old (so a partly filled batch never waits for the run to end)."""
        while True:
            wait = self.max_delay_s
            if self._buffer:
                wait = self._oldest + self.max_delay_s - time.monotonic()
                if wait <= 0:
                    self.flush()
                    continue
            await asyncio.sleep(wait)
