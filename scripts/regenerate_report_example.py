"""Regenerate the committed example report (docs/report-example), or check that it is current.

    .venv/bin/python scripts/regenerate_report_example.py           # rewrite docs/report-example
    .venv/bin/python scripts/regenerate_report_example.py --check   # rebuild in a temporary
                                                                    # folder and compare

The example is built by ``tests/report/make_example.py`` (baseline and scripted runs of the
language dev split, a comparison and a composition, a screenshot taken by headless Chromium, so
both modes need the ``chromium`` package). ``--check`` exits 1 and names every file that differs
from the committed one, after normalising what changes from one build to the next: timestamps
(ISO 8601) and the ``authpairs X; python Y`` version strings. The screenshot is taken again (so
the page is checked in the browser) but not compared byte for byte: Chromium's rendering is not
byte-stable. Every other file, figures included, must match exactly. The slow test
``tests/docs/test_report_example.py`` runs the check in CI.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "report-example"
NOT_COMPARED = frozenset({"screenshot.png"})
TEXT_SUFFIXES = frozenset({".html", ".json", ".csv", ".svg", ".txt"})
_TIME = re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?")
_VERSIONS = re.compile(rb"authpairs [\w.+-]+; python [\w.+-]+")


def normalised(path: Path) -> bytes:
    """The file's bytes, with timestamps and version strings of a text file replaced."""
    data = path.read_bytes()
    if path.suffix not in TEXT_SUFFIXES:
        return data
    return _VERSIONS.sub(b"authpairs <version>; python <version>", _TIME.sub(b"<time>", data))


def files(root: Path) -> set[str]:
    """The files under ``root``, as paths relative to it."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def differences(built: Path, committed: Path) -> list[str]:
    """What differs between a fresh build and the committed example, one line per file."""
    new, old = files(built), files(committed)
    found = [f"{name}: not committed" for name in sorted(new - old)]
    found += [f"{name}: no longer built" for name in sorted(old - new)]
    for name in sorted((new & old) - NOT_COMPARED):
        a, b = normalised(built / name), normalised(committed / name)
        if a == b:
            continue
        if Path(name).suffix in TEXT_SUFFIXES:
            lines_a, lines_b = a.splitlines(), b.splitlines()
            line = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b, strict=False))
                         if x != y), min(len(lines_a), len(lines_b)))
            found.append(f"{name}: differs from line {line + 1}")
        else:
            found.append(f"{name}: other bytes")
    return found


def build(out: Path) -> None:
    """Build the example into ``out`` (replaced) with the report test's example builder."""
    sys.path.insert(0, str(REPO))
    from tests.report.make_example import main as make_example

    make_example(out)


def main(argv: list[str] | None = None) -> int:
    """Regenerate, or with ``--check`` compare; 0 when the example is current."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="build in a temporary folder and compare with the committed one")
    parser.add_argument("--example", type=Path, default=EXAMPLE,
                        help="the committed example folder (default: %(default)s)")
    args = parser.parse_args(argv)
    if not args.check:
        build(args.example)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "report-example"
        build(built)
        found = differences(built, args.example)
    if found:
        print(f"{args.example} is not what the code builds now:\n  " + "\n  ".join(found)
              + f"\nregenerate it: .venv/bin/python {Path(__file__).relative_to(REPO)}")
        return 1
    print(f"{args.example}: current ({len(files(args.example))} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
