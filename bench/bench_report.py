"""Benchmark of ``authpairs report``: the paper's 24-run study shape plus a composition.

Target (issue 12): the report for 24 runs of 200 cases plus a 3-reviewer composition builds in
<= 5 s. The runs are a study plan (2 models x 4 interfaces x 3 seeds = 24 runs, 36 contrasts)
whose records are written to SQLite with synthetic decisions (50 scenarios x 4 contexts,
language-style family/domain/scenario/path attributes); the report reads them back like any
other run, computes every section (seed summaries, heatmaps, the 36-contrast family with 10,000
bootstrap draws each, request transitions, 15 compositions, the 720-cell cost grid) and draws
every figure as SVG and PNG. Serial figure drawing is measured beside the default (one process
per core, at most 4) in the same invocation.

    python bench/bench_report.py [--repeat 3] [--write]

``--cases`` measures the case browser instead (issue 27): 2,000 cases x 8 runs written through
the record store (``tests/report/synthetic.py``: language-sized prompts shared by the runs,
an answer per record), the report built, its size, and in headless Chromium the time to the
first rendered list and to apply each filter (best of ``--repeat`` page loads); written to
bench/results/report_cases.md.

    python bench/bench_report.py --cases [--repeat 3] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from authpairs.analysis.study import expand_plan, plan_from_dict
from authpairs.report.build import build_report
from authpairs.report.request import ReportRequest
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore

FAMILIES = ("ownership", "delegated_scope", "relationship", "revoke_supersede", "break_glass",
            "role_hierarchy", "consumption", "conflict_exception", "joint_authority",
            "amount_interval")
DOMAINS = ("payments", "clinical", "software", "education", "documents")


def _plan(records: Path) -> dict[str, object]:
    return {"name": "bench", "records": str(records),
            "base": {"dataset": "language", "split": "test", "enforce": False},
            "factors": {"model": {"m9": {"reviewer.backend.model": "m9"},
                                  "m27": {"reviewer.backend.model": "m27"}},
                        "interface": {i: {"reviewer.interface": i}
                                      for i in ("direct", "structured", "nemo", "schema")}},
            "seeds": [0, 1, 2], "analysis": {"draws": 10_000, "seed": 39039}}


def _records(run_id: str, rng: np.random.Generator, skill: float) -> list[CaseRecord]:
    out = []
    for s in range(50):
        family, domain = FAMILIES[s % len(FAMILIES)], DOMAINS[s % len(DOMAINS)]
        for k in range(4):
            label = "lawful" if k < 2 else "forbidden"
            r = rng.random()
            if r < 0.03:
                status, decision = OutcomeStatus.UNAVAILABLE, None
            else:
                correct = rng.random() < skill
                allow = correct if label == "lawful" else not correct
                status, decision = OutcomeStatus.DECISION, (Decision.ALLOW if allow
                                                            else Decision.BLOCK)
            out.append(CaseRecord(
                run_id=run_id, case_id=f"AC-{s:02d}-{k}", input_sha256="0" * 64, status=status,
                decision=decision, reason_code="not_json" if decision is None else None,
                dispatch=Dispatch.ALLOW if decision is Decision.ALLOW else Dispatch.BLOCK,
                label=label, cluster=f"scn-{s:02d}",
                attributes={"family": family, "domain": domain, "scenario": f"scn-{s:02d}",
                            "path": f"path-{s:02d}-{k % 2}"},
                input_tokens=int(rng.integers(800, 2000)),
                output_tokens=int(rng.integers(5, 900))))
    return out


def write_study(folder: Path) -> tuple[Path, list[str]]:
    """Write the plan and its 24 runs' records; returns the plan path and the run ids."""
    records = folder / "bench.sqlite"
    raw = _plan(records)
    plan = plan_from_dict(raw)
    plan_path = folder / "plan.yaml"
    import yaml

    plan_path.write_text(yaml.safe_dump(raw))
    rng = np.random.default_rng(12)
    ids = []
    with RecordStore(records) as store:
        for i, cell in enumerate(expand_plan(plan)):
            info = RunInfo(run_id=cell.run_id, created_at="2026-01-01T00:00:00+00:00",
                           config={"resolved": cell.config.model_dump(mode="json")},
                           config_sha256=cell.config.sha256(),
                           manifest={"name": "language:test", "n_cases": 200},
                           manifest_sha256="bench-manifest",
                           versions={"authpairs": "bench", "python": platform.python_version()})
            store.open_run(info)
            for record in _records(cell.run_id, rng, 0.6 + 0.015 * i):
                store.add_case(record, [])
            ids.append(cell.run_id)
    return plan_path, ids


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # figure workers, once joined
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(plan: Path, ids: list[str], out: Path, workers: int | None, repeat: int
            ) -> tuple[float, float, int, int]:
    """Best-of-``repeat`` wall time and CPU time (this process and its figure workers) of one
    full report, with every figure and CSV table written."""
    best = cpu = float("inf")
    figures = tables = 0
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), _cpu()
        result = build_report(ReportRequest(
            runs=[], out=out, records=plan.parent / "bench.sqlite", study=plan,
            compare=(ids[0], ids[3]), compose=[ids[0], ids[3], ids[12]], workers=workers))
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, _cpu() - c0)
        figures = sum(len(s.figures) for s in result.sections)
        tables = len(list((out / "tables").glob("*.csv")))
    return best, cpu, figures, tables


#: The filters the case-browser measurement applies, in order (filter key, option).
CASE_FILTERS: tuple[tuple[str, list[tuple[str, str]]], ...] = (
    ("label = lawful", [("label", "lawful")]),
    ("run + decision = unavailable", [("label", ""), ("run", "run-3"),
                                      ("outcome", "unavailable")]),
    ("family", [("run", ""), ("outcome", ""), ("family", "ownership")]),
    ("transition run-0 -> run-1 = lost", [("family", ""), ("pair", "0"),
                                          ("transition", "lost")]),
    ("all (filters cleared)", [("transition", ""), ("pair", "")]),
)


def measure_cases(repeat: int) -> list[str]:
    """The case-browser measurement as markdown lines (needs Chromium)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package
    from tests.report.browser import (
        case_browser_filter,
        case_browser_state,
        chromium_session,
    )
    from tests.report.synthetic import write_synthetic

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        synthetic = write_synthetic(folder / "many.sqlite", n_cases=2000, n_runs=8)
        written = time.perf_counter() - t0
        runs = list(synthetic.runs)
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        result = build_report(ReportRequest(runs=runs, out=folder / "r", records=synthetic.db,
                                            compare=(runs[0], runs[1]), draws=200))
        built = time.perf_counter() - t0
        cases = next(s for s in result.sections if s.key == "cases")
        size = result.html.stat().st_size
        data = len(cases.browser or "")
        first: list[float] = []
        parsed: list[float] = []
        filters: dict[str, list[float]] = {name: [] for name, _ in CASE_FILTERS}
        counts: dict[str, int] = {}
        with chromium_session(timeout=180) as session:
            session.set_width(1400)
            for _ in range(repeat):
                session.open(result.html.resolve().as_uri())
                state = case_browser_state(session)
                first.append(state.first_list_ms)
                parsed.append(state.parse_ms)
                for name, choices in CASE_FILTERS:
                    got = case_browser_filter(session, choices)
                    filters[name].append(float(got["ms"]))
                    counts[name] = int(got["count"])
        load_after = os.getloadavg()[0]
    lines = [
        f"## Case browser benchmark ({datetime.now(UTC).date().isoformat()})", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, headless Chromium; load average {load_before:.1f} "
        f"before and {load_after:.1f} after (other processes share the cores). 2,000 cases x "
        "8 runs = 16,000 case records written through the record store in "
        f"{written:.1f} s (tests/report/synthetic.py: a ~2,000-character input per case, the "
        "same in every run, and a ~250-character answer per record; every second run with "
        "enforced effects); the report of the 8 runs with --compare (28 run pairs of "
        f"transitions) built in {built:.1f} s.", "",
        "| measurement | value |", "|---|---|",
        f"| report.html | {size / 1e6:.1f} MB, of which case data {data / 1e6:.1f} MB |",
        f"| case data parsed (ms after navigation start, best of {repeat}) | "
        f"{min(parsed):.0f} ms |",
        f"| first list rendered (ms after navigation start, best of {repeat}) | "
        f"{min(first):.0f} ms |",
    ]
    lines += [f"| filter: {name} ({counts[name]:,} records match), best of {repeat} | "
              f"{min(ms):.0f} ms |" for name, ms in filters.items()]
    lines += ["", "Times are measured in the page (`performance.now()`): the first list is "
              "drawn after the HTML is read and the JSON parsed; a filter's time runs from "
              "the change event until the new rows are laid out. Reproduce with "
              "`python bench/bench_report.py --cases --write`."]
    return lines


def main() -> None:
    """Measure and print (or write) the markdown section."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write bench/results/report.md")
    parser.add_argument("--cases", action="store_true",
                        help="measure the case browser (bench/results/report_cases.md)")
    args = parser.parse_args()
    if args.cases:
        text = "\n".join(measure_cases(args.repeat)) + "\n"
        print(text)
        if args.write:
            Path(__file__).with_name("results").joinpath("report_cases.md").write_text(text)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plan, ids = write_study(folder)
        load_before = os.getloadavg()[0]
        parallel, parallel_cpu, figures, tables = measure(plan, ids, folder / "out", None,
                                                          args.repeat)
        serial, serial_cpu, _, _ = measure(plan, ids, folder / "serial", 1, args.repeat)
        load_after = os.getloadavg()[0]
    workers = min(os.cpu_count() or 1, 4)
    lines = [
        f"## Report benchmark ({datetime.now(UTC).date().isoformat()})", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {load_before:.1f} before and "
        f"{load_after:.1f} after (other processes share the cores); best of {args.repeat}, "
        "wall clock, SQLite reads included.", "",
        "| measurement | target | wall | CPU (all processes) |", "|---|---|---|---|",
        f"| `authpairs report`: 24 runs x 200 cases (study plan, 36 contrasts x 10,000 draws), "
        f"--compare, 3-reviewer --compose (15 orders, 720-cell grid); {figures} figures as SVG "
        f"+ PNG, {tables} CSV tables; figures drawn by {workers} worker processes while the "
        f"sections are computed | <= 5 s | {parallel:.2f} s | {parallel_cpu:.2f} s |",
        f"| same, figures drawn in this process | (reference) | {serial:.2f} s | "
        f"{serial_cpu:.2f} s |", "",
        "Drawing the figures (text layout and rasterising) is most of the time; the sections' "
        "numbers take about a second of CPU. On a loaded machine the wall time is the CPU time "
        "divided by the share of the cores this process gets; the CPU column does not depend "
        "on that. Reproduce with `python bench/bench_report.py --write`.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(__file__).with_name("results").joinpath("report.md").write_text(text)


if __name__ == "__main__":
    main()
