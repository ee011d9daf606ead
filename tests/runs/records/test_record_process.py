"""The records process: the same records as storing in the run's own process, and a clear error
(nothing recorded lost, nothing doubled on the re-run) when it fails or dies."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.scripted import ScriptedBackend
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case, PublicCase
from authpairs.errors import ConfigError, RecordsError
from authpairs.review.interfaces import DirectInterface, get_interface
from authpairs.review.outcome import Decision, ReviewOutcome
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs import record_process
from authpairs.runs.api import run_async
from authpairs.runs.audit import verify_chain
from authpairs.runs.config import RunConfig, SamplingConfig
from authpairs.runs.record_process import RecordProcess
from authpairs.runs.reviewed import Attempt, Review
from authpairs.runs.store import RecordStore
from tests.runs.test_kill_resume import _count, copied_rows

_ANSWERS = ('{"decision": "ALLOW"}', '{"decision": "BLOCK"}', "not json", '{"decision": "X"}')


def _copies(examples: Dataset, copies: int) -> Dataset:
    return Dataset("copies", [Case.model_validate(row) for row in copied_rows(examples, copies)])


def _reviewer(on_request: object = None) -> ModelReviewer:
    def script(request: ChatRequest) -> str:
        if callable(on_request):
            on_request()
        return _ANSWERS[int(request.sha256(), 16) % len(_ANSWERS)]

    return ModelReviewer(get_interface("direct"), ScriptedBackend(script), SamplingConfig())


def _config(records: Path) -> RunConfig:
    return RunConfig.model_validate({"dataset": "copies", "split": "all", "enforce": False,
                                     "records": str(records), "concurrency": 4, "run_id": "r"})


def _stored(records: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Case records and attempts, without the timings (which differ from run to run)."""
    with RecordStore(records, readonly=True) as store:
        assert verify_chain(store, "r").ok
        cases = [r.model_dump(exclude={"latency_s"}) for r in store.case_records("r")]
        attempts = sorted((a.model_dump(exclude={"latency_s"}) for a in store.attempts("r")),
                          key=lambda a: (str(a["case_id"]), int(str(a["attempt_no"]))))
    return cases, attempts


def _started(monkeypatch: pytest.MonkeyPatch) -> list[RecordProcess]:
    """The records processes the runs start from now on."""
    started: list[RecordProcess] = []
    original_start = RecordProcess.start

    def start(self: RecordProcess) -> None:
        original_start(self)
        started.append(self)

    monkeypatch.setattr(RecordProcess, "start", start)
    return started


@pytest.mark.parametrize(("value", "pending", "expected"), [
    ("auto", record_process.MIN_CASES - 1, False), ("auto", record_process.MIN_CASES, True),
    ("always", 1, True), ("always", 0, False), ("never", 10_000, False), (" Never ", 1, False)])
def test_when_a_run_uses_a_records_process(monkeypatch: pytest.MonkeyPatch, value: str,
                                           pending: int, expected: bool) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, value)
    monkeypatch.setattr(record_process, "usable_cpus", lambda: 2)
    assert record_process.wanted(pending) is expected


def test_on_a_single_cpu_the_run_stores_its_records_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, "auto")
    monkeypatch.setattr(record_process, "usable_cpus", lambda: 1)
    assert not record_process.wanted(10_000)
    monkeypatch.setenv(record_process.ENVIRONMENT, "always")
    assert record_process.wanted(10_000)


def test_a_bad_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, "sometimes")
    with pytest.raises(ConfigError, match="AUTHPAIRS_RECORD_PROCESS='sometimes'"):
        record_process.wanted(1)


async def test_same_records_as_storing_in_the_run_process(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = _copies(examples, 20)
    results = []
    for mode in ("never", "always"):
        monkeypatch.setenv(record_process.ENVIRONMENT, mode)
        records = tmp_path / f"{mode}.sqlite"
        state = await run_async(_config(records), progress=False, dataset=dataset,
                                reviewer=_reviewer())
        assert state.completed_now == len(dataset.cases) and state.missing == 0
        results.append(_stored(records))
    inline, separate = results
    assert len(inline[0]) == len(dataset.cases)
    assert {r["status"] for r in inline[0]} >= {"decision", "unavailable"}
    assert separate == inline


async def test_a_killed_records_process_stops_the_run_and_the_rerun_completes(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, "always")
    dataset = _copies(examples, 30)
    started = _started(monkeypatch)
    requests = 0
    records = tmp_path / "r.sqlite"

    def kill_the_records_process() -> None:
        nonlocal requests
        requests += 1
        if requests == 150:  # two batches were sent: let the records process store one
            deadline = time.monotonic() + 30
            while _count(records) < 64 and time.monotonic() < deadline:
                time.sleep(0.01)
            process = started[0]._process
            assert process is not None
            os.kill(process.pid, signal.SIGKILL)

    with pytest.raises(RecordsError, match=r"the records process stopped \(exit code -9\)"):
        await run_async(_config(records), progress=False, dataset=dataset,
                        reviewer=_reviewer(kill_the_records_process))
    with RecordStore(records, readonly=True) as store:
        before = len(store.done_case_ids("r"))
    assert 64 <= before < len(dataset.cases)
    state = await run_async(_config(records), progress=False, dataset=dataset,
                            reviewer=_reviewer())
    assert state.already_done == before
    assert state.completed_now == len(dataset.cases) - before and state.missing == 0
    cases, attempts = _stored(records)
    assert sorted(str(r["case_id"]) for r in cases) == sorted(c.case_id for c in dataset)
    assert len(attempts) == len(dataset.cases)  # one formal attempt each, none doubled


def test_a_records_process_that_cannot_store_says_why(tmp_path: Path,
                                                      examples: Dataset) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    writer = RecordProcess(blocker / "r.sqlite", "r", examples.cases, lambda *_: None)
    writer.start()
    request = ChatRequest(messages=[{"role": "user", "content": "x"}])

    writer.add_review(0, Review(request, ChatResponse(text="x"),
                                ReviewOutcome.decided(Decision.ALLOW), None, [Attempt(1, 0.1)]))
    with pytest.raises(RecordsError, match="cannot create the records folder") as raised:
        writer.finish()
    assert "1 finished cases were not stored" in str(raised.value)


async def test_without_an_interpreter_to_start_the_run_stores_its_records_itself(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, "always")
    monkeypatch.setattr(record_process.sys, "executable", str(tmp_path / "no-such-python"))
    dataset = _copies(examples, 3)
    state = await run_async(_config(tmp_path / "r.sqlite"), progress=False, dataset=dataset,
                            reviewer=_reviewer())
    assert state.completed_now == len(dataset.cases)
    cases, _ = _stored(tmp_path / "r.sqlite")
    assert {r["status"] for r in cases} >= {"decision", "unavailable"}


def test_a_dead_records_process_error_says_how_to_do_without(tmp_path: Path,
                                                             examples: Dataset) -> None:
    writer = RecordProcess(tmp_path / "r.sqlite", "r", examples.cases, lambda *_: None)
    writer.start()
    process = writer._process
    assert process is not None
    process.kill()
    process.wait()
    request = ChatRequest(messages=[{"role": "user", "content": "x"}])
    with pytest.raises(RecordsError, match="AUTHPAIRS_RECORD_PROCESS=never"):
        writer.add_review(0, Review(request, ChatResponse(text="x"),
                                    ReviewOutcome.decided(Decision.ALLOW), None,
                                    [Attempt(1, 0.1)]))
        writer.finish()


async def test_the_run_stops_with_the_records_process_own_words(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(record_process.ENVIRONMENT, "always")
    records = tmp_path / "r.sqlite"
    requests = 0

    def remove_the_run() -> None:  # whatever breaks the records file under the run
        nonlocal requests
        requests += 1
        if requests == 10:
            with sqlite3.connect(records, timeout=10) as conn:
                conn.execute("DELETE FROM runs")

    with pytest.raises(RecordsError, match=r"storing records: RecordStoreError: .*no run 'r'"):
        await run_async(_config(records), progress=False, dataset=_copies(examples, 20),
                        reviewer=_reviewer(remove_the_run))


def _slow_start_reviewer(seconds: float) -> ModelReviewer:
    """The scripted reviewer, its first answers ``seconds`` late (time for the records process
    to start and render ahead)."""
    calls = 0

    async def script(request: ChatRequest) -> str:
        nonlocal calls
        calls += 1
        if calls <= 4:
            await asyncio.sleep(seconds)
        return _ANSWERS[int(request.sha256(), 16) % len(_ANSWERS)]

    return ModelReviewer(get_interface("direct"), ScriptedBackend(script), SamplingConfig())


async def test_requests_rendered_ahead_are_recorded_as_the_run_would_render_them(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = _copies(examples, 20)
    started = _started(monkeypatch)
    results = []
    for mode in ("never", "always"):
        monkeypatch.setenv(record_process.ENVIRONMENT, mode)
        records = tmp_path / f"{mode}.sqlite"
        state = await run_async(_config(records), progress=False, dataset=dataset,
                                reviewer=_slow_start_reviewer(1.5))
        assert state.completed_now == len(dataset.cases) and state.missing == 0
        results.append(_stored(records))
    assert len(started) == 1
    # Most requests came from the records process (the first ones, while it started, not).
    assert len(dataset.cases) // 2 < started[0].rendered_ahead < len(dataset.cases)
    assert results[1] == results[0]  # the same input hashes, outputs and records


def test_the_records_process_renders_each_case_as_the_interface_does(
        tmp_path: Path, examples: Dataset) -> None:
    dataset = _copies(examples, 10)
    interface = get_interface("direct")
    writer = RecordProcess(tmp_path / "r.sqlite", "r", dataset.cases, lambda *_: None,
                           renderer=interface)
    writer.start()
    try:
        deadline = time.monotonic() + 60
        first = None
        while first is None and time.monotonic() < deadline:  # until it has started
            first = writer.rendered(0)
            time.sleep(0.01)
        assert first == interface.render(dataset.cases[0].public)
        for index in range(1, len(dataset.cases), 3):  # passing over cases is fine
            request = None
            while request is None and time.monotonic() < deadline:
                request = writer.rendered(index)
            assert request == interface.render(dataset.cases[index].public)
        assert writer.rendered_ahead == 1 + len(range(1, len(dataset.cases), 3))
    finally:
        writer.finish()


class _FailingInterface(DirectInterface):
    """Renders like the direct interface, except one case, which it cannot render."""

    def render(self, case: PublicCase) -> ChatRequest:
        if case.source_id.endswith("-7"):
            raise ValueError(f"cannot render {case.source_id}")
        return super().render(case)


def test_a_case_the_records_process_cannot_render_is_rendered_by_the_run(
        tmp_path: Path, examples: Dataset) -> None:
    dataset = _copies(examples, 10)
    interface = _FailingInterface()
    writer = RecordProcess(tmp_path / "r.sqlite", "r", dataset.cases, lambda *_: None,
                           renderer=interface)
    writer.start()
    try:
        deadline = time.monotonic() + 60
        while writer.rendered(0) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        failing = next(i for i, c in enumerate(dataset.cases) if c.public.source_id.endswith("-7"))
        got = [writer.rendered(index) for index in range(1, len(dataset.cases))]
    finally:
        writer.finish()
    # Up to the chunk that failed, the records process rendered; from there on the run does
    # (and meets the same error when it renders that case itself).
    chunk_start = failing - failing % record_process.RENDER_CHUNK
    assert all(request is not None for request in got[:chunk_start - 1])
    assert all(request is None for request in got[chunk_start - 1:])


class _SlowInterface(DirectInterface):
    """Renders like the direct interface, slowly (a records process that falls behind)."""

    def render(self, case: PublicCase) -> ChatRequest:
        time.sleep(0.02)
        return super().render(case)


def test_rendering_ahead_stops_when_it_cannot_keep_up_with_the_run(
        tmp_path: Path, examples: Dataset) -> None:
    dataset = _copies(examples, 40)
    writer = RecordProcess(tmp_path / "r.sqlite", "r", dataset.cases, lambda *_: None,
                           renderer=_SlowInterface())
    writer.start()
    try:
        deadline = time.monotonic() + 60
        while writer.rendered(0) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.rendered_ahead == 1
        # The run goes on faster than the records process renders: the next chunk is not
        # ready for the next BEHIND_LIMIT cases, and rendering ahead stops.
        start = record_process.RENDER_CHUNK
        assert all(writer.rendered(index) is None
                   for index in range(start, start + record_process.BEHIND_LIMIT))
        assert writer._renders is None
        assert writer.rendered(start + record_process.BEHIND_LIMIT) is None
    finally:
        writer.finish()
