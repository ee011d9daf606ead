"""The report's building blocks: a table (a :class:`~authpairs.analysis.notebook.TableView`,
written as CSV too), a figure, a section."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authpairs.analysis.formatting import count_title, format_p
from authpairs.analysis.notebook import TableView
from authpairs.report.figures import FigureFile
from authpairs.report.files import write_csv

#: Page titles of CSV columns whose plain reading (underscores as spaces) is not clear enough;
#: comparison counts use :func:`~authpairs.analysis.formatting.count_title`.
COLUMN_TITLES: dict[str, str] = {
    "n": "inputs",
    "n_per_seed": "inputs per seed",
    "pooled": "pooled (%)",
    "mean": "mean (%)",
    "min": "min (%)",
    "max": "max (%)",
    "net_pp": "net (pp)",
    "mcnemar_p": "McNemar p",
    "sign_flip_p": "sign-flip p",
    "holm_sign_flip_p": "Holm sign-flip p",
    "holm_mcnemar_p": "Holm McNemar p",
    "equal_weight_group_accuracy": "equal-weight group accuracy (%)",
    "before_status": "before",
    "after_status": "after",
    "unavailable_forbidden": "unavailable reached, forbidden",
    "unavailable_lawful": "unavailable reached, lawful",
}


def _cell(value: Any, key: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and (key == "p" or key.endswith(("_p", "p_value"))):  # p-value
        return format_p(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.6f}" if 0 < abs(value) < 0.001 else f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


#: HTML tables longer than this show their first rows; the CSV always holds every row.
MAX_HTML_ROWS = 60


def download(out_dir: Path, stem: str, rows: Sequence[dict[str, Any]]) -> str:
    """Write ``tables/<stem>.csv`` with every row; its path in the report folder."""
    return str(write_csv(out_dir / "tables" / f"{stem}.csv", rows).relative_to(out_dir))


def table(out_dir: Path, stem: str, caption: str, rows: Sequence[dict[str, Any]],
          columns: Sequence[str] | None = None, max_rows: int = MAX_HTML_ROWS) -> TableView:
    """Write ``tables/<stem>.csv`` with every row and return the view the page shows: the
    first ``max_rows`` rows, the ``columns`` of the rows (every column by default)."""
    source = download(out_dir, stem, rows)
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    return TableView(
        caption, [COLUMN_TITLES.get(c) or count_title(c) for c in columns],  # the CSV keeps keys
        [[_cell(row.get(c), c) for c in columns] for row in rows[:max_rows]],
        numeric=[all(isinstance(row.get(c), int | float) or row.get(c) is None for row in rows)
                 for c in columns], keys=list(columns), source=source, total_rows=len(rows))


@dataclass
class Section:
    """One section of the page: text, tables and figures (never empty when rendered)."""

    key: str
    title: str
    intro: str = ""
    notes: list[str] = field(default_factory=list)
    tables: list[TableView] = field(default_factory=list)
    figures: list[FigureFile] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    browser: str | None = None
    """The case browser's data (:func:`~authpairs.report.cases.embed_json` text), shown with
    the page's case-browser script; None for every other section."""

    @property
    def empty(self) -> bool:
        """True when the section holds no table, figure or note."""
        return not (self.tables or self.figures or self.notes)
