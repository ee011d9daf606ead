"""Core commands: ``run``, ``score``, ``runs``, ``export``, ``show-prompt``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from authpairs.analysis.scoring import score_by, score_records
from authpairs.errors import DataError, RecordsError
from authpairs.report.console import make_console
from authpairs.report.jsonl import export_jsonl
from authpairs.report.tables import print_scores, write_scores
from authpairs.review.interfaces import get_interface
from authpairs.runs.api import run_async
from authpairs.runs.audit import verify_chain
from authpairs.runs.completeness import completeness
from authpairs.runs.config import RunConfig, config_from_dict, load_config
from authpairs.runs.orchestrator import RunProgress
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import resolve_dataset

console = make_console()
RecordsOpt = Annotated[Path, typer.Option("--records", help="SQLite records file.")]
DEFAULT_RECORDS = Path("runs/authpairs.sqlite")


def _overrides(**options: Any) -> dict[str, Any]:
    return {key: value for key, value in options.items() if value is not None}


def build_config(config_file: Path | None, overrides: dict[str, Any]) -> RunConfig:
    """The run configuration from an optional YAML file plus command-line overrides."""
    if config_file is not None:
        return load_config(config_file, overrides)
    return config_from_dict({}, overrides)


def report_run(records_path: Path, run_id: str, by: list[str], out: Path | None) -> bool:
    """Print (and optionally write) the scores of a stored run; returns True when complete.

    The header line states ``n recorded of N expected`` and lists missing case ids; a broken
    record chain is reported before the scores (run ``authpairs audit`` for the details).
    """
    with RecordStore(records_path, readonly=True) as store:
        info = store.get_run(run_id)
        if info is None:
            raise RecordsError(f"{records_path}: no run '{run_id}'")
        records = store.case_records(run_id)
        chain = verify_chain(store, run_id)
    state = completeness(info, (r.case_id for r in records))
    if not chain.ok:
        console.print(Text(f"warning: the records of run {run_id} fail the integrity check "
                           f"({len(chain.findings)} finding(s), first: {chain.findings[0]}); "
                           f"run 'authpairs audit {run_id}'", style="bold red"))
    style = "" if state.complete else "bold yellow"
    console.print(Text(state.describe(), style=style))
    overall = {"all": score_records(records)}
    print_scores(console, escape(f"{run_id}: {len(records)} of {state.expected} cases"),
                 overall, "cases")
    extra: dict[str, object] = {"expected": state.expected, "recorded": state.recorded,
                                "complete": state.complete, "missing": list(state.missing),
                                "integrity_ok": chain.ok}
    if out is not None:
        write_scores(out, "scores", overall, "cases", extra=extra)
    for attribute in by:
        groups = score_by(records, attribute)
        print_scores(console, escape(f"by {attribute}"), groups, escape(attribute))
        if out is not None:
            write_scores(out, f"scores_by_{attribute}", groups, attribute, extra=extra)
    return state.complete


def print_run_summary(state: RunProgress) -> None:
    """What this invocation did, with the causes of infrastructure failures."""
    console.print(Text(f"run {state.run_id}: {state.total} cases, {state.already_done} already "
                       f"recorded, {state.completed_now} new"))
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


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the core commands to the CLI."""

    @app.command()
    def run(
        config_file: Annotated[Path | None, typer.Option("--config", help="YAML run config.")]
        = None,
        dataset: Annotated[str | None, typer.Option(
            help="'language', 'native', 'examples' or a .jsonl path.")] = None,
        split: Annotated[str | None, typer.Option(help="dev, test or all.")] = None,
        limit: Annotated[int | None, typer.Option(help="First N cases only.")] = None,
        interface: Annotated[str | None, typer.Option(help="direct, structured, schema.")]
        = None,
        backend: Annotated[str | None, typer.Option(help="local, openai, replay.")] = None,
        base_url: Annotated[list[str] | None, typer.Option(
            "--base-url", help="OpenAI-compatible base URL (repeat for several).")] = None,
        model: Annotated[str | None, typer.Option(help="Model name for the server.")] = None,
        baseline: Annotated[str | None, typer.Option(
            help="always-allow or always-block instead of a model.")] = None,
        seed: Annotated[int | None, typer.Option(help="Sampling seed.")] = None,
        temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
        max_tokens: Annotated[int | None, typer.Option(help="Output token limit.")] = None,
        concurrency: Annotated[int | None, typer.Option(help="Cases in flight.")] = None,
        enforce: Annotated[bool | None, typer.Option(
            "--enforce/--no-enforce", help="Execute ALLOWed effects in a sandbox.")] = None,
        run_id: Annotated[str | None, typer.Option(help="Run id (default: config hash).")]
        = None,
        records: Annotated[Path | None, typer.Option(help="SQLite records file.")] = None,
        deadline: Annotated[float | None, typer.Option(
            help="Per-request deadline in seconds (default 600).", min=0.001)] = None,
        by: Annotated[list[str] | None, typer.Option(
            help="Also score grouped by this case attribute (repeatable).")] = None,
        out: Annotated[Path | None, typer.Option(help="Write scores as JSON/CSV here.")]
        = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    ) -> None:
        """Run (or resume) a review run, then print its scores.

        Defaults: the language dev split, schema interface, the embedded local server with
        SmolLM2, records in runs/authpairs.sqlite, effects enforced in a sandbox. The main job
        is ``authpairs run --config configs/local-smollm2.yaml``.
        """
        overrides = _overrides(**{
            "dataset": dataset, "split": split, "limit": limit,
            "reviewer.interface": interface, "reviewer.backend.kind": backend,
            "reviewer.backend.base_urls": base_url, "reviewer.backend.model": model,
            "reviewer.baseline": baseline, "reviewer.sampling.seed": seed,
            "reviewer.sampling.temperature": temperature,
            "reviewer.sampling.max_tokens": max_tokens, "concurrency": concurrency,
            "enforce": enforce, "run_id": run_id, "reviewer.backend.deadline_s": deadline,
            "records": str(records) if records else None})
        config = build_config(config_file, overrides)
        state = asyncio.run(run_async(config, progress=not quiet))
        print_run_summary(state)
        report_run(Path(config.records), state.run_id, by or [], out)
        if state.infrastructure_failed:
            raise typer.Exit(code=3)

    @app.command()
    def score(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        records: RecordsOpt = DEFAULT_RECORDS,
        by: Annotated[list[str] | None, typer.Option(
            help="Group by case attribute: family, domain, scenario, engine (repeatable).")]
        = None,
        out: Annotated[Path | None, typer.Option(help="Write JSON/CSV here.")] = None,
        require_complete: Annotated[bool, typer.Option(
            "--require-complete", help="Exit 1 when cases are missing.")] = False,
    ) -> None:
        """Score a stored run (reads records only; read-only files work).

        States n recorded of N expected and lists missing case ids; exit code 1 when the run is
        incomplete and --require-complete is given."""
        complete = report_run(records, run_id, by or [], out)
        if require_complete and not complete:
            raise typer.Exit(code=1)

    @app.command("runs")
    def list_runs(records: RecordsOpt = DEFAULT_RECORDS) -> None:
        """List the runs in a records file."""
        with RecordStore(records, readonly=True) as store:
            for info in store.list_runs():
                state = completeness(info, store.done_case_ids(info.run_id))
                flag = "" if state.complete else "  INCOMPLETE"
                console.print(Text(f"{info.run_id}  {info.created_at}  {state.recorded}/"
                                   f"{state.expected} cases  {info.manifest.get('name')}{flag}"))

    @app.command()
    def export(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        out: Annotated[Path, typer.Option(help="JSONL file to write.")],
        records: RecordsOpt = DEFAULT_RECORDS,
    ) -> None:
        """Export a run's records (with every attempt) to JSONL."""
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
        dataset: Annotated[str, typer.Option(help="Dataset name or path.")] = "language",
        interface: Annotated[str, typer.Option(help="Interface.")] = "schema",
    ) -> None:
        """Print exactly what a reviewer sees for one case."""
        cases = resolve_dataset(dataset).by_id()
        if case_id not in cases:
            raise DataError(f"no case '{case_id}' in dataset '{dataset}'")
        request = get_interface(interface).render(cases[case_id].public)
        for message in request.messages:
            console.rule(message["role"])
            console.print(message["content"], markup=False, highlight=False)
        console.rule(f"input sha256 {request.sha256()}")
