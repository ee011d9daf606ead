"""Fail fast and say why (docs/reliability.md, "Fail fast"): an unreachable, wrong or failing
endpoint stops a run in seconds with one line naming it, nothing already recorded is lost, and
the same command resumes the run.

Per endpoint kind: an OpenAI-compatible model server (refused, wrong model, dies half-way), an
HTTP guardrail, NeMo's model and the agent's model. Real sockets throughout: a refused port is a
port nothing listens on, a server that dies is a real server closed mid-run.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.runs.api import run_async
from authpairs.runs.config import config_from_dict
from tests.backends.fake_server import FaultServer
from tests.backends.test_breaker import closed_port

runner = CliRunner()

#: Seconds, not minutes: a loose bound that holds on a loaded machine. The exact times (under a
#: second with preflight, the breaker's 3 s bound without) are measured in
#: bench/bench_fail_fast.py, not here.
SECONDS_NOT_MINUTES = 30.0


def _refused() -> str:
    return f"http://127.0.0.1:{closed_port()}/v1"


def _run(records: Path, *args: str, dataset: str = "examples") -> tuple[int, str, str]:
    split = "all" if dataset == "examples" else "dev"
    result = runner.invoke(app, ["run", "--dataset", dataset, "--split", split,
                                 "--no-enforce", "--quiet", "--records", str(records), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("reviewer", "names"), [
    (["--backend", "openai", "--model", "m", "--base-url", "{url}"], "{url}: connection refused"),
    (["--guardrail", "nemo-self-check", "--backend", "openai", "--model", "m",
      "--base-url", "{url}"], "{url}: connection refused"),
    (["--guardrail", "http", "--guardrail-option", "url={url}/verdict"],
     "{url}/verdict: connection refused"),
])
def test_preflight_stops_before_the_first_case_with_one_line(tmp_path: Path, reviewer: list[str],
                                                             names: str) -> None:
    url = _refused()
    records = tmp_path / "r.sqlite"
    started = time.monotonic()
    code, out, err = _run(records, *[arg.replace("{url}", url) for arg in reviewer])
    assert code == 2 and out == ""
    assert err.count("error:") == 1 and names.replace("{url}", url) in err and "hint:" in err
    assert time.monotonic() - started < SECONDS_NOT_MINUTES
    assert not records.exists()  # a run that never started leaves no records file


def test_a_wrong_model_name_lists_what_the_server_serves(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, str, list[str]]:
        async with FaultServer(models=["qwen3-guard", "llama-guard-4"]) as server:
            code, _, err = await asyncio.to_thread(
                _run, tmp_path / "r.sqlite", "--backend", "openai", "--model", "gpt-oss",
                "--base-url", server.base_url)
            return code, err, server.requests

    code, err, requests = asyncio.run(scenario())
    assert code == 2 and "does not serve model 'gpt-oss'" in err
    assert "'qwen3-guard', 'llama-guard-4'" in err and requests == []


def test_the_agent_model_is_checked_before_the_run(tmp_path: Path) -> None:
    url = _refused()
    records = tmp_path / "r.sqlite"
    code, out, err = _run(records, "--baseline", "always-allow", "--agent", url,
                          "--agent-model", "m")
    assert code == 2 and out == "" and f"{url}: connection refused" in err
    assert not records.exists()


def test_without_preflight_the_breaker_stops_a_dead_endpoint_in_seconds(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    records = tmp_path / "r.sqlite"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="authpairs.runs"):
        code, out, _ = _run(records, "--backend", "openai", "--model", "m", "--base-url",
                            _refused(), "--no-preflight", "--concurrency", "8",
                            "--interface", "direct", dataset="language")
    elapsed = time.monotonic() - started
    flat = " ".join(out.split())
    assert code == 3 and "stopped:" in flat and "connection refused on every request" in flat
    assert "re-run the same command" in flat
    assert elapsed < SECONDS_NOT_MINUTES
    # Quiet: one line for the first failure, summaries for the rest, not one per attempt.
    lines = [r for r in caplog.records if r.name == "authpairs.runs"]
    assert 1 <= len(lines) <= 3, [r.getMessage() for r in lines]


async def test_a_server_that_dies_half_way_stops_the_run_and_a_rerun_completes_it(
        tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"

    def config(url: str) -> object:
        return config_from_dict({
            "dataset": "language", "split": "dev", "enforce": False, "concurrency": 4,
            "records": str(records), "run_id": "dies",
            "reviewer": {"interface": "direct", "backend": {
                "kind": "openai", "base_urls": [url], "model": "m", "deadline_s": 5}}})

    first = FaultServer(default="trickle:0.1")
    async with first:
        port = int(first.base_url.split(":")[2].split("/")[0])
        run = asyncio.ensure_future(run_async(config(first.base_url), progress=False))
        while len(first.requests) < 12:
            await asyncio.sleep(0.01)
    died = time.monotonic()  # the server is closed: every new connection is refused
    state = await run
    stopped_after = time.monotonic() - died
    assert state.stopped is not None and "connection refused" in state.stopped
    assert stopped_after < SECONDS_NOT_MINUTES  # the breaker's bound plus the waits in flight
    recorded_before = state.completed_now
    assert 0 < recorded_before < 40

    async with FaultServer(port=port) as second:
        resumed = await run_async(config(second.base_url), progress=False)
    assert resumed.stopped is None and resumed.already_done == recorded_before
    assert resumed.completed_now == 40 - recorded_before and resumed.missing == 0
    with sqlite3.connect(records) as db:
        ids = [row[0] for row in db.execute(
            "SELECT case_id FROM case_records WHERE run_id = 'dies'")]
    assert len(ids) == len(set(ids)) == 40  # no case lost or duplicated
    audit = runner.invoke(app, ["audit", "dies", "--records", str(records)])
    assert audit.exit_code == 0, audit.output


def test_a_dead_http_guardrail_stops_the_run(tmp_path: Path) -> None:
    url = f"{_refused()}/verdict"
    records = tmp_path / "r.sqlite"
    started = time.monotonic()
    code, out, _ = _run(records, "--guardrail", "http", "--guardrail-option", f"url={url}",
                        "--no-preflight", "--concurrency", "4", dataset="language")
    flat = " ".join(out.split())
    assert code == 3 and f"stopped: {url}: connection refused on every request" in flat
    assert time.monotonic() - started < SECONDS_NOT_MINUTES


def test_a_dead_agent_model_stops_the_agent_run(tmp_path: Path) -> None:
    url = _refused()
    records = tmp_path / "r.sqlite"
    started = time.monotonic()
    code, _, err = _run(records, "--baseline", "always-allow", "--agent", url,
                        "--agent-model", "m", "--no-preflight")
    assert code == 2 and err.count("error:") == 1
    assert f"{url}: connection refused on every request" in err
    assert time.monotonic() - started < SECONDS_NOT_MINUTES
