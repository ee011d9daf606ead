"""Language-track commands: ``data check``, ``data build-language``, ``data language-stats``,
``data baseline-classifier``. Thin wrappers over :mod:`authpairs.tracks.language`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from authpairs.analysis.notebook import TableView
from authpairs.commands.audit import input_error

if TYPE_CHECKING:
    from authpairs.cases.dataset import Dataset

_SPLITS = ("dev", "test", "all")
RootOpt = Annotated[Path | None, typer.Option(help="Scenario directory (default: packaged).")]


def language_dataset(split: str | None = None, root: Path | None = None,
                     name: str | None = None) -> Dataset:
    """The language track's cases; a scenario error is one ``error:`` line that points to
    ``authpairs data check``, with exit code 1."""
    from authpairs.tracks.language.cases import load_language_dataset
    from authpairs.tracks.language.loader import ScenarioError

    try:
        return load_language_dataset(split, root=root, name=name)
    except ScenarioError as exc:
        raise input_error(exc, 1, hint="run 'authpairs data check' for the full report") from exc


def _split(value: str) -> str:
    if value not in _SPLITS:
        raise typer.BadParameter(f"split must be one of {', '.join(_SPLITS)}")
    return value


def check(
    root: RootOpt = None,
    distribution: Annotated[bool | None, typer.Option(
        "--distribution/--no-distribution",
        help="Check the packaged dataset's counts against docs/definitions.md (default: only "
             "for the packaged scenarios, not for a custom --root).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Validate the language scenarios: format, quotes, evaluators, defined counts, giveaways.

    Exits 1 on any error; every error names the file, scenario, context and field."""
    from authpairs.tracks.language.checks import check_language

    console = Console()
    report = check_language(root, distribution=distribution)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        if not report.ok:
            raise typer.Exit(1)
        return
    console.print(f"[bold]Language track[/bold]: {report.n_files} scenario files, "
                  f"{report.n_valid} valid; {report.evaluated_contexts} contexts evaluated, "
                  f"{report.determinate_reproduced} determinate labels reproduced by both "
                  f"evaluators; {len(report.unresolved)} unresolved; "
                  f"{report.different_paths} scenarios with two different lawful paths.")
    tables = (("Domains (scenarios/dev inputs/test inputs)", report.domain_rows,
               ("domain", "scenarios", "dev", "test", "want")),
              ("Families (inputs)", report.family_rows, ("family", "dev", "test", "want")))
    for title, rows, columns in tables:
        if report.domain_rows:
            console.print(TableView(title, columns, [[str(row[c]) for c in columns]
                                                     for row in rows]), crop=False)
    for item in report.unresolved:
        console.print("[yellow]unresolved[/yellow] " + escape(
            f"{item.path} {item.context_id} ({item.label}): {item.reason} [{item.detail}]"),
            markup=True)
    for issue in report.errors:
        # escaped (expressions contain [lists]) and not wrapped (keeps the caret under its column)
        console.print(f"[red]error[/red] {escape(str(issue))}", markup=True, highlight=False,
                      soft_wrap=True)
    if report.ok:
        console.print("[green]OK[/green]: no errors.")
    else:
        console.print(f"[red]{len(report.errors)} error(s).[/red]")
        raise typer.Exit(1)


def build_language(
    out: Annotated[Path, typer.Option("--out", help="JSONL file to write.")],
    split: Annotated[str, typer.Option(callback=_split, help="dev, test or all.")] = "all",
    root: RootOpt = None,
    name: Annotated[str | None, typer.Option(
        help="Dataset name for the manifest and case sources (default: 'language', or the "
             "--root folder's name).")] = None,
) -> None:
    """Export the language-track cases as canonical JSONL and print the manifest."""
    dataset = language_dataset(split, root=root, name=name)
    dataset.write_jsonl(out)
    typer.echo(json.dumps(dataset.manifest().to_dict(), indent=2))


def language_stats(
    split: Annotated[str, typer.Option(callback=_split, help="dev, test or all.")] = "all",
    root: RootOpt = None,
) -> None:
    """Print the dataset's counts tables as markdown (for the dataset card)."""
    from authpairs.tracks.language.stats import counts_markdown

    typer.echo(counts_markdown(language_dataset(split, root=root)))


def baseline_classifier(
    split: Annotated[str, typer.Option(callback=_split, help="dev, test or all.")] = "test",
    folds: Annotated[int, typer.Option(min=2, help="GroupKFold folds.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Bag-of-words classifier baseline with scenario-grouped cross-validation."""
    from authpairs.tracks.language.baseline import classifier_baseline

    result = classifier_baseline(language_dataset(), split=split, n_folds=folds)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    verdict = "meets" if result.meets_target else "EXCEEDS"
    typer.echo(f"bag-of-words baseline on {result.split}: accuracy {result.accuracy:.3f} "
               f"({result.correct}/{result.n_cases}, {result.n_scenarios} scenarios, "
               f"{result.n_folds}-fold GroupKFold); {verdict} the <= 60% target")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the language-track commands to the ``data`` group."""
    data_app.command("check")(check)
    data_app.command("build-language")(build_language)
    data_app.command("language-stats")(language_stats)
    data_app.command("baseline-classifier")(baseline_classifier)
