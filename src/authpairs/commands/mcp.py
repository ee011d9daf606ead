"""Agent mode commands: ``mcp serve`` (the cases as MCP tools, resources and prompts)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from authpairs import main_job
from authpairs.commands.run_options import with_run_options

if TYPE_CHECKING:
    from authpairs.agent.trajectory import Trajectory
    from authpairs.main_job import AgentServer
    from authpairs.runs.config import RunConfig

SERVE_HELP = (
    "Serve cases to an agent over MCP: the effect types as tools, each case's request, policy "
    "and evidence as a resource (authpairs://cases/ID) and a prompt (named by the case id).\n\n"
    "Every tool call is reviewed by the configured reviewer in the current case's context "
    "(the call the agent proposed, not the case's own operation), executed in the sandbox on "
    "ALLOW, verified, and recorded in the records file under one run per serve session. The "
    "options of the run are those of 'authpairs run'. With several cases, a session's tool "
    "calls act on the case whose prompt it got last.\n\n"
    "--transport stdio (default) serves one client on stdin/stdout until it disconnects; "
    "--transport http serves streamable HTTP on http://127.0.0.1:PORT/mcp until Ctrl-C.")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the ``mcp`` command group."""
    mcp_app = typer.Typer(no_args_is_help=True, help="Agent mode over MCP.")
    app.add_typer(mcp_app, name="mcp")

    @mcp_app.command("serve", help=SERVE_HELP)
    @with_run_options()
    def serve(
        config: RunConfig,
        case: Annotated[list[str] | None, typer.Option(
            "--case", help="Serve this case (repeatable). Default: every selected case.")]
        = None,
        transport: Annotated[Literal["stdio", "http"], typer.Option(help="stdio or http.")]
        = "stdio",
        port: Annotated[int, typer.Option(help="Port of the HTTP transport (127.0.0.1).",
                                          min=1, max=65535)] = main_job.MCP_PORT,
    ) -> None:
        import asyncio
        import sys

        from authpairs.agent.serve import serve as serve_mcp

        def ready(run: str) -> None:
            # stderr: on the stdio transport stdout is the MCP wire.
            print(f"authpairs mcp: run {run}, records {config.records}", file=sys.stderr,
                  flush=True)

        asyncio.run(serve_mcp(config, case_ids=case or [], transport=transport, port=port,
                              on_ready=ready))


def run_agent_and_report(config: RunConfig, *, agent: str | None, agent_model: str | None,
                         server: AgentServer, by: list[str], out: Path | None, quiet: bool,
                         html: Path | None = None) -> None:
    """``authpairs run --agent`` (or a configuration with an ``agent:`` section): run the agent
    on the cases, print a line per case unless ``quiet`` and what became of the tool calls,
    then the stack scores (with what the agent proposed per case) and, with ``html``, the
    run's HTML report. Exit code 3 when the agent's model failed on any case."""
    import asyncio

    from rich.text import Text

    from authpairs.api import run_agent_async
    from authpairs.commands.analysis import score_agent_runs
    from authpairs.report.console import make_console

    console = make_console()

    def case_done(trajectory: Trajectory) -> None:
        if not quiet:
            ended = trajectory.stop.value + (f" ({trajectory.error})" if trajectory.error
                                              else "")
            console.print(Text(f"{trajectory.case_id}: {trajectory.turns} turn(s), "
                               f"{trajectory.tool_calls} tool call(s), {ended}"))

    result = asyncio.run(run_agent_async(config, agent=agent, agent_model=agent_model,
                                         server=server, on_case=case_done))
    calls = ", ".join(f"{n} {what}" for what, n in result.result_counts().items()) or "none"
    console.print(Text(f"agent run {result.run_id} ({result.records_path}): "
                       f"{len(result.trajectories)} cases; tool calls: {calls}"))
    score_agent_runs(Path(result.records_path), [result.run_id], by, out)
    if html is not None:
        from authpairs.commands.report import write_report
        from authpairs.report.request import ReportRequest

        write_report(ReportRequest(runs=[result.run_id], out=html,
                                   records=Path(result.records_path)))
    if any(t.error for t in result.trajectories):
        raise typer.Exit(code=3)
