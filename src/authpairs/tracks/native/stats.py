"""Counts of a native-policy dataset per engine and split: lawful, forbidden, groups, encodings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from authpairs.cases.models import Case, Label


@dataclass
class SplitCounts:
    """Counts for one (engine, split) cell."""

    cases: int = 0
    lawful: int = 0
    forbidden: int = 0
    groups: set[str] = field(default_factory=set)
    encodings: set[str] = field(default_factory=set)
    duplicates: int = 0


def summarize(cases: Iterable[Case]) -> dict[tuple[str, str], SplitCounts]:
    """Counts keyed by (engine, split); engine and split 'all' hold the totals."""
    table: dict[tuple[str, str], SplitCounts] = {}
    for case in cases:
        engine = case.attributes.get("engine", "?")
        for key in ((engine, case.split), (engine, "all"), ("all", case.split), ("all", "all")):
            cell = table.setdefault(key, SplitCounts())
            cell.cases += 1
            if case.reference.label == Label.LAWFUL:
                cell.lawful += 1
            else:
                cell.forbidden += 1
            cell.groups.add(case.attributes.get("group", ""))
            cell.encodings.add(case.attributes.get("encoding", ""))
            cell.duplicates += len(case.reference.facts.get("duplicates", []))
    return table


def summary_markdown(cases: Iterable[Case]) -> str:
    """The counts as a markdown table."""
    table = summarize(cases)
    lines = ["| engine | split | cases | lawful | forbidden | groups | encodings | duplicates |",
             "|---|---|---|---|---|---|---|---|"]
    engines = [*sorted({e for e, _ in table if e != "all"}), "all"]
    for engine in engines:
        for split in ("dev", "test", "all"):
            cell = table.get((engine, split))
            if cell is None:
                continue
            lines.append(f"| {engine} | {split} | {cell.cases} | {cell.lawful} | "
                         f"{cell.forbidden} | {len(cell.groups)} | {len(cell.encodings)} | "
                         f"{cell.duplicates} |")
    return "\n".join(lines) + "\n"
