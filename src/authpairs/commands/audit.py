"""The ``audit`` command: check a stored run's archive and re-derive its results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from authpairs.errors import RecordsError
from authpairs.report.console import make_console

console = make_console()

AUDIT_HELP = (
    "Audit a stored run: re-check the SHA-256 chain of its records and the header, re-parse "
    "every stored raw output with the recorded interface and compare the decision, check the "
    "configuration, manifest and template hashes against the dataset and templates in hand, "
    "re-render every reviewer input, and re-run the effect verifiers' judgements on the stored "
    "observations. Exit code 0 when everything holds, 1 when anything is found, 2 on bad "
    "input. Works on read-only records files.")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the audit command to the CLI."""

    @app.command(help=AUDIT_HELP)
    def audit(
        run_id: Annotated[str, typer.Argument(help="Run id.")],
        records: Annotated[Path, typer.Option("--records", help="SQLite records file.")]
        = Path("runs/authpairs.sqlite"),
        dataset: Annotated[str | None, typer.Option(
            help="Dataset in hand (default: the one the run's configuration names).")] = None,
        out: Annotated[Path | None, typer.Option(help="Write the audit as JSON here.")]
        = None,
    ) -> None:
        """Audit a stored run (see the command help)."""
        from authpairs.api import RecordStore, audit_run, completeness, resolve_dataset

        with RecordStore(records, readonly=True) as store:
            info = store.get_run(run_id)
            if info is None:
                raise RecordsError(f"{records}: no run '{run_id}'")
            data = None
            if dataset is not None:
                resolved = info.config.get("resolved", {})
                data = resolve_dataset(dataset).select(resolved.get("split"),
                                                       resolved.get("limit"))
            report = audit_run(store, run_id, dataset=data)
            state = completeness(info, store.done_case_ids(run_id))
        console.print(Text(state.describe(), style="" if state.complete else "bold yellow"))
        checked = ", ".join(f"{n} {what}" for what, n in report.checked.items())
        console.print(Text(f"audit of run {run_id} in {records}: checked {checked}"))
        for skipped in report.skipped:
            console.print(Text(f"skipped: {skipped}", style="yellow"))
        for finding in report.findings:
            console.print(Text(str(finding), style="red"))
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n",
                           encoding="utf-8")
        if report.ok:
            console.print(Text("audit passed: records intact, every result re-derived",
                               style="green"))
            raise typer.Exit(0)
        console.print(Text(f"audit FAILED: {len(report.findings)} finding(s)", style="bold red"))
        raise typer.Exit(1)
