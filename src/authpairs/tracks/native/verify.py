"""Replay every upstream assertion through the real engines and report agreement per file.

OpenFGA: every Check, ListObjects and ListUsers assertion of every store test file, through the
CLI's embedded engine. Cedar: every ALLOW/DENY request file, through ``cedarpy``. The report
counts, per file and kind, how many engine answers equal the upstream expectation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from authpairs.tracks.native import build
from authpairs.tracks.native.openfga_engine import EngineAnswer
from authpairs.tracks.native.sources import CEDAR_DIR, OPENFGA_DIR, resolve_sources

KINDS = ("check", "list_objects", "list_users", "authorize")


@dataclass
class FileAgreement:
    """Agreement of one upstream file (or Cedar example folder) with its engine."""

    path: str
    engine: str
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every assertion of the file agrees."""
        return all(agree == total for agree, total in self.counts.values())


@dataclass
class VerifyReport:
    """Per-file agreement plus totals per kind."""

    files: list[FileAgreement]
    engines: dict[str, str]

    def totals(self) -> dict[str, tuple[int, int]]:
        """(agreeing, total) per assertion kind over all files."""
        sums: dict[str, list[int]] = {k: [0, 0] for k in KINDS}
        for f in self.files:
            for kind, (agree, total) in f.counts.items():
                sums[kind][0] += agree
                sums[kind][1] += total
        return {k: (v[0], v[1]) for k, v in sums.items()}

    @property
    def ok(self) -> bool:
        """True when every assertion of every file agrees (100%)."""
        return all(f.ok for f in self.files)

    def to_markdown(self) -> str:
        """A markdown table: one row per file, then totals."""
        lines = ["| file | engine | Check | ListObjects | ListUsers | Cedar requests |",
                 "|---|---|---|---|---|---|"]
        for f in self.files:
            cells = [_cell(f.counts.get(k)) for k in KINDS]
            lines.append(f"| {f.path} | {f.engine} | " + " | ".join(cells) + " |")
        totals = self.totals()
        lines.append("| **total** | | " + " | ".join(_cell(totals[k]) for k in KINDS) + " |")
        for f in self.files:
            lines.extend(f"- {f.path}: {failure}" for failure in f.failures)
        return "\n".join(lines) + "\n"


def _cell(pair: tuple[int, int] | None) -> str:
    if pair is None or pair[1] == 0:
        return "-"
    agree, total = pair
    return f"{agree}/{total} ({100.0 * agree / total:.1f}%)"


def _count(answers: Iterable[EngineAnswer], failures: list[str]) -> tuple[int, int]:
    agree = total = 0
    for answer in answers:
        total += 1
        if answer.agrees:
            agree += 1
        else:
            detail = answer.error or f"expected {answer.expected}, engine {answer.got}"
            failures.append(f"{answer.locator}: {detail}")
    return agree, total


def openfga_agreement(items: Iterable[build.FgaItem]) -> list[FileAgreement]:
    """Agreement rows for OpenFGA test files."""
    rows = []
    for run, info in items:
        row = FileAgreement(path=info.relpath, engine="openfga")
        row.counts["check"] = _count(run.checks.values(), row.failures)
        row.counts["list_objects"] = _count(run.list_objects.values(), row.failures)
        row.counts["list_users"] = _count(run.list_users.values(), row.failures)
        rows.append(row)
    return rows


def cedar_agreement(items: Iterable[build.CedarItem]) -> list[FileAgreement]:
    """Agreement rows for Cedar example folders."""
    rows = []
    for _example, answers, info in items:
        row = FileAgreement(path=info.relpath, engine="cedar")
        agree = sum(a.agrees for a in answers)
        row.counts["authorize"] = (agree, len(answers))
        row.failures.extend(f"{a.locator}: expected {'ALLOW' if a.expected else 'DENY'}, engine "
                            f"{'ALLOW' if a.allowed else 'DENY'}" for a in answers if not a.agrees)
        rows.append(row)
    return rows


def verify_native(sources: Path | str | None = None, workers: int | None = None) -> VerifyReport:
    """Replay all upstream assertions of the staged sources and report agreement per file."""
    root = resolve_sources(sources)
    rows = openfga_agreement(build.label_openfga_tree(root / OPENFGA_DIR, workers=workers))
    rows += cedar_agreement(build.label_cedar_tree(root / CEDAR_DIR))
    return VerifyReport(files=rows, engines={"openfga": build.fga_version(),
                                             "cedar": build.cedar_version()})
