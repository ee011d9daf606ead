"""Agent runs are scored as a stack; the analyses of a guardrail run's case records refuse them
in one clear error (their case records leave out the cases the agent declined)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.analysis.agent_fixtures import record_examples
from typer.testing import CliRunner

import authpairs
from authpairs.analysis.runref import AgentRunError
from authpairs.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agent-refused") / "records.sqlite"
    asyncio.run(record_examples(path))
    authpairs.run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
                   "records": str(path), "run_id": "plain"})
    return path


def test_the_python_analyses_refuse_an_agent_run_and_name_the_stack_score(records: Path
                                                                         ) -> None:
    open_run, plain = f"{records}::open", f"{records}::plain"
    calls = [lambda: authpairs.score(open_run), lambda: authpairs.compare(plain, open_run),
             lambda: authpairs.compose([plain, open_run]),
             lambda: authpairs.gate(plain, open_run, required=[])]
    for call in calls:
        with pytest.raises(AgentRunError, match="'open' is an agent run") as caught:
            call()
        assert "agent_score" in caught.value.hint
    assert authpairs.agent_score(open_run).overall  # the stack score reads it
    assert authpairs.score(plain).n == 8


@pytest.mark.parametrize("args", [
    ["gate", "--baseline", "plain", "--candidate", "open", "--required", "/dev/null"],
    ["compose", "plain", "open"],
])
def test_gate_and_compose_refuse_an_agent_run_in_one_line(records: Path, args: list[str]
                                                          ) -> None:
    result = runner.invoke(app, [*args, "--records", str(records)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: 'open' is an agent run"), lines
    assert "(hint: 'authpairs score RUN'" in lines[0]
    assert result.stdout == ""
