"""The committed example report (docs/report-example) is what the code builds now.

``scripts/regenerate_report_example.py --check`` rebuilds it in a temporary folder and compares
every file but the screenshot (timestamps and version strings normalised); it fails with the
files that differ and the command that regenerates them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import REPO
from tests.report.browser import find_chromium

SCRIPT = REPO / "scripts" / "regenerate_report_example.py"


def differences(built: Path, committed: Path) -> list[str]:
    """The script's comparison (scripts/ is not a package)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from regenerate_report_example import differences as compare
    finally:
        sys.path.remove(str(SCRIPT.parent))
    found: list[str] = compare(built, committed)
    return found


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None,
                    reason="needs the Debian 'chromium' package (installed by .ci/run)")
def test_the_committed_report_example_is_current() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "current" in done.stdout


def test_the_comparison_normalises_only_times_and_versions(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for root, when, version in ((old, "2026-12-03T06:52:40+00:00", "0.1.0"),
                                (new, "2026-12-04T11:14:15+00:00", "0.2.0")):
        (root / "tables").mkdir(parents=True)
        (root / "report.html").write_text(f"<p>Generated {when}</p><td>authpairs {version}; "
                                          f"python 3.11.7</td>\n<p>20 correct</p>\n")
        (root / "tables" / "runs.csv").write_text(f"run,created\nallow,{when}\n")
        (root / "figures.png").write_bytes(b"\x89PNG same")
        (root / "screenshot.png").write_bytes(when.encode())
    assert differences(new, old) == []
    (new / "report.html").write_text("<p>Generated 2026-12-04T11:14:15+00:00</p>\n"
                                     "<p>21 correct</p>\n")
    (new / "figures.png").write_bytes(b"\x89PNG other")
    (new / "cases.csv").write_text("x\n")
    (new / "tables" / "runs.csv").unlink()
    assert differences(new, old) == [
        "cases.csv: not committed", "tables/runs.csv: no longer built",
        "figures.png: other bytes", "report.html: differs from line 1"]

