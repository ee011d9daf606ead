"""``--concurrency N`` means N requests in flight: a per-endpoint cap applies only where it is
set, and a run whose cap binds says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

from authpairs.backends.config import OpenAIBackendConfig
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.runs.api import in_flight_cap, run_async
from authpairs.runs.config import RunConfig
from tests.backends.fake_server import FaultServer


def test_no_cap_unless_one_is_set() -> None:
    assert OpenAIBackendConfig().concurrency_per_endpoint is None
    backend = {"base_urls": ["http://a/v1", "http://b/v1"], "concurrency_per_endpoint": None}
    assert in_flight_cap(16, backend) is None
    assert in_flight_cap(16, {**backend, "concurrency_per_endpoint": 8}) is None  # 2 x 8
    assert in_flight_cap(16, {**backend, "concurrency_per_endpoint": 4}) == (
        "at most 8 requests in flight (4 per endpoint x 2 endpoints, "
        "concurrency_per_endpoint), below the run's concurrency of 16")


async def test_the_run_concurrency_is_the_number_in_flight_on_one_endpoint(
        tmp_path: Path) -> None:
    # The server answers only once all eight requests wait at once: a client capped below
    # eight would never be answered (and the run would time out).
    async with FaultServer(default="gather:8") as server:
        config = RunConfig.model_validate({
            "dataset": "examples", "split": "all", "enforce": False, "concurrency": 8,
            "records": str(tmp_path / "r.sqlite"),
            "reviewer": {"interface": "direct", "backend": {
                "kind": "openai", "base_urls": [server.base_url], "model": "m",
                "deadline_s": 120}}})
        state = await asyncio.wait_for(run_async(config, progress=False), timeout=120)
        assert server.peak_in_flight == 8
    assert state.completed_now == 8 and state.notes == []


async def test_a_binding_cap_is_said(tmp_path: Path) -> None:
    async with FaultServer(default="ok") as server:
        config = RunConfig.model_validate({
            "dataset": "examples", "split": "all", "enforce": False, "concurrency": 8,
            "records": str(tmp_path / "r.sqlite"),
            "reviewer": {"interface": "direct", "backend": {
                "kind": "openai", "base_urls": [server.base_url], "model": "m",
                "concurrency_per_endpoint": 2}}})
        state = await run_async(config, progress=False)
    assert state.notes == ["at most 2 requests in flight (2 per endpoint x 1 endpoint, "
                           "concurrency_per_endpoint), below the run's concurrency of 8"]


def test_the_backend_itself_has_no_cap_by_default() -> None:
    backend = OpenAIBackend(["http://127.0.0.1:9/v1"], "m")
    assert backend.describe()["concurrency_per_endpoint"] is None
