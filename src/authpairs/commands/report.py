"""The ``report`` command: one self-contained HTML page (figures, CSV tables) from run records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer
from typer.core import TyperCommand

from authpairs.analysis.defaults import DEFAULT_DRAWS, DEFAULT_RECORDS, DEFAULT_SEED
from authpairs.commands.audit import AllowUnverifiedOpt, RecordsOpt, checks_records, input_error
from authpairs.report.console import make_console

if TYPE_CHECKING:
    from authpairs.report.request import ReportRequest

console = make_console()

REPORT_HELP = (
    "Write DIR/report.html from run records only: the multi-run table, seed summaries, "
    "heatmaps by family/domain/scenario, the native engine x label table, group-level "
    "correctness, the contrast matrix (Holm), request transitions (--compare) and all-must-allow "
    "compositions with the cost grid (--compose). Figures are written as SVG and PNG, every "
    "table as CSV; the page opens from disk without a network.")


def spread_values(args: Sequence[str], options: Sequence[str]) -> list[str]:
    """Repeat each of ``options`` before every value that follows it up to the next option:
    ``--compose R1 R2 R3 --out D`` becomes ``--compose R1 --compose R2 --compose R3 --out D``.
    Everything after ``--`` is left as it is."""
    out: list[str] = []
    spreading: str | None = None
    for position, arg in enumerate(args):
        if arg == "--":
            return out + list(args[position:])
        if arg.startswith("-") and arg != "-":
            spreading = arg if arg in options else None
        elif spreading is not None and out[-1] != spreading:
            out.append(spreading)
        out.append(arg)
    return out


class MultiValueCommand(TyperCommand):
    """A command whose :attr:`multi_value_options` take every value up to the next option
    (click options take a fixed number of values; this spreads them before parsing)."""

    multi_value_options: ClassVar[tuple[str, ...]] = ("--compose",)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: the click Context
        """Spread the multi-value options, then parse as usual."""
        result: list[str] = super().parse_args(
            ctx, spread_values(args, self.multi_value_options))
        return result


def write_report(request: ReportRequest) -> Path:
    """Build the report and print where it is; bad input exits 2 with a message naming it."""
    from authpairs.report.build import build_report
    from authpairs.report.runset import ReportInputError

    try:
        result = build_report(request)
    except ReportInputError as exc:
        raise input_error(exc) from exc
    for name in result.incomplete:
        console.print(f"[yellow]warning:[/] run '{name}' is incomplete; the report marks it",
                      highlight=False)
    console.print(f"report: {result.html} ({len(result.runs)} runs, {len(result.sections)} "
                  f"sections, {result.seconds:.2f} s)", highlight=False, soft_wrap=True)
    return result.html


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the ``report`` command to the CLI."""

    @app.command(help=REPORT_HELP, cls=MultiValueCommand)
    @checks_records
    def report(
        runs: Annotated[list[str] | None, typer.Argument(
            help="Runs: RUN_ID or PATH::RUN_ID.")] = None,
        out: Annotated[Path, typer.Option("--out", help="Folder for report.html and files.")]
        = Path("runs/report/html"),
        records: RecordsOpt = DEFAULT_RECORDS,
        study: Annotated[Path | None, typer.Option(
            "--study", help="Study plan YAML or a `study --out` folder: its runs and its "
            "declared contrast family.")] = None,
        compare: Annotated[tuple[str, str] | None, typer.Option(
            "--compare", help="Request transitions from run A (before) to run B (after).")]
        = None,
        compose: Annotated[list[str] | None, typer.Option(
            "--compose", help="Reviewer runs for the all-must-allow composition: "
            "--compose R1 R2 R3 (every value up to the next option; R1,R2,R3 and a repeated "
            "option work too). Give the report's RUN arguments before it.")] = None,
        grid_file: Annotated[Path | None, typer.Option(
            "--grid", help="Cost-grid axes YAML (as for `compose --grid`).")] = None,
        draws: Annotated[int, typer.Option(help="Bootstrap draws.")] = DEFAULT_DRAWS,
        seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = DEFAULT_SEED,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """Write the HTML report of recorded runs."""
        from authpairs.analysis.cost import GridSpec, load_grid_spec
        from authpairs.report.request import ReportRequest

        grid = load_grid_spec(grid_file) if grid_file is not None else GridSpec()
        write_report(ReportRequest(
            runs=list(runs or []), out=out, records=records, study=study, compare=compare,
            compose=[r for item in compose or [] for r in item.split(",") if r], draws=draws,
            seed=seed, grid=grid))
