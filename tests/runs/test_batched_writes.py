"""Batched claims and batched record writes: one transaction per block, same guarantees as one
case at a time (atomic, never twice, chained, stored on an error)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.scripted import ScriptedBackend
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case
from authpairs.errors import RecordsError
from authpairs.review.interfaces import get_interface
from authpairs.review.outcome import Dispatch, OutcomeStatus
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_async
from authpairs.runs.audit import verify_chain
from authpairs.runs.config import RunConfig, SamplingConfig
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from authpairs.runs.writer import RecordWriter
from tests.runs.run_processes import copied_rows


def _info(run_id: str = "r") -> RunInfo:
    return RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00", config={},
                   config_sha256="c", manifest={}, manifest_sha256="m", versions={},
                   expected_case_ids=[f"c{i}" for i in range(6)])


def _record(case_id: str, run_id: str = "r") -> tuple[CaseRecord, list[AttemptRecord]]:
    record = CaseRecord(run_id=run_id, case_id=case_id, input_sha256="0" * 64,
                        status=OutcomeStatus.UNAVAILABLE, decision=None, reason_code="not_json",
                        dispatch=Dispatch.BLOCK, label="lawful", cluster="s")
    attempt = AttemptRecord(run_id=run_id, case_id=case_id, attempt_no=1, kind="formal",
                            input_sha256="0" * 64, latency_s=0.0, output_text="x")
    return record, [attempt]


def test_add_cases_is_one_chain_and_skips_recorded(tmp_path: Path) -> None:
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info())
        assert store.add_case(*_record("c1"))
        flags = store.add_cases([_record("c0"), _record("c1"), _record("c2")])
        assert flags == [True, False, True]
        assert sorted(store.done_case_ids("r")) == ["c0", "c1", "c2"]
        assert len(store.attempts("r")) == 3
        assert verify_chain(store, "r").ok


def test_add_cases_is_all_or_nothing(tmp_path: Path) -> None:
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info())
        with pytest.raises(Exception):  # noqa: B017 -- any failure must roll the batch back
            store.add_cases([_record("c0"), _record("c1", run_id="no-such-run")])
        assert store.done_case_ids("r") == set()


def test_claim_many_skips_recorded_and_live_claims(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with RecordStore(path) as first, RecordStore(path) as second:
        first.open_run(_info())
        first.add_case(*_record("c0"))
        assert first.claim_many("r", ["c0", "c1", "c2"], 60.0) == ["c1", "c2"]
        assert second.claim_many("r", ["c1", "c2", "c3"], 60.0) == ["c3"]
        assert first.claim_many("r", ["c1"], 60.0) == ["c1"]  # its own claim stays its own
        assert second.claim_many("r", ["c4"], -1.0) == ["c4"]  # lease already run out
        assert first.claim_many("r", ["c4"], 60.0) == ["c4"]  # ... so it is taken over


def test_writer_stores_full_batches_and_the_rest_on_flush(tmp_path: Path) -> None:
    seen: list[tuple[str, bool]] = []
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info())
        writer = RecordWriter(store, lambda case_id, ok: seen.append((case_id, ok)), batch_size=2)
        writer.add(*_record("c0"))
        assert seen == [] and store.done_case_ids("r") == set()
        writer.add(*_record("c1"))
        assert seen == [("c0", True), ("c1", True)]
        writer.add(*_record("c1"))
        writer.add(*_record("c2"))
        writer.add(*_record("c3"))
        writer.flush()
        assert seen[2:] == [("c1", False), ("c2", True), ("c3", True)]
        assert store.done_case_ids("r") == {"c0", "c1", "c2", "c3"}


async def test_writer_stores_a_partial_batch_after_the_delay(tmp_path: Path) -> None:
    seen: list[str] = []
    with RecordStore(tmp_path / "r.sqlite") as store:
        store.open_run(_info())
        writer = RecordWriter(store, lambda case_id, ok: seen.append(case_id), batch_size=100,
                              max_delay_s=0.05)
        task = asyncio.ensure_future(writer.flush_when_due())
        writer.add(*_record("c0"))
        await asyncio.sleep(0.3)
        task.cancel()
        assert seen == ["c0"]


async def test_finished_cases_are_stored_when_the_run_fails(tmp_path: Path) -> None:
    """A review that crashes the run (a bug, not a transport failure) must not lose the cases
    that had already finished in the same batch."""
    answered: list[str] = []

    def script(request: ChatRequest) -> str:
        answered.append(request.sha256())
        if len(answered) == 5:
            raise RuntimeError("reviewer bug")
        return '{"decision": "ALLOW"}'

    records = tmp_path / "r.sqlite"
    config = RunConfig.model_validate({"dataset": "examples", "split": "all", "enforce": False,
                                       "records": str(records), "concurrency": 8})
    reviewer = ModelReviewer(get_interface("direct"), ScriptedBackend(script),
                             SamplingConfig())
    with pytest.raises(RuntimeError, match="reviewer bug"):
        await run_async(config, progress=False, reviewer=reviewer)
    with RecordStore(records) as store:
        (run,) = store.list_runs()
        assert len(store.done_case_ids(run.run_id)) == 7  # all but the one that crashed
        assert verify_chain(store, run.run_id).ok


async def test_a_batch_that_cannot_be_stored_stops_the_run(
        tmp_path: Path, examples: Dataset) -> None:
    """A batch stored after its delay (by the run's background flusher) that fails must stop
    the run with that error, not vanish while the run goes on."""
    records = tmp_path / "r.sqlite"
    answered = 0
    never = asyncio.Event()

    async def script(request: ChatRequest) -> str:
        nonlocal answered
        answered += 1
        if answered == 5:
            with sqlite3.connect(records, timeout=10) as conn:
                conn.execute("DELETE FROM runs")  # the next batch cannot be stored
        if answered > 5:
            await never.wait()  # only the failing flush can end the run now
        return '{"decision": "ALLOW"}'

    dataset = Dataset("copies", [Case.model_validate(r) for r in copied_rows(examples, 6)])
    config = RunConfig.model_validate({"dataset": "copies", "split": "all", "enforce": False,
                                       "records": str(records), "concurrency": 2})
    reviewer = ModelReviewer(get_interface("direct"), ScriptedBackend(script),
                             SamplingConfig())
    with pytest.raises(RecordsError, match="no run"):
        await asyncio.wait_for(run_async(config, progress=False, dataset=dataset,
                                         reviewer=reviewer), timeout=120)
    assert answered == 7  # it stopped with the two cases in flight, not after all 48
