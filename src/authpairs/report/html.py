"""Render the report page with jinja2 (autoescaped, no network resources); its tables are
drawn by the one HTML renderer of table views (:func:`authpairs.analysis.notebook.html_tables`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import jinja2

from authpairs.analysis.notebook import TableView, html_tables
from authpairs.report.sections import Section

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("authpairs.report", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined, trim_blocks=True,
                          lstrip_blocks=True)


def _table_html(view: TableView) -> str:
    """A section's table as HTML (every text escaped by the renderer: the template marks it
    safe)."""
    return html_tables([view], limit=len(view.rows))


_ENV.filters["table_html"] = _table_html


def render_page(sections: Sequence[Section], *, runs: Sequence[str],
                incomplete: Sequence[str], unverified: Sequence[str] = ()) -> str:
    """The complete HTML page; figures and CSV files are referenced relatively. ``unverified``
    describes each run used although its records fail the integrity check (a banner)."""
    empty = [s.key for s in sections if s.empty]
    if empty:
        raise ValueError(f"report sections without content: {empty}")
    return _ENV.get_template("report.html.j2").render(
        sections=sections, runs=runs, incomplete=incomplete, unverified=unverified,
        generated=datetime.now(UTC).isoformat(timespec="seconds"))
