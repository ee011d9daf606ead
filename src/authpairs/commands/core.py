"""Core commands: ``run``, ``score``, ``runs``, ``export``, ``show-prompt``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from authpairs.analysis.scoring import score_by, score_records
from authpairs.cases.sources import resolve_dataset
from authpairs.report.console import make_console
from authpairs.report.tables import print_scores, write_scores
from authpairs.review.interfaces import get_interface
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, config_from_dict, load_config
from authpairs.report.jsonl import export_jsonl
from authpairs.runs.store import RecordStore

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


def report_run(records_path: Path, run_id: str, by: list[str], out: Path | None) -> None:
    """Print (and optionally write) the scores of a stored run."""
    with RecordStore(records_path) as store:
        if store.get_run(run_id) is None:
            raise typer.BadParameter(f"{records_path}: no run '{run_id}'")
        records = store.case_records(run_id)
    overall = {"all": score_records(records)}
    print_scores(console, f"{run_id}: {len(records)} cases", overall, "cases")
    if out is not None:
        write_scores(out, "scores", overall, "cases")
    for attribute in by:
        groups = score_by(records, attribute)
        print_scores(console, f"by {attribute}", groups, attribute)
        if out is not None:
            write_scores(out, f"scores_by_{attribute}", groups, attribute)


def score_runs(records_path: Path, addresses: list[str], by: list[str], out: Path | None) -> None:
    """Print (and optionally write) the multi-run table, then any per-attribute tables."""
    from authpairs.analysis.runref import RunNotFoundError
    from authpairs.report.files import write_csv, write_json
    from authpairs.report.measures import run_rows
    from authpairs.report.runset import ReportInputError, load_report_runs
    from authpairs.report.tables import print_runs

    try:
        runs = load_report_runs(addresses, records_path)
    except (RunNotFoundError, ReportInputError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    rows = run_rows(runs)
    print_runs(console, rows)
    if out is not None:
        write_csv(out / "runs.csv", rows)
        write_json(out / "runs.json", rows)
    for run in runs:
        for attribute in by:
            groups = score_by(run.records, attribute)
            print_scores(console, f"{run.name} by {attribute}", groups, attribute)
            if out is not None:
                write_scores(out, f"scores_{run.name}_by_{attribute}", groups, attribute)


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
        by: Annotated[list[str] | None, typer.Option(
            help="Also score grouped by this case attribute (repeatable).")] = None,
        out: Annotated[Path | None, typer.Option(help="Write scores as JSON/CSV here.")]
        = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        html: Annotated[Path | None, typer.Option(
            "--report", help="Also write this run's HTML report (report.html) to this folder.")]
        = None,
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
            "enforce": enforce, "run_id": run_id,
            "records": str(records) if records else None})
        config = build_config(config_file, overrides)
        state = asyncio.run(run_async(config, progress=not quiet))
        console.print(f"run [bold]{state.run_id}[/]: {state.total} cases, "
                      f"{state.already_done} already recorded, {state.completed_now} new")
        if state.infrastructure_failed:
            console.print(f"[yellow]{len(state.infrastructure_failed)} cases had only "
                          "infrastructure failures; re-run the same command to retry them[/]")
        if state.audit_failures:
            console.print(f"[red]effect-audit failures: {', '.join(state.audit_failures)}[/]")
        report_run(Path(config.records), state.run_id, by or [], out)
        if html is not None:
            from authpairs.commands.report import write_report
            from authpairs.report.request import ReportRequest

            write_report(ReportRequest(runs=[state.run_id], out=html,
                                       records=Path(config.records)))
        if state.infrastructure_failed:
            raise typer.Exit(code=3)

    @app.command()
    def score(
        run_ids: Annotated[list[str], typer.Argument(
            help="Run id(s); several print one multi-run table (PATH::RUN_ID allowed).")],
        records: RecordsOpt = DEFAULT_RECORDS,
        by: Annotated[list[str] | None, typer.Option(
            help="Group by case attribute: family, domain, scenario, engine (repeatable).")]
        = None,
        out: Annotated[Path | None, typer.Option(help="Write JSON/CSV here.")] = None,
    ) -> None:
        """Score stored runs (reads records only); several runs give one multi-run table."""
        if len(run_ids) == 1 and "::" not in run_ids[0]:
            report_run(records, run_ids[0], by or [], out)
            return
        score_runs(records, run_ids, by or [], out)

    @app.command("runs")
    def list_runs(records: RecordsOpt = DEFAULT_RECORDS) -> None:
        """List the runs in a records file."""
        with RecordStore(records) as store:
            for info in store.list_runs():
                done = len(store.done_case_ids(info.run_id))
                console.print(f"{info.run_id}  {info.created_at}  {done}/"
                              f"{info.manifest.get('n_cases')} cases  "
                              f"{info.manifest.get('name')}")

    @app.command()
    def export(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        out: Annotated[Path, typer.Option(help="JSONL file to write.")],
        records: RecordsOpt = DEFAULT_RECORDS,
    ) -> None:
        """Export a run's records (with every attempt) to JSONL."""
        with RecordStore(records) as store:
            lines = export_jsonl(store, run_id, out)
        console.print(f"wrote {lines} lines to {out}")

    @app.command("show-prompt")
    def show_prompt(
        case_id: Annotated[str, typer.Argument(help="Case id.")],
        dataset: Annotated[str, typer.Option(help="Dataset name or path.")] = "language",
        interface: Annotated[str, typer.Option(help="Interface.")] = "schema",
    ) -> None:
        """Print exactly what a reviewer sees for one case."""
        cases = resolve_dataset(dataset).by_id()
        if case_id not in cases:
            raise typer.BadParameter(f"no case '{case_id}' in dataset '{dataset}'")
        request = get_interface(interface).render(cases[case_id].public)
        for message in request.messages:
            console.rule(message["role"])
            console.print(message["content"], markup=False, highlight=False)
        console.rule(f"input sha256 {request.sha256()}")
