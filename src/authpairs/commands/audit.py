"""The ``audit`` command: check a stored run's archive and re-derive its results.

Also :func:`input_error`, the one ``error:`` line (with its hint) of the commands that report
an input error themselves.

Also ``--allow-unverified`` for the commands that decide on records (score, compare, study,
contrasts, compose, gate, report): every run they load is checked against its SHA-256 chain
where runs are loaded (``runref.check_verified``), and a run that fails is refused with
the run, the file and the first failing record named. :func:`checks_records` wraps such a
command so that, given ``--allow-unverified``, the run is used instead: a warning naming it is
printed when it is loaded and again after the command's output, and every JSON/CSV file (and the
HTML report) written meanwhile names it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.text import Text

from authpairs.analysis.defaults import DEFAULT_RECORDS
from authpairs.errors import RecordsError, error_message
from authpairs.report.console import make_console

if TYPE_CHECKING:
    from authpairs.analysis.runref import UnverifiedRun

console = make_console()

RecordsOpt = Annotated[Path, typer.Option(
    "--records", help="SQLite records file: where a bare RUN_ID is (PATH::RUN_ID names another).")]
AllowUnverifiedOpt = Annotated[bool, typer.Option(
    "--allow-unverified", help="Use runs whose records fail the integrity check (SHA-256 "
    "chain) instead of refusing them; every output then says so.")]

F = TypeVar("F", bound=Callable[..., Any])


def input_error(problem: BaseException | str, code: int = 2,
                hint: str | None = None) -> typer.Exit:
    """Print ``problem`` on stderr as one ``error:`` line ending in its hint (``hint``, else
    the error's own, else the general one; see :mod:`authpairs.errors`); returns the exit to
    raise."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    command = ctx.command_path if ctx is not None else "authpairs"
    typer.echo(f"error: {' '.join(error_message(problem, command, hint).split())}", err=True)
    return typer.Exit(code)


def _warn(run: UnverifiedRun) -> None:
    console.print(Text(f"warning: {run.describe()}; used because of --allow-unverified",
                       style="bold red"))


def checks_records(command: F) -> F:
    """Run ``command`` with unverified runs allowed when its ``allow_unverified`` parameter is
    true (refused otherwise), warning about each one used."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from authpairs.analysis.runref import unverified_allowed

        with unverified_allowed(bool(kwargs.get("allow_unverified")), notify=_warn) as seen:
            try:
                return command(*args, **kwargs)
            finally:
                if seen:
                    names = ", ".join(run.run_id for run in seen)
                    console.print(Text(f"UNVERIFIED: the results above use {len(seen)} run(s) "
                                       f"whose records fail the integrity check ({names}); "
                                       "run 'authpairs audit' on them before deciding anything",
                                       style="bold red"))

    return wrapper  # type: ignore[return-value]


AUDIT_HELP = (
    "Audit a stored run: re-check the SHA-256 chain of its records and the header's seal over "
    "its chain head and length, check that every expected case has a record, re-parse every "
    "stored raw output with the reviewer that ran (rebuilt from the stored configuration; "
    "nothing is called) and compare the decision, check the "
    "configuration, manifest and template hashes against the dataset and templates in hand, "
    "re-render every reviewer input, and re-run the effect verifiers' judgements on the stored "
    "observations. An agent run's tool calls are audited too: each call's SHA-256, what it "
    "proposed, its review against the chained attempts, and each case record against the "
    "case's decisive call. Exit code 0 when everything holds, 1 when anything is found (a "
    "missing case too, unless --allow-incomplete), 2 on bad input. Works on read-only records "
    "files.")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the audit command to the CLI."""

    @app.command(help=AUDIT_HELP)
    def audit(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        records: RecordsOpt = DEFAULT_RECORDS,
        dataset: Annotated[str | None, typer.Option(
            help="Dataset in hand (default: the one the run's configuration names).")] = None,
        out: Annotated[Path | None, typer.Option(help="Write the audit as JSON here.")]
        = None,
        allow_incomplete: Annotated[bool, typer.Option(
            "--allow-incomplete", help="List missing cases without failing the audit.")]
        = False,
    ) -> None:
        """Audit a stored run (see the command help)."""
        from authpairs.agent.audit import audit_run
        from authpairs.report.files import write_json
        from authpairs.runs.completeness import completeness
        from authpairs.runs.store import RecordStore
        from authpairs.tracks.registry import resolve_dataset

        with RecordStore(records, readonly=True) as store:
            info = store.get_run(run_id)
            if info is None:
                raise RecordsError(f"{records}: no run '{run_id}'")
            data = None
            if dataset is not None:
                resolved = info.config.get("resolved", {})
                data = resolve_dataset(dataset).select(resolved.get("split"),
                                                       resolved.get("limit"))
            report = audit_run(store, run_id, dataset=data, allow_incomplete=allow_incomplete)
            state = completeness(info, store.done_case_ids(run_id))
        if info.is_agent_run:
            # An agent run has a case record per case with a reviewed call, not per case.
            served = len(info.expected_case_ids)
            console.print(Text(f"agent run: {served} cases served, {state.recorded} with a "
                               "case record (a case without a reviewed call has none)"))
        else:
            console.print(Text(state.describe(), style="" if state.complete else "bold yellow"))
        checked = ", ".join(f"{n} {what}" for what, n in report.checked.items())
        console.print(Text(f"audit of run {run_id} in {records}: checked {checked}"))
        if report.schema_version < 3:
            console.print(Text(f"records schema version {report.schema_version}: the run header "
                               "has no seal over its chain head and length; a truncated run "
                               "shows as missing cases", style="yellow"))
        if report.missing and allow_incomplete:
            console.print(Text(f"{len(report.missing)} missing case(s) allowed by "
                               "--allow-incomplete", style="yellow"))
        for skipped in report.skipped:
            console.print(Text(f"skipped: {skipped}", style="yellow"))
        for finding in report.findings:
            console.print(Text(str(finding), style="red"))
        if out is not None:
            write_json(out, report.to_dict())
        if report.ok:
            what = ("records intact, every result re-derived" if not report.missing else
                    "records intact, every recorded result re-derived; run INCOMPLETE")
            console.print(Text(f"audit passed: {what}", style="green"))
            raise typer.Exit(0)
        console.print(Text(f"audit FAILED: {len(report.findings)} finding(s)", style="bold red"))
        raise typer.Exit(1)
