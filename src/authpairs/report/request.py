"""What a report is asked for (the ``report`` command's options as one value)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from authpairs.analysis.cost import GridSpec
from authpairs.analysis.runref import DEFAULT_RECORDS
from authpairs.analysis.stats import DEFAULT_DRAWS, DEFAULT_SEED


@dataclass
class ReportRequest:
    """What to report: runs, an optional study plan, a comparison and a composition."""

    runs: list[str]
    out: Path
    records: Path = DEFAULT_RECORDS
    study: Path | None = None
    compare: tuple[str, str] | None = None
    compose: list[str] = field(default_factory=list)
    draws: int = DEFAULT_DRAWS
    seed: int = DEFAULT_SEED
    grid: GridSpec | None = None
    workers: int | None = None  # figure-drawing processes; None = one per core (at most 4)
