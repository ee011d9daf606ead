"""Write docs/benchmarks.md from the per-area results in bench/results/*.md.

Each benchmark script writes its own results file; this script puts the targets table on top
and the detailed sections below, so the document never drifts from the measurements.

    python bench/collect.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "docs" / "benchmarks.md"
ORDER = ["harness", "cli_start", "verify", "language", "native", "effects", "analysis", "overhead",
         "overhead_against", "instructions", "overhead_jitter", "phases", "http_clients",
         "fail_fast", "report", "report_cases", "main_job"]

HEADER = HERE / "benchmarks_header.md"


def main() -> None:
    """Assemble the page."""
    parts = [HEADER.read_text(encoding="utf-8").rstrip() + "\n\n"]
    for name in ORDER:
        path = HERE / "results" / f"{name}.md"
        if path.exists():
            parts.append(path.read_text(encoding="utf-8").strip() + "\n\n")
    OUT.write_text("".join(parts).rstrip() + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
