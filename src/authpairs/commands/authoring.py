"""Authoring commands for the language track: ``data new-scenario`` and the label validation
kit ``data annotate export`` / ``data annotate score``. Thin wrappers over
:mod:`authpairs.tracks.language.skeleton` and :mod:`authpairs.tracks.language.annotate`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from authpairs.commands.audit import input_error
from authpairs.commands.language import RootOpt, language_dataset

if TYPE_CHECKING:
    from authpairs.cases.models import PublicCase

annotate_app = typer.Typer(help="Blind annotation sheets and their scoring (paper §3.2).",
                           no_args_is_help=True)


def new_scenario(
    domain: Annotated[str, typer.Option(help="payments, clinical, software, education or "
                                             "documents.")],
    family: Annotated[str, typer.Option(help="One of the 14 family keys.")],
    out: Annotated[Path, typer.Option(help="Scenario folder to write into (<out>/<domain>/).")],
    slug: Annotated[str | None, typer.Option(help="File name stem (default: new-<family>-"
                                                  "scenario).")] = None,
) -> None:
    """Write a commented scenario skeleton; fill in every TODO, then run
    'authpairs data check --root OUT'."""
    from authpairs.tracks.language.skeleton import write_skeleton

    try:
        path = write_skeleton(out, domain, family, slug)
    except (ValueError, FileExistsError) as exc:
        raise input_error(exc, 1) from exc
    typer.echo(f"wrote {path}\nfill in every TODO, then: authpairs data check --root {out}")


def render_public(case: PublicCase) -> str:
    """A public case as the reviewer models see it (the packaged case template)."""
    from authpairs.review.templates import render

    return render("case.j2", **case.model_dump(mode="python"))


@annotate_app.command("export")
def annotate_export(
    out: Annotated[Path, typer.Option(help="Folder for the sheets handed to annotators.")],
    key: Annotated[Path | None, typer.Option(
        help="Where to write the item key (default: <out>.key.json, outside the sheets).")]
    = None,
    root: RootOpt = None,
    seed: Annotated[int, typer.Option(help="Shuffle seed.")] = 0,
) -> None:
    """Write blind annotation sheets: the public view of every context, shuffled, numbered
    item-1..N (no case ids, labels or scenario names), and a blank answers.csv."""
    from authpairs.tracks.language.annotate import AnnotationError, export_sheets

    key_path = key or out.with_name(out.name + ".key.json")
    try:
        n_items = export_sheets(language_dataset(root=root), out, key_path, render_public, seed)
    except AnnotationError as exc:
        raise input_error(exc, 1) from exc
    typer.echo(f"wrote {n_items} items to {out} (items.md, answers.csv); key: {key_path} "
               "(keep it away from annotators)")


@annotate_app.command("score")
def annotate_score(
    sheets: Annotated[list[Path], typer.Argument(help="Filled answer files, one per "
                                                      "annotator.")],
    key: Annotated[Path, typer.Option(help="The key written by 'data annotate export'.")],
    root: RootOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Agreement with the reference labels, Fleiss' kappa, unanimity and the disagreements to
    adjudicate."""
    from authpairs.tracks.language.annotate import (
        AnnotationError,
        read_answers,
        read_key,
        score_answers,
    )

    try:
        item_key = read_key(key)
        answers = {sheet.stem: read_answers(sheet, set(item_key)) for sheet in sheets}
        if len(answers) != len(sheets):
            raise AnnotationError("two answer files have the same name; name them after "
                                  "their annotators")
        score = score_answers(language_dataset(root=root), item_key, answers)
    except AnnotationError as exc:
        raise input_error(exc, 1) from exc
    if as_json:
        typer.echo(json.dumps(score.to_dict(), indent=2))
        return
    typer.echo(score.summary())
    for name in score.annotators:
        typer.echo(f"  {name}: {score.agreement[name]}/{score.n_items} agree with the reference")
    typer.echo(f"  unanimous and matching the reference: {score.unanimous_matching}/"
               f"{score.unanimous}")
    for item in score.disagreements:
        votes = ", ".join(f"{name}={vote}" for name, vote in item.votes.items())
        typer.echo(f"adjudicate {item.item} ({item.case_id}): {votes}; majority "
                   f"{item.majority or 'tied'}; reference {item.reference}")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add ``data new-scenario`` and the ``data annotate`` group."""
    data_app.command("new-scenario")(new_scenario)
    data_app.add_typer(annotate_app, name="annotate")
