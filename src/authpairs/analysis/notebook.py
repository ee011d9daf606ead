"""The one table model and its renderers: how every result shows itself, everywhere.

A result object (``RunResult``, :class:`~authpairs.analysis.scoring.Score`,
:class:`~authpairs.analysis.compare.Comparison`, :class:`~authpairs.analysis.contrast.Contrast`,
the compositions, the gate, an agent run's stack score) describes itself as :class:`TableView` s
-- a title, column headers, rows of display strings (p-values, rates and count names from
:mod:`authpairs.analysis.formatting`) and notes -- and inherits :class:`NotebookView`; the HTML
report (its CSV rows shown by :func:`authpairs.report.sections.table`) and the commands build
the rest of their tables as views too. A view is drawn

* on a terminal by rich (``console.print(view, crop=False)``,
  :meth:`TableView.__rich_console__`): every column and every value in full at the console's
  width, never cropped; ``print(obj)`` (``__str__``) is the same text, rendered into a string;
* in HTML by :func:`html_tables`: self-contained (inline styles, every text escaped with
  :func:`html.escape`), a notebook's ``_repr_html_`` and every table of the HTML report;

and ``to_pandas()`` gives an object's data as a :class:`pandas.DataFrame` (files are written by
:mod:`authpairs.report.files`). rich and pandas are imported only where a view is drawn.
"""

from __future__ import annotations

import dataclasses
import html
import io
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

__all__ = ["MAX_ROWS", "MAX_TEXT_ROWS", "NotebookView", "TableView", "html_tables",
           "text_tables"]

if TYPE_CHECKING:
    import pandas
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.segment import Segment
    from rich.table import Table
    from rich.text import Text

MAX_ROWS = 30
"""Rows a notebook's HTML table shows; the rest are counted ("... and N more rows")."""
MAX_TEXT_ROWS = 20
"""Rows ``print(obj)`` shows of a table; the rest are counted."""
TEXT_WIDTH = 120
"""The width ``print(obj)`` renders at."""

_TABLE = ("border-collapse:collapse;margin:0.2em 0 0.6em 0;font-size:0.9em;"
          "font-variant-numeric:tabular-nums")
_CELL = "padding:0.15em 0.6em;border-bottom:1px solid #ddd;vertical-align:top"
_HEAD = _CELL + ";border-bottom:2px solid #888;font-weight:600"
_TITLE = "font-weight:600;margin:0.4em 0 0.1em 0;text-align:left"
_NOTE = "font-size:0.85em;color:#555;margin:0.1em 0"


@dataclass(frozen=True)
class TableView:
    """One table of a result: title, headers, rows of display strings, notes under it.

    ``key_columns`` leading columns are text (left-aligned) and repeat in every part of a
    table too wide for the terminal; the others are numbers (right-aligned), unless
    ``numeric`` says it column by column. A table written to a file also names the file
    (``source``, linked from the title in HTML) and each column's key there (``keys``), and
    may hold only its first rows of ``total_rows``.
    """

    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    notes: Sequence[str] = ()
    key_columns: int = 1
    numeric: Sequence[bool] = ()
    keys: Sequence[str] = ()
    source: str = ""
    total_rows: int | None = None

    def right_aligned(self, column: int) -> bool:
        """Whether ``column`` holds numbers (right-aligned)."""
        return self.numeric[column] if self.numeric else column >= self.key_columns

    def head(self, limit: int) -> TableView:
        """The view with its first ``limit`` rows, a note counting the others."""
        shown = self.rows[:limit]
        left_out = (len(self.rows) if self.total_rows is None else self.total_rows) - len(shown)
        if left_out <= 0:
            return self
        more = (f"... and {left_out} more row{'s' if left_out > 1 else ''} "
                f"({self.source or 'to_pandas()'} has every row)")
        return dataclasses.replace(self, rows=shown, total_rows=None, notes=[more, *self.notes])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The title, the table (never cropped: see :func:`_fitted`) and the notes."""
        from rich.text import Text

        if not self.headers:
            if self.title:
                yield _note(Text(self.title, style="bold"))
        else:
            yield from _fitted(console, options.max_width, _rich_table(self),
                               max(1, self.key_columns))
        yield from (_note(note) for note in self.notes)
        if self.notes:
            yield Text()


def html_tables(views: Iterable[TableView], limit: int = MAX_ROWS) -> str:
    """The views as one self-contained HTML fragment (inline styles, all text escaped), each
    table showing its first ``limit`` rows."""
    parts = ['<div class="authpairs-result">']
    for view in views:
        view = view.head(limit)
        esc = html.escape
        title = esc(view.title) + (f' (<a href="{esc(view.source)}">CSV</a>)' if view.source
                                   else "")
        if not view.headers:
            parts += [f'<div style="{_TITLE}">{title}</div>'] if view.title else []
        else:
            align = ["right" if view.right_aligned(i) else "left"
                     for i in range(len(view.headers))]
            parts.append(f'<table style="{_TABLE}">')
            if title:
                parts.append(f'<caption style="{_TITLE}">{title}</caption>')
            parts.append("<thead><tr>" + "".join(
                f'<th scope="col" style="{_HEAD};text-align:{a}"'
                + (f' title="CSV column {esc(k)}"' if k != h else "") + f">{esc(h)}</th>"
                for h, k, a in zip(view.headers, view.keys or view.headers, align, strict=True))
                + "</tr></thead><tbody>")
            parts.extend("<tr>" + "".join(f'<td style="{_CELL};text-align:{a}">{esc(c)}</td>'
                                          for c, a in zip(row, align, strict=True)) + "</tr>"
                         for row in view.rows)
            parts.append("</tbody></table>")
        parts.extend(f'<div style="{_NOTE}">{esc(note)}</div>' for note in view.notes)
    parts.append("</div>")
    return "\n".join(parts)


def text_tables(views: Iterable[TableView], limit: int = MAX_TEXT_ROWS,
                width: int = TEXT_WIDTH) -> str:
    """The views as the terminal prints them (at most ``limit`` rows each), as plain text."""
    from rich.console import Console

    text = io.StringIO()
    console = Console(file=text, width=width, color_system=None)
    for view in views:
        console.print(view.head(limit), crop=False)
    return text.getvalue().rstrip("\n")


def two_line_header(title: str) -> str:
    """A column title on (at most) two lines, broken at the space nearest its middle (a title
    of nine characters or fewer, or without a space, stays on one line)."""
    spaces = [i for i, ch in enumerate(title) if ch == " "]
    if not spaces or len(title) <= 9:
        return title
    cut = min(spaces, key=lambda i: abs(i - len(title) / 2))
    return title[:cut] + "\n" + title[cut + 1:]


def _rich_table(view: TableView) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                  show_edge=False, title=view.title or None)
    for i, header in enumerate(view.headers):
        table.add_column(two_line_header(header), no_wrap=True, overflow="fold",
                         justify="right" if view.right_aligned(i) else "left")
    for row in view.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _note(note: str | Text) -> Text:
    """A title or footnote of a table: wrapped at spaces, a word longer than the width folded;
    plain text, never read as markup."""
    from rich.text import Text

    text = note.copy() if isinstance(note, Text) else Text(note)
    text.overflow = "fold"
    return text


def _plain(cell: RenderableType) -> str:
    from rich.text import Text

    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)


def _width(console: Console, table: Table) -> int:
    """The natural (unconstrained) width of ``table``."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(1_000_000), table).maximum


def _subtable(table: Table, indices: Sequence[int]) -> Table:
    """A table with the given columns of ``table`` (cells copied, no title)."""
    from rich.table import Table

    sub = Table(box=table.box, pad_edge=table.pad_edge, collapse_padding=table.collapse_padding,
                show_header=table.show_header, show_edge=table.show_edge,
                padding=table.padding)
    columns = [table.columns[i] for i in indices]
    for column in columns:
        sub.add_column(column.header, justify=column.justify, no_wrap=True, overflow="fold")
    for row in zip(*(column.cells for column in columns), strict=True):
        sub.add_row(*row)
    return sub


def _fitted(console: Console, width: int, table: Table, key_columns: int
            ) -> Iterator[RenderableType | Segment]:
    """``table`` with every column and every value in full at ``width``.

    Fits: as it is (no column may wrap or be cropped). Too wide: its columns split over
    several tables, each repeating the first ``key_columns`` columns. Still too wide (very
    long values at a narrow width): one ``header: value`` block per row. The title goes on its
    own lines above, never squeezed to the table's width.
    """
    from rich.segment import Segment
    from rich.text import Text

    title = _plain(table.title) if table.title else None
    table.title = None
    heading = [_note(Text(title, style="bold"))] if title else []
    if _width(console, table) <= width:
        yield from heading
        yield table
        yield Text()
        return
    n = len(table.columns)
    keys = list(range(min(key_columns, n)))
    groups: list[list[int]] = []
    current: list[int] = []
    for i in range(len(keys), n):
        if _width(console, _subtable(table, [*keys, *current, i])) <= width:
            current.append(i)
        elif current and _width(console, _subtable(table, [*keys, i])) <= width:
            groups.append(current)
            current = [i]
        else:  # one column next to the key does not fit: one block per row
            groups = []
            break
    else:
        groups += [current] if current else []
    if not groups:
        headers = [_plain(c.header).replace("\n", " ") for c in table.columns]
        cells = [[_plain(cell) for cell in c.cells] for c in table.columns]
        yield from heading
        for r in range(table.row_count):  # whole lines, never wrapped here (nor cropped)
            yield Segment.line()
            for i, header in enumerate(headers):
                yield from (Segment(f"  {header}: {cells[i][r]}"), Segment.line())
        yield Segment.line()
        return
    for part, group in enumerate(groups, start=1):
        yield _note(Text(f"{title or 'table'} (columns, part {part} of {len(groups)})",
                         style="bold"))
        yield from (_subtable(table, [*keys, *group]), Text())


class NotebookView(ABC):
    """Mixin: ``_repr_html_``, ``__str__``, rich's ``__rich_console__`` and ``to_pandas`` from
    :meth:`table_views` and :meth:`frame`. A subclass keeps its own short one-line
    ``__repr__``."""

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
        """The tables as the terminal prints them, as plain text (``print``)."""
        return text_tables(self.table_views())

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The tables on a terminal (``console.print(result)``)."""
        yield from self.table_views()

    def to_pandas(self) -> pandas.DataFrame:
        """This result's data as a pandas DataFrame (needs pandas)."""
        from authpairs.errors import MissingDependencyError

        try:
            import pandas
        except ImportError as exc:
            raise MissingDependencyError("pandas", "pandas", "to_pandas()") from exc
        columns, rows = self.frame()
        return pandas.DataFrame(rows, columns=columns)
