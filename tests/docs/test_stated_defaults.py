"""The defaults the docs state in prose are the main job's (:mod:`authpairs.main_job`), the
agent model's (:class:`~authpairs.runs.agent_config.AgentModelConfig`) and the record writer's
batches: each sentence below is written from them and must be found in its file (line breaks
and indentation aside), so a changed default and a stale sentence cannot both stand."""

from __future__ import annotations

from pathlib import Path

import pytest

import authpairs.main_job as main_job
from authpairs.runs.agent_config import AgentModelConfig
from authpairs.runs.orchestrator import MIN_BATCH
from authpairs.runs.writer import DEFAULT_MAX_DELAY_S

REPO = Path(__file__).resolve().parents[2]
WORDS = {1: "one", 2: "two"}
"""A count as the docs spell it."""
AGENT = AgentModelConfig()

STATED: list[tuple[str, str]] = [
    ("README.md", f"records everything to `{main_job.RECORDS}`"),
    ("README.md", f"{WORDS[main_job.N_PARALLEL]} decoding slot and "
                  f"{WORDS[main_job.CONCURRENCY]} case in flight"),
    ("README.md", f"`n_threads: {main_job.N_THREADS}` (the default here"),
    ("README.md", f"`speculative: {main_job.SPECULATIVE}` (the default here)"),
    ("README.md", f"`repetition_penalty: {main_job.LOCAL_REPETITION_PENALTY:g}` keeps the tiny "
                  "model from looping"),
    ("docs/reliability.md", f"The deadline defaults to {main_job.DEADLINE_S:g} s"),
    ("docs/reliability.md", f"{WORDS[main_job.N_PARALLEL]} decoding slot, "
                            f"{WORDS[main_job.N_THREADS]} thread, `{main_job.SPECULATIVE}` "
                            f"speculative decoding, seed {main_job.SEED}, repetition penalty "
                            f"{main_job.LOCAL_REPETITION_PENALTY:g} with the local backend only, "
                            f"{WORDS[main_job.CONCURRENCY]} case in flight; the split "
                            f"`{main_job.SPLIT}` for the `{main_job.DATASET}` dataset only"),
    ("docs/api.md", f'(with `"sample_seed": S`, default {main_job.SAMPLE_SEED})'),
    ("docs/agents.md", f"(`--records`, default `{main_job.RECORDS}`;"),
    ("docs/agents.md", f"`--transport http --port {main_job.MCP_PORT}`"),
    ("docs/agents.md", f"`http://127.0.0.1:PORT/mcp` (default port {main_job.MCP_PORT})"),
    ("docs/agents.md", f"`http://127.0.0.1:{main_job.MCP_PORT}/mcp` after `authpairs mcp serve "
                       "--transport http`"),
    ("docs/agents.md", f"# the default: {AGENT.sampling.temperature}, {AGENT.sampling.seed}, "
                       f"{AGENT.sampling.max_tokens}"),
    ("docs/agents.md", f"max_turns: 8 # model turns per case (default {AGENT.max_turns})"),
    ("docs/agents.md", f"(up to {AGENT.sampling.max_tokens} tokens a turn, {AGENT.max_turns} "
                       "turns)"),
    ("docs/architecture.md", f"RecordWriter: one SQLite transaction per {MIN_BATCH} cases or "
                             f"{DEFAULT_MAX_DELAY_S:g} s"),
    ("docs/architecture.md", f"(`runs/writer.py`: one transaction per {MIN_BATCH} cases or per "
                             f"{DEFAULT_MAX_DELAY_S:g} s)"),
    ("docs/analysis.md", f"(in `--records`, default `{main_job.RECORDS}`)"),
    ("docs/report.md", f"(in `--records`, default `{main_job.RECORDS}`)"),
    ("docs/report.md", f"(runs in `{main_job.RECORDS}` unless `--records` says otherwise)"),
]


def _prose(path: str) -> str:
    return " ".join((REPO / path).read_text(encoding="utf-8").split())


@pytest.mark.parametrize(("path", "sentence"), STATED, ids=[f"{p}: {s[:40]}" for p, s in STATED])
def test_a_stated_default_is_the_main_jobs(path: str, sentence: str) -> None:
    assert sentence in _prose(path), f"{path} no longer says: {sentence}"
