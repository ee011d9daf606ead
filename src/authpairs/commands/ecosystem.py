"""Ecosystem commands: ``import-inspect`` (Inspect AI log -> run records) and
``data export-hf`` (a dataset -> Hugging Face Parquet folder with a dataset card)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from authpairs.analysis.defaults import DEFAULT_RECORDS
from authpairs.commands.audit import RecordsOpt
from authpairs.errors import MissingDependencyError
from authpairs.report.console import make_console

console = make_console()


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add ``import-inspect`` to the CLI and ``export-hf`` to the ``data`` group."""

    @app.command("import-inspect")
    def import_inspect(
        log: Annotated[Path, typer.Argument(help="Inspect eval log (.eval or .json).")],
        run_id: Annotated[str, typer.Option("--run-id", help="Run id for the records.")],
        records: RecordsOpt = DEFAULT_RECORDS,
    ) -> None:
        """Turn an Inspect AI log of an authpairs task into authpairs run records.

        Samples are matched to cases by SHA-256 of the exact input; a log of another task,
        dataset version or prompt is refused and nothing is written. Each epoch of the eval
        (--epochs N) becomes a run of its own, RUN_ID-e1 .. RUN_ID-eN (RUN_ID for one epoch),
        with the expected cases and a configuration that 'authpairs audit' verifies.
        """
        try:
            from authpairs.integrations.inspect_import import import_inspect_log
        except ImportError as exc:
            raise MissingDependencyError("inspect_ai", "inspect", "import-inspect") from exc
        runs = import_inspect_log(log, run_id, records)
        if len(runs) > 1:
            console.print(f"{len(runs)} epochs: one run per epoch (repetitions of one "
                          "configuration)", highlight=False)
        for run in runs:
            console.print(f"run [bold]{run.run_id}[/] in {records}: {run.samples} samples, "
                          f"{run.imported} records written, {run.already_present} already "
                          f"present, {run.expected} cases expected", highlight=False)
            if run.errored:
                console.print(f"[yellow]{len(run.errored)} samples ended in an error and have "
                              f"no record: {', '.join(run.errored[:10])}[/]", highlight=False)

    @data_app.command("export-hf")
    def export_hf_cmd(
        dataset: Annotated[str, typer.Option(
            "--dataset", help="'language', 'native', 'examples', a .jsonl or exported folder.")],
        out: Annotated[Path, typer.Option("--out", help="Folder to write.")],
        force: Annotated[bool, typer.Option(
            "--force", help="Replace an export in a folder that already holds files.")]
        = False,
    ) -> None:
        """Write a dataset as Parquet (configs 'public' and 'reference') with a dataset card."""
        from authpairs.cases.hf import export_hf
        from authpairs.tracks.registry import resolve_dataset

        counts = export_hf(resolve_dataset(dataset), out, force=force)
        sizes = ", ".join(f"{split} {n}" for split, n in counts.items())
        console.print(f"wrote {out}: configs public + reference ({sizes}) and README.md",
                      highlight=False)
