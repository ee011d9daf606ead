"""Core commands: ``run``, ``score``, ``runs``, ``export``, ``show-prompt``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.text import Text

import authpairs.main_job as main_job
from authpairs.analysis.defaults import DEFAULT_RECORDS
from authpairs.commands.audit import AllowUnverifiedOpt, RecordsOpt, checks_records
from authpairs.commands.run_options import CONCURRENCY, with_run_options
from authpairs.errors import DataError, RecordsError
from authpairs.report.console import make_console

if TYPE_CHECKING:
    from authpairs.analysis.scoring import Score
    from authpairs.runs.config import RunConfig
    from authpairs.runs.orchestrator import RunProgress
    from authpairs.runs.records import CaseRecord

console = make_console()


RUN_HELP = (
    "Run (or resume) a review run, then print its scores.\n\n"
    "What --config and the options leave out is the main job's (configs/local-smollm2.yaml): "
    f"the {main_job.DATASET} {main_job.SPLIT} split, the {main_job.INTERFACE} interface, the "
    "embedded local server with SmolLM2-135M, temperature "
    f"{main_job.TEMPERATURE:g}, seed {main_job.SEED}, up to {main_job.MAX_TOKENS} output tokens, "
    f"repetition penalty {main_job.LOCAL_REPETITION_PENALTY:g} (with the local backend only), "
    f"{main_job.CONCURRENCY} case in flight, effects enforced in a sandbox, records in "
    f"{main_job.RECORDS}.\n\n"
    "Re-running the same command resumes: only cases without a record are reviewed.")


def report_run(records_path: Path, run_id: str, by: list[str], out: Path | None,
               written: tuple[str, int] | None = None) -> tuple[Score, bool]:
    """Print (and optionally write) the scores of a stored run; returns the overall score and
    whether the run is complete.

    The header line states ``n recorded of N expected`` and lists missing case ids. A run whose
    record chain is broken is refused (``runref.check_verified``) unless unverified runs
    are allowed; then a warning is printed and the written scores name it. ``written``: the
    chain this process just wrote (``RunProgress.written_chain``; see ``check_verified``).
    """
    from authpairs.analysis.runref import check_verified
    from authpairs.analysis.scoring import Tally, score_view
    from authpairs.report.reviewer_name import name_run
    from authpairs.report.tables import write_scores
    from authpairs.runs.completeness import completeness
    from authpairs.runs.store import RecordStore

    tally = Tally(by)  # one pass over the records (the chain check's), none of them kept
    recorded: list[str] = []

    present: set[str] = set()  # the case attributes the records carry, for --by

    def count(record: CaseRecord) -> None:
        tally.add(record)
        recorded.append(record.case_id)
        present.update(record.attributes)

    with RecordStore(records_path, readonly=True) as store:
        info = store.get_run(run_id)
        if info is None:
            raise RecordsError(f"{records_path}: no run '{run_id}'")
        unverified = check_verified(store, records_path, run_id, count, written=written)
        if unverified is not None:  # allowed but broken: score the records as stored
            tally, recorded = Tally(by), []
            for record in store.iter_case_records(run_id):
                count(record)
    check_by(by, present)
    state = completeness(info, recorded)
    console.print(Text(state.describe(), style="" if state.complete else "bold yellow"))
    console.print(Text(f"reviewer: {name_run(info.config).label}"))
    overall = {"all": tally.overall()}
    console.print(score_view(escape(f"{run_id}: {len(recorded)} of {state.expected} cases"),
                             overall, "cases"), crop=False)
    extra: dict[str, object] = {"expected": state.expected, "recorded": state.recorded,
                                "complete": state.complete, "missing": list(state.missing),
                                "integrity_ok": unverified is None}
    if out is not None:
        write_scores(out, "scores", overall, "cases", extra=extra)
    for attribute in by:
        groups = tally.by(attribute)
        console.print(score_view(escape(f"by {attribute}"), groups, escape(attribute)),
                      crop=False)
        if out is not None:
            write_scores(out, f"scores_by_{attribute}", groups, attribute, extra=extra)
    return overall["all"], state.complete


def check_by(by: list[str], present: set[str], cases: str = "recorded case") -> None:
    """Refuse a ``--by`` attribute no record (or, before a run, no ``cases``) has: a typo
    would group every case as "(none)"."""
    from authpairs.analysis.scoring import unknown_group_attributes

    unknown, usable = unknown_group_attributes(by, present)
    if unknown:
        raise typer.BadParameter(
            f"no {cases} has the attribute {', '.join(map(repr, unknown))} "
            f"(attributes here: {', '.join(usable)})", param_hint="'--by'")


def check_run_by(by: list[str], config: RunConfig) -> None:
    """Refuse a mistyped ``--by`` of ``authpairs run`` before any case is reviewed: the
    attributes are those of the cases the run selects (a case record copies its case's)."""
    if not by:
        return
    from authpairs.runs.api import open_run_cases

    present = {name for case in open_run_cases(config) for name in case.attributes}
    check_by(by, present, "case of the run")


def print_run_summary(state: RunProgress) -> None:
    """What this invocation did, with the causes of infrastructure failures."""
    console.print(Text(f"run {state.run_id}: {state.total} cases, {state.already_done} already "
                       f"recorded, {state.completed_now} new"))
    for note in state.notes:
        console.print(Text(note))
    if state.recorded_elsewhere:
        console.print(Text(f"{state.recorded_elsewhere} cases were recorded meanwhile by "
                           "another process on the same run"))
    if state.claimed_elsewhere:
        console.print(Text(f"{len(state.claimed_elsewhere)} cases are being reviewed by another "
                           "process on the same run: " + ", ".join(state.claimed_elsewhere[:10]),
                           style="yellow"))
    if state.infrastructure_failed:
        console.print(Text(f"{len(state.infrastructure_failed)} cases had only infrastructure "
                           "failures; re-run the same command to retry them. Causes:",
                           style="yellow"))
        for cause, count in state.cause_summary().items():
            console.print(Text(f"  {count} x {cause}"))
    if state.audit_failures:
        console.print(Text(f"effect-audit failures: {', '.join(state.audit_failures)}",
                           style="red"))
    if state.stopped:
        console.print(Text(f"stopped: {state.stopped}", style="red"))


def score_runs(records_path: Path, addresses: list[str], by: list[str], out: Path | None
               ) -> bool:
    """Print (and optionally write) the multi-run table, then any per-attribute tables;
    returns True when every run is complete."""
    from authpairs.analysis.runref import RunNotFoundError
    from authpairs.analysis.scoring import score_by, score_view
    from authpairs.commands.analysis import write_outputs
    from authpairs.report.measures import run_row
    from authpairs.report.runset import ReportInputError, load_report_runs
    from authpairs.report.tables import runs_view, write_scores
    from authpairs.runs.completeness import completeness

    try:
        runs = load_report_runs(addresses, records_path)
    except (RunNotFoundError, ReportInputError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    check_by(by, {name for run in runs for r in run.records for name in r.attributes})
    rows = [run_row(run) for run in runs]
    console.print(runs_view(rows), crop=False)
    states = [completeness(run.info, (r.case_id for r in run.records)) for run in runs]
    for state in states:
        if not state.complete:
            console.print(Text(state.describe(), style="bold yellow"))
    if out is not None:
        write_outputs(out, {"runs.csv": rows, "runs.json": rows})
    for run in runs:
        for attribute in by:
            groups = score_by(run.records, attribute)
            console.print(score_view(f"{run.name} by {attribute}", groups, attribute),
                          crop=False)
            if out is not None:
                write_scores(out, f"scores_{run.name}_by_{attribute}", groups, attribute)
    return all(state.complete for state in states)


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the core commands to the CLI."""

    @app.command(help=RUN_HELP)
    @with_run_options(CONCURRENCY)
    def run(
        config: RunConfig,
        by: Annotated[list[str] | None, typer.Option(
            help="Also score grouped by this case attribute (repeatable).")] = None,
        out: Annotated[Path | None, typer.Option(help="Write scores as JSON/CSV here.")]
        = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        html: Annotated[Path | None, typer.Option(
            "--report", help="Also write this run's HTML report (report.html) to this folder.")]
        = None,
        agent: Annotated[str | None, typer.Option(
            help="An agent run: this model acts as the agent over MCP and the reviewer reviews "
            "each of its tool calls (docs/agents.md): 'embedded' (SmolLM2), an http(s) base "
            "URL with --agent-model, an agent .yaml file, or module:function.")] = None,
        agent_model: Annotated[str | None, typer.Option(
            help="The agent's model name on an --agent base URL.")] = None,
        agent_server: Annotated[main_job.AgentServer, typer.Option(
            help="How the agent reaches the MCP server: in-process, or stdio (an 'authpairs "
            "mcp serve' child process).")] = main_job.AGENT_SERVER,
    ) -> None:
        import asyncio

        from authpairs.report.hints import unavailable_hint
        from authpairs.runs.api import run_async

        if agent is not None or config.agent is not None:
            from authpairs.commands.mcp import run_agent_and_report

            run_agent_and_report(config, agent=agent, agent_model=agent_model,
                                 server=agent_server, by=by or [], out=out, quiet=quiet,
                                 html=html)
            return
        if agent_model is not None:
            raise typer.BadParameter("--agent-model names the model of --agent URL: give "
                                     "--agent too.", param_hint="--agent-model")
        check_run_by(by or [], config)
        state = asyncio.run(run_async(config, progress=not quiet))
        print_run_summary(state)
        if state.stopped and not state.already_done + state.completed_now:
            raise typer.Exit(code=3)  # nothing recorded: no scores to show
        overall, _ = report_run(Path(config.records), state.run_id, by or [], out,
                                state.written_chain)
        hint = unavailable_hint(overall, config.reviewer.model_dump(mode="json"))
        if hint is not None:
            console.print(hint, markup=False, highlight=False, soft_wrap=True)
        if html is not None:
            from authpairs.commands.report import write_report
            from authpairs.report.request import ReportRequest

            write_report(ReportRequest(runs=[state.run_id], out=html,
                                       records=Path(config.records)))
        if state.infrastructure_failed or state.stopped:
            raise typer.Exit(code=3)

    @app.command()
    @checks_records
    def score(
        run_ids: Annotated[list[str], typer.Argument(
            help="Run id(s); several print one multi-run table (PATH::RUN_ID allowed).")],
        records: RecordsOpt = DEFAULT_RECORDS,
        by: Annotated[list[str] | None, typer.Option(
            help="Group by case attribute: family, domain, scenario, engine (repeatable).")]
        = None,
        out: Annotated[Path | None, typer.Option(help="Write JSON/CSV here.")] = None,
        require_complete: Annotated[bool, typer.Option(
            "--require-complete", help="Exit 1 when cases are missing.")] = False,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """Score stored runs (reads records only; read-only files work); several runs give one
        multi-run table.

        States n recorded of N expected and lists missing case ids; exit code 1 when a run is
        incomplete and --require-complete is given."""
        from authpairs.analysis.agent_runs import run_is_agent
        from authpairs.analysis.runref import agent_runs
        from authpairs.commands.analysis import score_agent_runs

        if agent_runs({a: run_is_agent(a, records) for a in run_ids}, "agent runs and guardrail "
                      "runs are scored apart: give them to separate 'authpairs score' calls"):
            # agent runs: the stack table (every offered case has an outcome)
            score_agent_runs(records, run_ids, by or [], out)
            return
        if len(run_ids) == 1 and "::" not in run_ids[0]:
            complete = report_run(records, run_ids[0], by or [], out)[1]
        else:
            complete = score_runs(records, run_ids, by or [], out)
        if require_complete and not complete:
            raise typer.Exit(code=1)

    @app.command("runs")
    def list_runs(records: RecordsOpt = DEFAULT_RECORDS) -> None:
        """List the runs in a records file: reviewer, dataset, cases recorded of expected, date."""
        from authpairs.report.tables import describe_run, runs_table
        from authpairs.runs.store import RecordStore

        with RecordStore(records, readonly=True) as store:
            rows = [describe_run(info, len(store.done_case_ids(info.run_id)))
                    for info in store.list_runs()]
        if not rows:
            console.print(f"{records}: no runs recorded yet", markup=False, highlight=False)
            return
        console.print(runs_table(rows, f"{records}: {len(rows)} runs"), crop=False)

    @app.command()
    def export(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        out: Annotated[Path, typer.Option(help="JSONL file to write.")],
        records: RecordsOpt = DEFAULT_RECORDS,
    ) -> None:
        """Export a run's records (with every attempt) to JSONL."""
        from authpairs.report.jsonl import export_jsonl
        from authpairs.runs.completeness import completeness
        from authpairs.runs.store import RecordStore

        with RecordStore(records, readonly=True) as store:
            info = store.get_run(run_id)
            if info is None:
                raise RecordsError(f"{records}: no run '{run_id}'")
            state = completeness(info, store.done_case_ids(run_id))
            lines = export_jsonl(store, run_id, out)
        console.print(Text(state.describe(), style="" if state.complete else "bold yellow"))
        console.print(Text(f"wrote {lines} lines to {out}"))

    @app.command("show-prompt")
    def show_prompt(
        case_id: Annotated[str, typer.Argument(help="Case id.")],
        dataset: Annotated[str, typer.Option(help="Dataset name or path.")] = main_job.DATASET,
        interface: Annotated[str, typer.Option(help="Interface.")] = main_job.INTERFACE,
    ) -> None:
        """Print exactly what a reviewer sees for one case, and the response format it gets.

        Message contents are written byte for byte (never re-wrapped), so piping to a file
        gives the exact prompt; the input hash covers the messages and the response format.
        """
        from authpairs.review.interfaces import get_interface
        from authpairs.tracks.registry import resolve_dataset

        cases = resolve_dataset(dataset).by_id()
        if case_id not in cases:
            raise DataError(f"no case '{case_id}' in dataset '{dataset}'",
                            hint="check the case id ('authpairs export RUN --out FILE' lists a "
                            "run's cases), or name its dataset with --dataset")
        chosen = get_interface(interface)
        request = chosen.request(cases[case_id].public)
        for message in request.messages:
            _section(f"message: {message['role']}")
            _verbatim(message["content"])
        if request.prompt is not None:
            _section("raw completion prompt")
            _verbatim(request.prompt)
        if request.prompt_token_ids is not None:
            _section("prompt token ids (sent; the prompt above is their decoding)")
            _verbatim(json.dumps(request.prompt_token_ids))
        _section("response format")
        if request.response_format is not None:
            _verbatim(json.dumps(request.response_format, indent=2, sort_keys=True))
        else:
            _verbatim(f"none: free text, parsed strictly against the {chosen.name} "
                      "interface's answer schema:\n"
                      + json.dumps(chosen.answer_schema, indent=2, sort_keys=True))
        _section(f"input sha256 {request.sha256()}")


def _section(title: str) -> None:
    """A separator line: a rule on a terminal, a plain marker line in pipes and files."""
    if sys.stdout.isatty():
        console.rule(title)
    else:
        sys.stdout.write(f"===== {title} =====\n")


def _verbatim(text: str) -> None:
    """Write ``text`` exactly (no wrapping, markup or tab expansion), then a newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
