"""A reviewer that answers without suspending (a baseline) does not hold the event loop: each
worker lets the loop run after every case, so other tasks (the writer's flusher, progress) run
and the loop can drop the attempts' cancelled deadline timers as the run goes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.scripted import ScriptedBackend
from authpairs.review.interfaces import get_interface
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, SamplingConfig
from authpairs.runs.store import RecordStore


async def test_the_loop_runs_between_cases_of_a_baseline(records_path: Path) -> None:
    config = RunConfig.model_validate({"dataset": "examples", "split": "all", "enforce": False,
                                       "records": str(records_path), "concurrency": 1,
                                       "reviewer": {"baseline": "always-allow"}})
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    task = asyncio.ensure_future(ticker())
    try:
        state = await run_async(config, progress=False)
    finally:
        task.cancel()
    assert state.completed_now == 8
    assert ticks >= state.completed_now  # at least once per case


async def test_a_run_stopped_at_the_turn_after_an_answer_stores_that_answer(
        records_path: Path) -> None:
    """The turn of the loop each worker gives after an answer comes before the case's records
    are made; a run stopped (Ctrl-C) right there still stores every answer it received."""
    config = RunConfig.model_validate({"dataset": "examples", "split": "all", "enforce": False,
                                       "records": str(records_path), "concurrency": 4})
    answered: list[str] = []
    run: asyncio.Task[object] | None = None

    def script(request: ChatRequest) -> str:
        answered.append(request.sha256())
        if len(answered) == 3:  # stop the run at the next turn of the loop
            assert run is not None
            asyncio.get_running_loop().call_soon(run.cancel)
        return '{"decision": "ALLOW"}'

    reviewer = ModelReviewer(get_interface("direct"), ScriptedBackend(script), SamplingConfig())
    run = asyncio.ensure_future(run_async(config, progress=False, reviewer=reviewer))
    with pytest.raises(asyncio.CancelledError):
        await run
    with RecordStore(records_path) as store:
        (info,) = store.list_runs()
        stored = {record.input_sha256 for record in store.case_records(info.run_id)}
    assert len(answered) >= 3
    assert stored == set(answered)
