"""One number, one meaning, everywhere: a comparison with every transition kind (and the two
runs' scores) read back from the terminal, the JSON/CSV files, the HTML page and its figure,
and the Python objects, count by count."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from authpairs import api
from authpairs.analysis.contrast import compare_runs
from authpairs.analysis.formatting import (
    FORBIDDEN_FIELDS,
    LAWFUL_FIELDS,
    REQUEST_TRANSITIONS,
    format_p,
)
from authpairs.analysis.scoring import Score
from authpairs.cli import app
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from tests.analysis.analysis_helpers import rec

runner = CliRunner()

#: (label, outcome before, outcome after, how many): every lawful and forbidden transition,
#: lost requests lost to a denial and to unavailability (unavailable and abstained), forbidden
#: requests newly blocked and newly unavailable (unavailable and abstained). 22 lost against
#: 1 gained gives an exact McNemar p below 0.0001 (written in scientific notation).
PLAN: list[tuple[str, str, str, int]] = [
    ("lawful", "ALLOW", "ALLOW", 3),          # retained
    ("lawful", "ALLOW", "BLOCK", 14),         # lost to denial
    ("lawful", "ALLOW", "UNAVAILABLE", 5),    # lost to unavailability
    ("lawful", "ALLOW", "UNKNOWN", 3),        # lost to unavailability (abstained)
    ("lawful", "BLOCK", "ALLOW", 1),          # gained
    ("lawful", "BLOCK", "BLOCK", 2),          # neither
    ("lawful", "UNAVAILABLE", "BLOCK", 1),    # neither
    ("forbidden", "ALLOW", "ALLOW", 2),       # still approved
    ("forbidden", "BLOCK", "ALLOW", 3),       # newly approved
    ("forbidden", "ALLOW", "BLOCK", 6),       # newly blocked
    ("forbidden", "ALLOW", "UNAVAILABLE", 3),  # newly unavailable
    ("forbidden", "ALLOW", "UNKNOWN", 2),     # newly unavailable (abstained)
    ("forbidden", "BLOCK", "BLOCK", 4),       # still not approved
]


def _runs() -> tuple[list[CaseRecord], list[CaseRecord]]:
    before: list[CaseRecord] = []
    after: list[CaseRecord] = []
    k = 0
    for label, x, y, count in PLAN:
        for _ in range(count):
            cid, cluster = f"C{k:03d}", f"s{k // 2:02d}"
            before.append(rec(cid, label, x, cluster=cluster, run_id="before", path=f"p{k % 3}"))
            after.append(rec(cid, label, y, cluster=cluster, run_id="after", path=f"p{k % 3}"))
            k += 1
    before.append(rec("X999", "lawful", "ALLOW", cluster="s99", run_id="before"))  # unmatched
    return before, after


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one-number") / "runs.sqlite"
    before, after = _runs()
    with RecordStore(path) as store:
        for run_id, records in (("before", before), ("after", after)):
            store.open_run(RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00",
                                   config={}, config_sha256=run_id * 4,
                                   manifest={"name": "handmade", "n_cases": len(records)},
                                   manifest_sha256="handmade-manifest",
                                   expected_case_ids=[r.case_id for r in records]))
            for r in records:
                store.add_case(r, [])
    return path


class _Page(HTMLParser):
    """Every table of the page (caption, the CSV key of each column, rows) and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] = []
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"caption": "", "keys": [], "rows": []})
        elif tag == "caption":
            self._in_caption = True
        elif tag == "th":
            title = dict(attrs).get("title") or ""
            self.tables[-1]["keys"].append(title.removeprefix("CSV column ") or None)
            self._cell = []
        elif tag == "td":
            self._cell = []
        elif tag == "tr":
            self._row = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "caption":
            self._in_caption = False
        elif tag == "th" and self._cell is not None:
            keys = self.tables[-1]["keys"]
            keys[-1] = keys[-1] or "".join(self._cell).strip()  # header == key when no title
            self._cell = None
        elif tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row:
            self.tables[-1]["rows"].append(dict(zip(self.tables[-1]["keys"], self._row,
                                                    strict=True)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption:
            self.tables[-1]["caption"] += data

    def table(self, caption_start: str) -> list[dict[str, str]]:
        """The rows of the one table whose caption starts so."""
        found = [t for t in self.tables if t["caption"].strip().startswith(caption_start)]
        assert len(found) == 1, [t["caption"] for t in self.tables]
        rows: list[dict[str, str]] = found[0]["rows"]
        return rows


def _terminal_table(output: str, title: str) -> list[dict[str, str]]:
    """A rich table of the terminal output, read back: the column titles (header lines joined)
    and one dict per data row. Columns are the stretches between character positions that are
    blank on every header and data line (merged into the next column where they hold no
    data)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    rule = next(i for i in range(start + 1, len(lines)) if set(lines[i].strip()) <= {"─", "━"}
                and lines[i].strip())
    end = next((i for i in range(rule + 1, len(lines)) if not lines[i].strip()), len(lines))
    header, data = lines[start + 1:rule], lines[rule + 1:end]
    width = max(len(line) for line in (*header, *data))
    padded = [line.ljust(width) for line in (*header, *data)]
    blank = [all(line[i] == " " for line in padded) for i in range(width)]
    spans, i = [], 0
    while i < width:
        if blank[i]:
            i += 1
            continue
        j = i
        while j < width and not blank[j]:
            j += 1
        spans.append((i, j))
        i = j
    # a stretch without data is part of the right-aligned column to its right (a header such
    # as "newly blocked" over "(usable denial)" can share a blank position)
    merged: list[tuple[int, int]] = []
    for a, b in reversed(spans):
        if merged and not any(row.ljust(width)[a:b].strip() for row in data):
            merged[-1] = (a, merged[-1][1])
        else:
            merged.append((a, b))
    spans = merged[::-1]
    titles = [" ".join(h[a:b].strip() for h in header if h.ljust(width)[a:b].strip())
              for a, b in spans]
    return [{t: row.ljust(width)[a:b].strip() for t, (a, b) in zip(titles, spans, strict=True)}
            for row in data]


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _svg_counts(svg: str) -> dict[str, int]:
    """The bar counts the transitions figure prints, by the SVG id of each label."""
    return {key: int(value) for key, value in re.findall(
        r'<g id="count-([a-z_]+)">\s*<text[^>]*>(\d+)</text>', svg)}


@pytest.fixture(scope="module")
def views(db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The comparison and the scores in every view."""
    tmp = tmp_path_factory.mktemp("views")
    compared = runner.invoke(app, ["compare", "before", "after", "--records", str(db),
                                   "--out", str(tmp / "compare")], terminal_width=200)
    assert compared.exit_code == 0, compared.output
    scored = runner.invoke(app, ["score", "before", "after", "--records", str(db),
                                 "--out", str(tmp / "score")], terminal_width=200)
    assert scored.exit_code == 0, scored.output
    single = runner.invoke(app, ["score", "after", "--records", str(db),
                                 "--out", str(tmp / "single")], terminal_width=200)
    assert single.exit_code == 0, single.output
    reported = runner.invoke(app, ["report", "before", "after", "--records", str(db),
                                   "--compare", "before", "after", "--out", str(tmp / "r"),
                                   "--draws", "500"], terminal_width=200)
    assert reported.exit_code == 0, reported.output
    page = _Page()
    page.feed((tmp / "r" / "report.html").read_text(encoding="utf-8"))
    return {"compare": compared.output, "score": scored.output, "single": single.output,
            "out": tmp, "page": page}


def test_the_records_hold_every_transition_kind(db: Path) -> None:
    n = api.compare(f"{db}::before", f"{db}::after").counts()
    for field in (*LAWFUL_FIELDS, *FORBIDDEN_FIELDS):
        assert n[field.key] > 0, field.key
    assert n["only_before"] == 1


def test_transition_counts_agree_in_every_view(db: Path, views: dict[str, Any]) -> None:
    python = api.compare(f"{db}::before", f"{db}::after").counts()
    expected = {"retained": 3, "lost": 22, "lost_denied": 14, "lost_unavailable": 8,
                "gained": 1, "neither": 3, "still_approved": 2, "newly_approved": 3,
                "newly_blocked": 6, "newly_unavailable": 5, "still_blocked": 4, "net": -21,
                "lawful_matched": 29, "forbidden_matched": 20}
    assert {k: python[k] for k in expected} == expected
    out: Path = views["out"]
    json_counts = json.loads((out / "compare" / "comparison.json").read_text())["counts"]
    summary = _csv_rows(out / "compare" / "summary.csv")[0]
    html_all = _csv_rows(out / "r" / "tables" / "transitions.csv")[0]
    lawful_csv = _csv_rows(out / "r" / "tables" / "transitions_lawful.csv")[0]
    forbidden_csv = _csv_rows(out / "r" / "tables" / "transitions_forbidden.csv")[0]
    page: _Page = views["page"]
    html_lawful = page.table("lawful requests (completed)")[0]
    html_forbidden = page.table("forbidden requests (approved)")[0]
    term_lawful = _terminal_table(views["compare"],
                                  "before -> after: lawful requests (completed)")[0]
    term_forbidden = _terminal_table(views["compare"],
                                     "before -> after: forbidden requests (approved)")[0]
    figure = _svg_counts((out / "r" / "figures" / "transitions.svg").read_text())
    for side, fields, term, html, side_csv in (
            ("lawful", LAWFUL_FIELDS, term_lawful, html_lawful, lawful_csv),
            ("forbidden", FORBIDDEN_FIELDS, term_forbidden, html_forbidden, forbidden_csv)):
        for f in fields:
            seen = {"python": python[f.key], "comparison.json": json_counts[f.key],
                    "summary.csv": int(summary[f.key]), "report transitions.csv":
                    int(html_all[f.key]), f"report transitions_{side}.csv":
                    int(side_csv[f.key]), "HTML table": int(html[f.key]),
                    "terminal": int(term[f.title])}  # the terminal column carries the title
            assert set(seen.values()) == {expected[f.key]}, (f.key, seen)
    lawful, forbidden = REQUEST_TRANSITIONS.lawful_transitions, REQUEST_TRANSITIONS.forbidden
    for f in (*lawful, *forbidden):
        assert figure[f.key] == python[f.key], (f.key, figure)
    assert sum(figure[f.key] for f in forbidden) == python["forbidden_matched"]
    assert sum(figure[f.key] for f in lawful) == python["lawful_matched"]
    svg = (out / "r" / "figures" / "transitions.svg").read_text()
    assert "lost to denial (14)" in svg and "lost to unavailability (8)" in svg
    lost_rows = page.table("lost lawful requests (22: 14 to denial, 8 to unavailability)")
    term_lost = [{"lost to": row["transition"].removeprefix("lost to ")} for row in
                 _terminal_table(views["compare"], "changed requests (37)")
                 if row["transition"].startswith("lost to ")]
    for rows, key in ((lost_rows, "lost_to"), (term_lost, "lost to")):
        assert sorted(r[key] for r in rows) == ["denial"] * 14 + ["unavailability"] * 8
    assert int(term_lawful["net"]) == int(html_lawful["net"]) == python["net"]
    assert html_lawful["lawful_matched"] == "29" and html_forbidden["forbidden_matched"] == "20"


def test_p_values_are_written_alike(db: Path, views: dict[str, Any]) -> None:
    before = api.records_of(f"{db}::before")
    after = api.records_of(f"{db}::after")
    contrast = compare_runs(before, after, draws=500)
    p = contrast.stats.mcnemar_p
    assert 0 < p < 1e-4
    stored = json.loads((views["out"] / "compare" / "comparison.json").read_text())
    assert stored["stats"]["mcnemar_p"] == p
    written = f"exact McNemar p = {format_p(p)} "
    assert written == "exact McNemar p = 5.7e-06 "
    page_text = " ".join(" ".join(views["page"].text).split())
    assert written in views["compare"] and written in page_text
    flip = f"p = {format_p(contrast.stats.sign_flip.p_value)}"
    assert flip in views["compare"] and flip in page_text
    assert "p = 0.0000" not in page_text


#: Score fields: the Score attribute, the multi-run terminal column, the single-run terminal
#: column (with the denominator it prints, if any) and the HTML/runs.json key.
SCORE_FIELDS = [
    ("n", "n", ("n", None), "n"),
    ("correct", "correct", ("correct", None), "correct"),
    ("incorrect_approvals", "incorrect approvals", ("incorrect approvals", "forbidden"),
     "incorrect_approvals"),
    ("false_denials", "false denials", ("false denials", "lawful"), "false_denials"),
    ("abstentions", "abstain", ("abstain", None), "abstentions"),
    ("unavailable", "unavailable", ("unavailable", None), "unavailable"),
]


def _score_row(rows: list[dict[str, Any]], run: str) -> dict[str, Any]:
    return next(r for r in rows if r["run"] == run)


def test_scores_agree_in_every_view(db: Path, views: dict[str, Any]) -> None:
    out: Path = views["out"]
    runs_json = json.loads((out / "score" / "runs.json").read_text())
    runs_csv = _csv_rows(out / "score" / "runs.csv")
    html_runs = views["page"].table("2 runs")  # the terminal's multi-run table, in HTML
    term_runs = _terminal_table(views["score"], "2 runs")
    single_json = json.loads((out / "single" / "scores.json").read_text())[0]
    term_single = _terminal_table(views["single"], "after: 49 of 49 cases")[0]
    for run in ("before", "after"):
        score = api.score(f"{db}::{run}")
        assert isinstance(score, Score)
        for attr, multi, (one, denominator), key in SCORE_FIELDS:
            value = getattr(score, attr)
            seen = {"runs.json": _score_row(runs_json, run)[key],
                    "runs.csv": int(_score_row(runs_csv, run)[key]),
                    "HTML runs table": int(_score_row(html_runs, run)[key]),
                    "terminal": int(_score_row(term_runs, run)[multi])}
            if run == "after":
                shown = term_single[one]
                if denominator is not None:
                    assert shown == f"{value}/{getattr(score, denominator)}", (attr, shown)
                    shown = shown.split("/")[0]
                seen.update({"scores.json": single_json[attr], "terminal (one run)":
                             int(shown)})
            assert set(seen.values()) == {value}, (run, attr, seen)
        rate = score.usable_correctness
        assert rate is not None
        assert float(_score_row(runs_json, run)["usable_correctness"]) == round(100 * rate, 2)
        assert float(_score_row(html_runs, run)["usable_correctness"]) == round(100 * rate, 2)
        assert float(_score_row(term_runs, run)["usable %"]) == round(100 * rate, 2)
        reasons = "; ".join(f"{k}={v}" for k, v in score.unavailable_by_reason.items())
        page_text = " ".join(" ".join(views["page"].text).split())
        assert f"{run}: unavailable by reason: {reasons}" in page_text
        assert f"{run}: unavailable by reason: {reasons}" in views["score"]
        assert _score_row(runs_json, run)["unavailable_by_reason"] == reasons
