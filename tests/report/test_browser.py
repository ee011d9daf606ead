"""The report in a real browser: headless Chromium renders it from disk, with no console
error, no missing image and no empty section; a broken page is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from authpairs.report.browser import check_page, find_chromium
from authpairs.report.build import build_report
from authpairs.report.request import ReportRequest
from tests.report.conftest import RecordedRuns

pytestmark = [
    pytest.mark.slow,  # starts Chromium; .ci/run runs the slow tests
    pytest.mark.skipif(find_chromium() is None,
                       reason="needs the Debian 'chromium' package (installed by .ci/run)")]


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


def test_broken_page_is_caught(recorded: RecordedRuns, tmp_path: Path) -> None:
    result = build_report(ReportRequest(runs=["allow", "block"], out=tmp_path / "r",
                                        records=recorded.db, draws=200))
    html = result.html.read_text()
    figure = next(s.figures[0] for s in result.sections if s.figures)
    Path(result.html.parent / figure.svg).unlink()
    html = html.replace("</main>", '<section id="hollow"><h2>Hollow</h2></section>'
                        "<script>console.error('boom')</script></main>")
    broken = result.html.with_name("broken.html")
    broken.write_text(html)
    check = check_page(broken)
    assert not check.ok
    assert check.missing_images == [figure.svg]
    assert check.empty_sections == ["hollow"]
    assert any("boom" in m for m in check.console_errors)
    assert check.failed_requests  # the missing SVG file
    shutil.rmtree(tmp_path / "r")
