"""The report in a real browser: headless Chromium renders it from disk, with no console
error, no missing image and no empty section, and it reads at a desktop and a phone width
(rendered figure text at least 10 px, no clipped label, no sideways page, working navigation);
a broken page is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib as mpl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from authpairs.report.build import build_report
from authpairs.report.request import ReportRequest
from tests.report.browser import (
    MIN_TEXT_PX,
    VIEWPORTS,
    PageCheck,
    check_page,
)
from tests.report.conftest import BROWSER_TEST, RecordedRuns

pytestmark = BROWSER_TEST  # starts Chromium


def test_report_renders_cleanly(recorded: RecordedRuns, tmp_path: Path) -> None:
    result = build_report(ReportRequest(
        runs=[*recorded.baselines, *recorded.loose, recorded.incomplete], out=tmp_path / "r",
        records=recorded.db, compare=("loose-s0", "strict-s0"),
        compose=["loose-s0", "strict-s0", "block"], draws=500))
    shot = tmp_path / "screenshot.png"
    check = check_page(result.html, shot)
    assert check.ok, check.problems()
    assert check.sections == len(result.sections) >= 8
    assert check.images == sum(len(s.figures) for s in result.sections) >= 8
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    _assert_readable(check, figures=check.images)


def _assert_readable(check: PageCheck, figures: int) -> None:
    """Every SVG figure was measured at both widths, with text of at least 10 px."""
    assert [v.width for v in check.viewports] == list(VIEWPORTS) == [1400, 390]
    assert len(check.figures) == figures and all(f.texts > 5 for f in check.figures)
    assert not [c for f in check.figures for c in f.clipped]
    for view in check.viewports:
        assert len(view.figure_text_px) == figures
        assert min(view.figure_text_px.values()) >= MIN_TEXT_PX, view.figure_text_px
        assert all(scale >= 0.995 for scale in view.figure_scale.values())
        assert view.page_width <= view.width + 1
        assert not view.navigation and not view.small_text


@pytest.mark.parametrize("runs", [("loose-s0", "strict-s0"), ("loose-s0", "strict-s0", "block")])
def test_few_contrasts_read_at_both_widths(recorded: RecordedRuns, tmp_path: Path,
                                          runs: tuple[str, ...]) -> None:
    """One or three contrasts: the smallest contrast matrix keeps its colour-bar label whole."""
    result = build_report(ReportRequest(runs=list(runs), out=tmp_path / "r",
                                        records=recorded.db, compare=(runs[0], runs[1]), draws=200))
    check = check_page(result.html)
    assert check.ok, check.problems()
    assert "figures/contrasts.svg" in {f.src for f in check.figures}
    _assert_readable(check, figures=check.images)


def test_broken_page_is_caught(recorded: RecordedRuns, tmp_path: Path) -> None:
    result = build_report(ReportRequest(runs=["allow", "block"], out=tmp_path / "r",
                                        records=recorded.db, draws=200))
    html = result.html.read_text()
    figure = next(s.figures[0] for s in result.sections if s.figures)
    Path(result.html.parent / figure.svg).unlink()
    _bad_figure(result.html.parent / "figures" / "bad.svg")
    html = html.replace("</main>", '<section id="hollow"><h2>Hollow</h2></section>'
                        '<section id="unreadable"><h2>Unreadable</h2>'
                        '<figure><img src="figures/bad.svg" alt="bad"></figure>'
                        '<figure><img src="figures/bad.svg" alt="squeezed" '
                        'style="width: 120px"></figure>'
                        '<p style="font-size: 7px">fine print</p>'
                        '<div style="width: 900px">a wide block</div></section>'
                        "<script>console.error('boom')</script></main>")
    html = html.replace("<nav>", '<nav><a href="#x" style="position: absolute; left: 20px; '
                        'top: 9px">one</a><a href="#y" style="position: absolute; left: 22px; '
                        'top: 10px">two</a><a href="#z" style="position: fixed; '
                        'left: 1380px; top: 9px">off the edge</a>')
    broken = result.html.with_name("broken.html")
    broken.write_text(html)
    check = check_page(broken)
    assert not check.ok
    assert check.missing_images == [figure.svg]
    assert check.empty_sections == ["hollow"]
    assert any("boom" in m for m in check.console_errors)
    assert check.failed_requests  # the missing SVG file
    bad = next(f for f in check.figures if f.src == "figures/bad.svg")
    assert bad.smallest == "tiny print" and 6.0 < bad.smallest_px < 7.5  # 5 pt = 6.7 px
    assert len(bad.clipped) == 1 and "a label that runs off the edge" in bad.clipped[0]
    problems = "\n".join(check.problems())
    for width in VIEWPORTS:
        assert f"at {width} px: figure figures/bad.svg text" in problems
        assert f"at {width} px: figure figures/bad.svg shrunk" in problems  # the 120 px copy
        assert f"at {width} px: page text 'fine print' is 7.0 px" in problems
        assert f"at {width} px: navigation links 'one' and 'two' overlap" in problems
    assert "at 390 px: the page is" in problems and "at 1400 px: the page is" not in problems
    assert "at 1400 px: navigation link 'off the edge' reaches outside" in problems
    assert "figure figures/bad.svg: clipped text" in problems
    shutil.rmtree(tmp_path / "r")


def _bad_figure(path: Path) -> None:
    """An SVG with 5 pt text and a label that runs off the figure's right edge (text kept as
    text, as the report's figures keep it)."""
    with mpl.rc_context({"svg.fonttype": "none"}):
        fig = Figure(figsize=(3, 1))
        FigureCanvasAgg(fig)
        fig.text(0.1, 0.3, "tiny print", fontsize=5)
        fig.text(0.6, 0.6, "a label that runs off the edge", fontsize=10)
        fig.savefig(path, format="svg")
