"""Every reviewer has a deadline: an answer later than ``reviewer.backend.deadline_s`` (the
CLI's ``--deadline``) is an infrastructure timeout, never a decision -- Python guardrails
included, sync or async, whose own code cannot be interrupted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore
from tests.conftest import REPO_ROOT


def _config(records: Path, guardrail: str, deadline_s: float) -> RunConfig:
    return RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 2, "enforce": True,
        "records": str(records), "concurrency": 2, "infra_retries": 0,
        "reviewer": {"guardrail": guardrail, "backend": {"deadline_s": deadline_s}}})


@pytest.mark.parametrize("guardrail", ["tests.runs.scripts:sleepy_sync_guardrail",
                                       "tests.runs.scripts:sleepy_async_guardrail"])
async def test_a_late_guardrail_answer_is_a_timeout_not_a_decision(
        tmp_path: Path, guardrail: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTHPAIRS_TEST_DELAY", "1.5")
    records = tmp_path / "r.sqlite"
    state = await run_async(_config(records, guardrail, 0.2), progress=False)
    assert state.completed_now == 0 and len(state.infrastructure_failed) == 2
    assert set(state.cause_summary()) == {
        "timeout: no complete reply within the 0.2 s deadline"}
    with RecordStore(records, readonly=True) as store:
        assert store.case_records(state.run_id) == []  # no decision, no effect executed
        attempts = store.attempts(state.run_id)
    assert [a.kind for a in attempts] == ["infrastructure"] * 2


async def test_an_answer_within_the_deadline_is_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTHPAIRS_TEST_DELAY", "0.01")
    records = tmp_path / "r.sqlite"
    state = await run_async(_config(records, "tests.runs.scripts:sleepy_async_guardrail", 5.0),
                            progress=False)
    assert state.completed_now == 2 and not state.infrastructure_failed


def test_the_cli_deadline_reaches_a_python_guardrail(tmp_path: Path) -> None:
    config = tmp_path / "no-retries.yaml"
    config.write_text("infra_retries: 0\n")
    env = {**os.environ, "AUTHPAIRS_TEST_DELAY": "1.5", "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "authpairs.cli", "run", "--config", str(config), "--dataset",
         "examples", "--split", "all", "--limit", "1", "--guardrail",
         "tests.runs.scripts:sleepy_sync_guardrail", "--deadline", "0.2", "--records",
         str(tmp_path / "r.sqlite"), "--quiet"], capture_output=True, text=True, timeout=120,
        env=env)
    assert "0 recorded of 1 expected" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "timeout: no complete reply within the 0.2 s deadline" in done.stdout + done.stderr
