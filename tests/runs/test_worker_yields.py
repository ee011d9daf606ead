"""A reviewer that answers without suspending (a baseline) does not hold the event loop: each
worker lets the loop run after every case, so other tasks (the writer's flusher, progress) run
and the loop can drop the attempts' cancelled deadline timers as the run goes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig


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
