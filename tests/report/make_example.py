"""Build the example report in docs/report-example from baseline and scripted runs.

    .venv/bin/python -m tests.report.make_example [docs/report-example]

Runs the language dev split (40 cases, effects executed in the sandbox) with always-allow,
always-block, a scripted reviewer with three seeds, a stricter one with two seeds and one
incomplete run, then writes the report (with a comparison and a three-reviewer composition)
and a screenshot taken by headless Chromium.
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
from pathlib import Path

from PIL import Image

from authpairs.report.build import build_report
from authpairs.report.request import ReportRequest
from tests.report.browser import check_page
from tests.report.helpers import make_run


def main(out: Path) -> None:
    """Record the runs in a temporary file, then write the report and its screenshot."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.sqlite"
        # one case at a time: the records (the verifiers' observations the case browser shows
        # included) are the same in every build
        run = functools.partial(make_run, db, enforce=True, concurrency=1)
        run("always-allow", baseline="always-allow")
        run("always-block", baseline="always-block")
        for seed in range(3):
            run(f"loose-s{seed}", seed=seed, allow=0.55)
        for seed in range(2):
            run(f"strict-s{seed}", seed=seed, allow=0.3)
        run("flaky", seed=9, allow=0.5, flaky=0.25)
        if out.exists():
            shutil.rmtree(out)
        result = build_report(ReportRequest(
            runs=["always-allow", "always-block", "loose-s0", "loose-s1", "loose-s2",
                  "strict-s0", "strict-s1", "flaky"],
            out=out, records=db, compare=("loose-s0", "strict-s0"),
            compose=["loose-s0", "strict-s0", "always-block"]))
    check = check_page(result.html, out / "screenshot.png", scale=0.4)
    if not check.ok:
        raise SystemExit("\n".join(check.problems()))
    shot = out / "screenshot.png"  # the page is grey: an 8-bit grey PNG keeps docs/ small
    Image.open(shot).convert("L").save(shot, optimize=True)
    print(f"wrote {result.html} and {check.screenshot} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/report-example"))
