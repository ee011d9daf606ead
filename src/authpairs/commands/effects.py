"""Effects command: ``data effects-check`` (runs every language effect through a sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from authpairs.analysis.notebook import TableView
from authpairs.commands.language import language_dataset
from authpairs.report.console import make_console

console = make_console()


def effects_check(
    generated: Annotated[bool, typer.Option(
        "--generated", help="Use 200 generated descriptors instead of the language dataset.")
    ] = False,
    root: Annotated[Path | None, typer.Option(
        help="Language scenario directory (default: packaged).")] = None,
) -> None:
    """Execute every language-track effect as ALLOW and as BLOCK in a throwaway sandbox and
    check that ALLOW is executed and verified, BLOCK changes nothing, and every audit passes."""
    from authpairs.enforce.selftest import audit_effects, generated_descriptors

    if generated:
        pairs = generated_descriptors()
    else:
        pairs = [(c.case_id, c.public.effect) for c in language_dataset(root=root).cases
                 if c.public.effect is not None]
    result = audit_effects(pairs)
    console.print(TableView("", ["effect type", "records"],
                            [[t, str(n)] for t, n in sorted(result.checked.items())]), crop=False)
    for failure in result.failures:
        console.print(f"[red]FAILED[/red] {failure}")
    if not result.ok:
        raise typer.Exit(1)
    console.print(f"all {sum(result.checked.values())} records passed their audit")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add ``data effects-check``."""
    data_app.command("effects-check")(effects_check)
