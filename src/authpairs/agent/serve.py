"""``authpairs mcp serve``: one run, served to an agent over MCP until the client leaves.

The reviewer, the enforcement point, the records and the run header are built by the functions
``authpairs run`` uses (:func:`~authpairs.runs.reviewers.make_reviewer`,
:func:`~authpairs.runs.api.make_enforcer`, :class:`~authpairs.runs.store.RecordStore`,
:func:`~authpairs.runs.api.run_header`); the header names the serve session (transport, cases)
beside the resolved configuration. The cases a session offers are the configuration's dataset and
split, optionally narrowed to named case ids (:func:`select_cases`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, ExitStack
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

from authpairs.agent.server import build_server
from authpairs.agent.session import AgentSession
from authpairs.backends.base import preflight
from authpairs.cases.dataset import Dataset
from authpairs.errors import ConfigError
from authpairs.review.reviewers import Reviewer
from authpairs.runs.api import load_run_dataset, make_enforcer, run_header
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.config import RunConfig
from authpairs.runs.records import RunInfo
from authpairs.runs.reviewers import make_reviewer
from authpairs.runs.store import RecordStore

log = logging.getLogger("authpairs.agent")

Transport = Literal["stdio", "http"]
HTTP_HOST = "127.0.0.1"
"""Streamable HTTP is served on the loopback interface only."""
MCP_PATH = "/mcp"


def select_cases(config: RunConfig, case_ids: Sequence[str] = ()) -> Dataset:
    """The cases of ``config`` (dataset, split, limit; effects validated), narrowed to
    ``case_ids`` in the order given when there are any. With case ids and no split, every
    split is searched. Only cases with an effect descriptor can be served: agent mode compares
    the agent's calls with the case's operation."""
    if case_ids and config.split is None:
        config = config.model_copy(update={"split": "all"})
    dataset = load_run_dataset(config)
    if case_ids:
        by_id = dataset.by_id()
        unknown = [case_id for case_id in case_ids if case_id not in by_id]
        if unknown:
            raise ConfigError(f"dataset '{config.dataset}' (split {config.split}) has no case "
                              f"{', '.join(repr(c) for c in unknown)}")
        dataset = Dataset(dataset.name, [by_id[case_id] for case_id in dict.fromkeys(case_ids)])
    without = [case.case_id for case in dataset if case.public.effect is None]
    if without:
        raise ConfigError(f"{len(without)} selected case(s) carry no effect descriptor (e.g. "
                          f"'{without[0]}'); agent mode serves cases with an operation only")
    if not len(dataset):
        raise ConfigError(f"dataset '{config.dataset}' (split {config.split}) selects no cases")
    return dataset


def refuse_existing(store: RecordStore, run_id: str, what: str) -> None:
    """Raise a :class:`ConfigError` when ``run_id`` is already in ``store``: ``what`` (a serve
    session, an agent run) is a run of its own, its calls numbered from 1."""
    if store.get_run(run_id) is not None:
        raise ConfigError(f"run '{run_id}' already exists in {store.path}; {what} starts a new "
                          "run: choose another --run-id")


def new_run_id(prefix: str = "mcp") -> str:
    """A fresh run id per serve session: ``mcp-`` (or ``prefix-``) + UTC time + 6 random hex
    digits."""
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def run_info(run_id: str, config: RunConfig, reviewer: Reviewer, cases: Dataset,
             transport: Transport | Literal["in-process"],
             agent_model: dict[str, Any] | None = None) -> RunInfo:
    """The run header of a serve session (:func:`~authpairs.runs.api.run_header`) with its
    ``agent`` section: mode, transport, the cases offered. The mode is ``run`` when the
    configuration names an agent model (``authpairs run --agent``: the server side of an agent
    run, its model in ``resolved.agent``), else ``mcp``; ``agent_model`` adds what the running
    agent model says of itself."""
    agent: dict[str, Any] = {"mode": "mcp" if config.agent is None else "run",
                             "transport": transport, "cases": cases.case_ids()}
    if agent_model is not None:
        agent["model"] = agent_model
    return run_header(run_id, config, reviewer, cases, agent)


async def serve(config: RunConfig, *, case_ids: Sequence[str] = (),
                transport: Transport = "stdio", port: int,
                on_ready: Callable[[str], None] | None = None) -> str:
    """Serve the selected cases over ``transport`` until the client closes stdio (or the HTTP
    server on ``port`` is stopped: SIGINT/SIGTERM); returns the run id. ``on_ready`` is told
    the run id once the run is open and the server is about to take requests."""
    if transport not in ("stdio", "http"):
        raise ConfigError(f"unknown transport {transport!r} (stdio or http)")
    cases = select_cases(config, case_ids)
    run_id = config.run_id or new_run_id()
    ready = partial(on_ready, run_id) if on_ready is not None else lambda: None
    async with open_session(config, cases, run_id, transport) as agent:
        if transport == "stdio":
            await _serve_stdio(agent, ready)
        else:
            await _serve_http(agent, port, ready)
    return run_id


@contextlib.asynccontextmanager
async def open_session(config: RunConfig, cases: Dataset, run_id: str,
                       transport: Transport | Literal["in-process"],
                       agent_model: dict[str, Any] | None = None
                       ) -> AsyncIterator[AgentSession]:
    """The session of a new run ``run_id`` over ``cases``: the reviewer, the records file
    with the run's header (:func:`run_info`) and the enforcement point, built as ``authpairs
    run`` builds them. On leaving, the session is closed (its case records stored) and the
    reviewer and sandbox are released."""
    async with AsyncExitStack() as stack:
        reviewer = await make_reviewer(config.reviewer, stack)
        if config.preflight:  # before the records file is opened: a failure records nothing
            await preflight([reviewer])
        with ExitStack() as sync_stack:
            store = sync_stack.enter_context(RecordStore(config.records))
            refuse_existing(store, run_id, "a serve session")
            store.open_run(run_info(run_id, config, reviewer, cases, transport, agent_model))
            enforcer = sync_stack.enter_context(make_enforcer(config))
            runner = CaseRunner(reviewer, enforcer=enforcer,
                                deadline_s=config.reviewer.backend.deadline_s,
                                infra_retries=config.infra_retries)
            agent = AgentSession(run_id, cases, runner, store)
            try:
                yield agent
            finally:
                stored = agent.close()
                log.info("run %s: %d case record(s) stored", run_id, len(stored))


async def _serve_stdio(agent: AgentSession, ready: Callable[[], None]) -> None:
    """Serve one client on stdin/stdout; SIGTERM ends the session like a closed stdin (its
    handler is in place before ``ready`` is called)."""
    from mcp.server.stdio import stdio_server

    server = build_server(agent)
    task = asyncio.current_task()
    assert task is not None  # a coroutine asyncio runs is always in a task
    loop = asyncio.get_running_loop()
    handled = sys.platform != "win32"
    if handled:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    ready()
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except asyncio.CancelledError:
        task.uncancel()  # the signal ends the session; closing it still has work to do
        log.info("stdio session stopped by a signal")
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGTERM)


async def _serve_http(agent: AgentSession, port: int, ready: Callable[[], None]) -> None:
    """Serve streamable HTTP on 127.0.0.1:``port`` (path ``/mcp``) until SIGINT/SIGTERM."""
    import uvicorn

    app = build_server(agent).streamable_http_app(streamable_http_path=MCP_PATH,
                                                  host=HTTP_HOST)
    settings: dict[str, Any] = {"host": HTTP_HOST, "port": port, "log_level": "warning"}

    class _Server(uvicorn.Server):
        """uvicorn's server, except that a SIGINT/SIGTERM that stopped it is not raised again
        once it has stopped: the session still stores its case records, then returns."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    server = _Server(uvicorn.Config(app, **settings))
    ready()
    log.warning("serving MCP on http://%s:%d%s", HTTP_HOST, port, MCP_PATH)
    with contextlib.suppress(asyncio.CancelledError):
        await server.serve()
