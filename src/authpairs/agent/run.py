"""``authpairs run --agent``: an agent run, its model connected to the authpairs MCP server.

The run configuration's ``agent`` section names the agent's model
(:class:`~authpairs.runs.agent_config.AgentModelConfig`); its ``reviewer`` reviews each tool
call, exactly as in ``authpairs run`` and ``authpairs mcp serve``. The agent reaches the
server through the MCP SDK's client, either

* ``in-process`` (the default): the server runs in this process (the SDK's in-memory
  transport), or
* ``stdio``: the server is an ``authpairs mcp serve`` child process on a real stdio transport,
  given the same configuration; it writes the run header, the calls and the case records, and
  this process writes the trajectories into the same records file.

Everything lands in one run of the records file: the header (the resolved configuration, agent
model included, and ``agent.mode: run``), an :class:`~authpairs.runs.records.AgentCall` per tool
call with its review and effect, the reviewer's attempts, one case record per case with a
reviewed call and one :class:`~authpairs.agent.trajectory.Trajectory` per case. An agent run is
a session of its own: it never resumes (the default run id is ``agent-`` + UTC time + random
digits; an existing run id is an error).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

import yaml
from mcp import Client, StdioServerParameters

import authpairs.main_job as main_job
from authpairs.agent.readback import case_proposals, trajectories
from authpairs.agent.runner import AgentLoop
from authpairs.agent.serve import new_run_id, open_session, refuse_existing, select_cases
from authpairs.agent.server import build_server
from authpairs.agent.session import AgentSession
from authpairs.agent.trajectory import Trajectory
from authpairs.backends.base import EndpointDownError, preflight
from authpairs.backends.tool_chat import ToolChat, make_tool_chat
from authpairs.cases.dataset import Dataset
from authpairs.errors import ConfigError
from authpairs.main_job import AgentServer
from authpairs.runs.config import RunConfig
from authpairs.runs.records import AgentCall, CaseRecord, Proposal, stored_json
from authpairs.runs.store import RecordStore

log = logging.getLogger("authpairs.agent")

SERVER_MODES: tuple[AgentServer, ...] = get_args(AgentServer)


@dataclass
class AgentRunResult:
    """What an agent run recorded, read back from the records file."""

    run_id: str
    records_path: str
    trajectories: list[Trajectory] = field(default_factory=list)
    calls: list[AgentCall] = field(default_factory=list)
    proposals: dict[str, Proposal] = field(default_factory=dict)
    records: list[CaseRecord] = field(default_factory=list)

    def proposal_counts(self) -> dict[str, int]:
        """Cases by what the agent proposed: the case's operation, another, none."""
        return Proposal.counts(self.proposals.values())

    def result_counts(self) -> dict[str, int]:
        """Tool calls by what became of them (executed, blocked, ...)."""
        return dict(sorted(Counter(call.result.value for call in self.calls).items()))


CaseDone = Callable[[Trajectory], None]


@contextlib.asynccontextmanager
async def _stdio_server(config: RunConfig, cases: Dataset,
                        run_id: str) -> AsyncIterator[Client]:
    """A client connected to an ``authpairs mcp serve`` child process serving ``cases`` (the
    console script beside this interpreter, in the current folder, with the current
    environment)."""
    authpairs = Path(sys.executable).with_name("authpairs")
    command, prefix = ((str(authpairs), []) if authpairs.exists()
                       else (sys.executable, ["-m", "authpairs.cli"]))
    with tempfile.TemporaryDirectory(prefix="authpairs-agent-") as folder:
        path = Path(folder) / "run.yaml"
        path.write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=True),
                        encoding="utf-8")
        args = [*prefix, "mcp", "serve", "--config", str(path), "--run-id", run_id,
                "--records", config.records]
        for case_id in cases.case_ids():
            args += ["--case", case_id]
        parameters = StdioServerParameters(command=command, args=args, env=dict(os.environ),
                                           cwd=os.getcwd())
        async with Client(parameters) as client:
            yield client


async def _loop_cases(loop: AgentLoop, cases: Dataset, store: RecordStore, run_id: str,
                      on_case: CaseDone | None, session: AgentSession | None = None) -> None:
    """Each case's loop, its trajectory stored; stops after a case in which the in-process
    ``session``'s reviewer went down (:attr:`AgentSession.stopped`)."""
    for case_id in cases.case_ids():
        trajectory = await loop.run_case(case_id)
        store.add_agent_trajectory(run_id, case_id, stored_json(trajectory))
        if on_case is not None:
            on_case(trajectory)
        if session is not None and session.stopped is not None:
            raise session.stopped


async def run_agent(config: RunConfig, *, case_ids: Sequence[str] = (),
                    server: AgentServer = main_job.AGENT_SERVER,
                    on_case: CaseDone | None = None) -> AgentRunResult:
    """Run ``config``'s agent on its cases (or on ``case_ids``) through the MCP server and
    return what was recorded. ``on_case`` is told each case's trajectory as it is stored."""
    if config.agent is None:
        raise ConfigError("an agent run needs an agent model: --agent, or an 'agent:' section "
                          "in the configuration")
    if server not in SERVER_MODES:
        raise ConfigError(f"unknown MCP server mode {server!r} (in-process or stdio)")
    settings = config.agent
    cases = select_cases(config, case_ids)
    run_id = config.run_id or new_run_id("agent")
    chat: ToolChat = make_tool_chat(settings.backend, settings.tool_format)
    async with chat:
        if config.preflight:  # the agent's model; the reviewer's endpoints in open_session
            await preflight([chat])
        try:
            if server == "in-process":
                async with (open_session(config, cases, run_id, "in-process",
                                         agent_model=chat.describe()) as session,
                            Client(build_server(session)) as client):
                    loop = AgentLoop(client, chat, settings, run_id=run_id,
                                     retries=config.infra_retries)
                    await _loop_cases(loop, cases, session.store, run_id, on_case, session)
            else:
                with RecordStore(config.records) as store:  # before the server starts
                    refuse_existing(store, run_id, "an agent run")
                async with _stdio_server(config, cases, run_id) as client:
                    loop = AgentLoop(client, chat, settings, run_id=run_id,
                                     retries=config.infra_retries)
                    with RecordStore(config.records) as store:
                        await _loop_cases(loop, cases, store, run_id, on_case)
        except BaseExceptionGroup as group:  # the MCP client's task group wraps what failed
            # reported: the endpoint that went down (EndpointDownError) when one did, else all
            down: BaseException | None = group.subgroup(EndpointDownError)
            while isinstance(down, BaseExceptionGroup):
                down = down.exceptions[0]
            raise (down if down is not None else group) from None
    return read_agent_run(config.records, run_id)


def read_agent_run(records: str | Path, run_id: str) -> AgentRunResult:
    """An agent run's trajectories, calls, proposals per case and case records."""
    with RecordStore(records, readonly=True) as store:
        return AgentRunResult(run_id=run_id, records_path=str(records),
                              trajectories=trajectories(store, run_id),
                              calls=store.agent_calls(run_id),
                              proposals=case_proposals(store, run_id),
                              records=store.case_records(run_id))
