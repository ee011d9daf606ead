"""``authpairs guardrails``: every reviewer a run can use, its output contract and origin."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import typer

from authpairs.analysis.notebook import TableView
from authpairs.report.console import make_console

console = make_console()

BASELINES = {"always-allow": "calls no model; always ALLOW",
             "always-block": "calls no model; always BLOCK"}


class ReviewerListing(NamedTuple):
    """One row of the listing."""

    name: str
    kind: str
    origin: str
    contract: str


def list_reviewers() -> list[ReviewerListing]:
    """Interfaces, guardrails and baselines; a plugin that fails to load is listed with why."""
    from authpairs.review.guardrails.registry import GUARDRAILS
    from authpairs.review.interfaces import INTERFACES

    rows: list[ReviewerListing] = []
    for registry, kind, use in ((INTERFACES, "interface", "--interface"),
                                (GUARDRAILS, "guardrail", "--guardrail")):
        for entry in registry.entries():
            try:
                contract = str(getattr(registry.get(entry.name), "output_contract", "")
                               ) or "(not stated)"
            except Exception as exc:  # a plugin that fails to import is listed, not fatal
                contract = f"[fails to load] {exc}"
            rows.append(ReviewerListing(entry.name, f"{kind} ({use})", entry.origin, contract))
    rows.extend(ReviewerListing(name, "baseline (--baseline)", "built-in", contract)
                for name, contract in BASELINES.items())
    return rows


def guardrails(
    plain: Annotated[bool, typer.Option("--plain", help="Tab-separated, no table.")] = False,
    card: Annotated[str | None, typer.Option(
        "--card", metavar="NAME", help="Print the format card of a native interface or of "
        "nemo-self-check: sources, prompt, answer grammar, the vendor's and the paper's "
        "sampling and output limit.")] = None,
) -> None:
    """List every reviewer: interfaces, guardrails (built-in and plugins) and baselines."""
    if card is not None:
        from authpairs.review.guardrails.cards import read_card

        typer.echo(read_card(card), nl=False)
        return
    rows = list_reviewers()
    if plain:
        for row in rows:
            typer.echo("\t".join(row))
        return
    console.print(TableView("", ["name", "kind", "origin", "output contract"], rows,
                            numeric=[False] * 4), crop=False)
    console.print("Any 'package.module:callable' also works: authpairs run --guardrail "
                  "mypkg.guard:review (see docs/guardrails.md).")


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add ``guardrails``."""
    app.command("guardrails")(guardrails)
