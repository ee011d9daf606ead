"""docs/api.md and examples/quickstart.ipynb work as written.

The page's snippets run in order in one interpreter and print exactly the output the page shows
under them (:mod:`python_snippets`). The notebook is executed with nbclient in a fresh folder
(its records land there; the kernel starts in the folder's ``examples/``, as Jupyter starts a
notebook in its own folder) and its outputs are read back: each result cell shows exactly one
output, an HTML table whose numbers are those of the records the notebook wrote.
"""

from __future__ import annotations

import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import REPO
from python_snippets import check_page

from authpairs import api
from authpairs.analysis.scoring import score_cells

PAGE = REPO / "docs" / "api.md"
NOTEBOOK = REPO / "examples" / "quickstart.ipynb"
LINKED = ("gate", "examples", "configs")


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(REPO / name)
    return work


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow  # ~3.5 s; the fast docs test runs the same snippets without the outputs
def test_every_snippet_prints_what_the_page_shows(tmp_path: Path) -> None:
    snippets = check_page(PAGE, _work(tmp_path), _env())
    assert len(snippets) >= 6
    assert sum(s.output is not None for s in snippets) == len(snippets)
    text = "\n".join(s.code.text for s in snippets)
    for call in ("authpairs.run(", "authpairs.score(", "authpairs.compare(",
                 "authpairs.compose(", "authpairs.gate(", ".to_pandas()"):
        assert call in text, call


def test_the_page_names_every_notebook_object() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in ("RunResult", "Score", "Comparison", "Compositions", "Composition",
                 "GateResult", "_repr_html_", "to_pandas()", "examples/quickstart.ipynb"):
        assert name in text, name
    assert "docs/api.md" in (REPO / "README.md").read_text(encoding="utf-8")


class _Cells(HTMLParser):
    """The texts of every <td> of an HTML fragment, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self._open = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._open = False

    def handle_data(self, data: str) -> None:
        if self._open:
            self.cells[-1] += data


def _cells(html: str) -> list[str]:
    parser = _Cells()
    parser.feed(html)
    return parser.cells


def _by_tag(notebook: Any) -> dict[str, Any]:
    return {cell.metadata["tags"][0]: cell for cell in notebook.cells
            if cell.cell_type == "code"}


@pytest.mark.slow
def test_the_quickstart_notebook_runs_and_shows_each_result_once(tmp_path: Path) -> None:
    import nbformat  # dev dependencies (nbclient, nbformat, ipykernel)
    from nbclient import NotebookClient

    work = tmp_path / "work"
    (work / "examples").mkdir(parents=True)  # a real folder: '..' is the work folder
    (work / "gate").symlink_to(REPO / "gate")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(work / "examples")}}).execute()
    cells = _by_tag(notebook)
    records = work / "runs" / "quickstart.sqlite"
    allow = api.score(f"{records}::nb-allow")
    block = api.score(f"{records}::nb-block")
    assert isinstance(allow, api.Score) and isinstance(block, api.Score)
    assert allow.n == 160 and block.correct == 80

    html: dict[str, str] = {}
    for tag in ("run-result", "score", "score-lawful", "scores-family", "comparison",
                "compositions", "gate"):
        outputs = cells[tag].outputs
        assert len(outputs) == 1, (tag, outputs)  # shown once: no display as a side effect
        (output,) = outputs
        assert output.output_type == "execute_result", tag
        assert set(output.data) == {"text/html", "text/plain"}, tag
        assert output.data["text/plain"].startswith("<") and "\n" not in output.data[
            "text/plain"], tag
        html[tag] = output.data["text/html"]
    assert _cells(html["run-result"]) == ["all", *score_cells(allow, with_effects=True)]
    assert _cells(html["score"]) == ["all", *score_cells(block, with_effects=True)]
    assert _cells(html["score-lawful"])[1:4] == ["80", "0", "0.0% (0/80)"]
    families = api.score(f"{records}::nb-allow", by="family")
    assert isinstance(families, api.Scores) and len(families) > 1
    assert _cells(html["scores-family"]) == [cell for key, score in families.items()
                                              for cell in (key, *score_cells(score, True))]
    comparison = api.compare(f"{records}::nb-allow", f"{records}::nb-block")
    counts = comparison.counts()
    lawful = _cells(html["comparison"])[:9]
    assert lawful == [str(counts[k]) for k in ("retained", "lost", "lost_denied",
                                               "lost_unavailable", "gained", "neither")] + [
        f"{counts['net']:+d}", "80/80", "0/80"]
    assert "newly unavailable" in html["comparison"]
    assert re.search(r"all-must-allow compositions \(4 orders, 80 forbidden / 80 lawful\)",
                     html["compositions"])
    assert "Acceptance test: FAIL" in html["gate"]

    frame = cells["pandas"].outputs
    assert len(frame) == 1 and "text/html" in frame[0].data  # pandas' own table
    assert "went_through" in frame[0].data["text/plain"]
    printed = cells["print"].outputs
    assert [o.output_type for o in printed] == ["stream"]
    assert printed[0].text.startswith("<RunResult run 'nb-allow': 160 case records")
