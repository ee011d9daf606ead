"""How result objects show themselves in a notebook and in ``print``: one table builder for all.

A result object (``RunResult``, :class:`~authpairs.analysis.scoring.Score`,
:class:`~authpairs.analysis.compare.Comparison`,
:class:`~authpairs.analysis.compose.CompositionResult` and
:class:`~authpairs.analysis.compose.Compositions`,
:class:`~authpairs.analysis.gate.GateResult`) describes itself as :class:`TableView` s -- a title,
column headers, rows of display strings written by :mod:`authpairs.analysis.formatting` (the
same strings the terminal tables print) and notes -- and inherits :class:`NotebookView`, which
turns them into

* ``_repr_html_``: one compact, self-contained HTML fragment (inline styles, every text escaped
  with :func:`html.escape`). It is the object's only rich display hook, so Jupyter shows it once;
* ``__str__``: the same tables as aligned plain text (what ``print(obj)`` writes);
* ``to_pandas()``: the object's data as a :class:`pandas.DataFrame` (pandas is imported only
  there, so nothing else loads it).

Long tables show their first :data:`MAX_ROWS` rows (:data:`MAX_TEXT_ROWS` in text) and say how
many more ``to_pandas()`` has.
Plain Python only; no rich, no pandas at import.
"""

from __future__ import annotations

import html
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from authpairs.analysis.formatting import fraction, percent

__all__ = ["MAX_ROWS", "MAX_TEXT_ROWS", "NotebookView", "TableView", "fraction", "html_tables",
           "percent", "text_tables"]
# fraction and percent are formatting's (one implementation), named here for the result
# objects that build their table views with them.

if TYPE_CHECKING:
    import pandas

MAX_ROWS = 30
"""Rows a table shows in HTML; the rest are counted ("... and N more rows")."""
MAX_TEXT_ROWS = 20
"""Rows a table shows in plain text (``print``); the rest are counted."""

_TABLE = ("border-collapse:collapse;margin:0.2em 0 0.6em 0;font-size:0.9em;"
          "font-variant-numeric:tabular-nums")
_CELL = "padding:0.15em 0.6em;border-bottom:1px solid #ddd;vertical-align:top"
_HEAD = _CELL + ";border-bottom:2px solid #888;font-weight:600"
_TITLE = "font-weight:600;margin:0.4em 0 0.1em 0"
_NOTE = "font-size:0.85em;color:#555;margin:0.1em 0"


@dataclass(frozen=True)
class TableView:
    """One table of a result: title, headers, rows of display strings, notes under it.

    ``key_columns`` leading columns are text (left-aligned); the others are numbers
    (right-aligned).
    """

    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    notes: Sequence[str] = ()
    key_columns: int = 1

    def shown_rows(self, limit: int = MAX_ROWS) -> tuple[Sequence[Sequence[str]], int]:
        """The rows to show (at most ``limit``) and how many are left out."""
        return self.rows[:limit], max(0, len(self.rows) - limit)


def _more(left_out: int) -> str:
    return (f"... and {left_out} more row{'s' if left_out > 1 else ''} "
            "(to_pandas() has every row)")


def html_tables(views: Sequence[TableView]) -> str:
    """The views as one self-contained HTML fragment (inline styles, all text escaped)."""
    parts = ['<div class="authpairs-result">']
    for view in views:
        if view.title:
            parts.append(f'<div style="{_TITLE}">{html.escape(view.title)}</div>')
        if view.headers:
            parts.append(f'<table style="{_TABLE}"><thead><tr>')
            parts.extend(f'<th style="{_HEAD};text-align:{_align(view, i)}">'
                         f"{html.escape(h)}</th>" for i, h in enumerate(view.headers))
            parts.append("</tr></thead><tbody>")
            rows, left_out = view.shown_rows()
            for row in rows:
                parts.append("<tr>" + "".join(
                    f'<td style="{_CELL};text-align:{_align(view, i)}">{html.escape(c)}</td>'
                    for i, c in enumerate(row)) + "</tr>")
            parts.append("</tbody></table>")
            if left_out:
                parts.append(f'<div style="{_NOTE}">{html.escape(_more(left_out))}</div>')
        parts.extend(f'<div style="{_NOTE}">{html.escape(note)}</div>' for note in view.notes)
    parts.append("</div>")
    return "\n".join(parts)


def _align(view: TableView, column: int) -> str:
    return "left" if column < view.key_columns else "right"


def _stacked(header: str, width: int) -> list[str]:
    """A header on two lines (broken at the space nearest its middle) when it is wider than
    its column's cells; on one line otherwise."""
    spaces = [i for i, ch in enumerate(header) if ch == " "]
    if len(header) <= width or not spaces:
        return [header]
    cut = min(spaces, key=lambda i: abs(i - len(header) / 2))
    return [header[:cut], header[cut + 1:]]


def text_tables(views: Sequence[TableView]) -> str:
    """The views as aligned plain text: title, header (long names on two lines), a rule, the
    rows, the notes."""
    blocks: list[str] = []
    for view in views:
        lines = [view.title] if view.title else []
        if view.headers:
            rows, left_out = view.shown_rows(MAX_TEXT_ROWS)
            cells = [max((len(r[i]) for r in rows), default=0) for i in range(len(view.headers))]
            headers = [_stacked(h, w) for h, w in zip(view.headers, cells, strict=True)]
            widths = [max(w, *(len(part) for part in h)) for h, w in zip(headers, cells,
                                                                         strict=True)]

            def line(cells: Sequence[str], view: TableView = view,
                     widths: list[int] = widths) -> str:
                return "  ".join(c.ljust(w) if i < view.key_columns else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

            depth = max(len(h) for h in headers)
            for level in range(depth):
                lines.append(line([h[level - depth + len(h)] if level >= depth - len(h) else ""
                                   for h in headers]).rstrip())
            lines.append("  ".join("-" * w for w in widths))
            lines.extend(line(r).rstrip() for r in rows)
            if left_out:
                lines.append(_more(left_out))
        lines.extend(view.notes)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class NotebookView(ABC):
    """Mixin: ``_repr_html_``, ``__str__`` and ``to_pandas`` from :meth:`table_views` and
    :meth:`frame`. A subclass keeps its own short one-line ``__repr__``."""

    @abstractmethod
    def table_views(self) -> list[TableView]:
        """The tables that show this result (HTML and text are made from them)."""

    @abstractmethod
    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """The columns and rows of :meth:`to_pandas` (columns given so that an empty result
        still has them)."""

    def _repr_html_(self) -> str:
        """The tables as one HTML fragment: the only rich display hook (Jupyter shows it
        once)."""
        return html_tables(self.table_views())

    def __str__(self) -> str:
        """The tables as aligned plain text (``print``)."""
        return text_tables(self.table_views())

    def to_pandas(self) -> pandas.DataFrame:
        """This result's data as a pandas DataFrame (needs pandas)."""
        from authpairs.errors import MissingDependencyError

        try:
            import pandas
        except ImportError as exc:
            raise MissingDependencyError("pandas", "pandas", "to_pandas()") from exc
        columns, rows = self.frame()
        return pandas.DataFrame(rows, columns=columns)
