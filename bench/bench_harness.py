"""Harness overhead: cases per second end to end (render -> scripted answer -> strict parse ->
SQLite record) on 2,000 generated cases, and peak memory. Target: >= 500 cases/s on 2 cores.

Each variant runs in its own subprocess so peak RSS is per variant; all variants run side by side
in one invocation so their ratios are comparable on a noisy machine.

    python bench/bench_harness.py [--cases 2000] [--repeat 3] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

VARIANTS = {
    "direct+sqlite": ("direct", True),
    "schema+sqlite": ("schema", True),
    "direct, no records (render+parse only)": ("direct", False),
}


def generated_cases(n: int) -> list[object]:
    """``n`` distinct cases cloned from the bundled examples with varied amounts and ids."""
    from authpairs.cases.examples import load_examples

    base = load_examples().cases
    cases = []
    for i in range(n):
        case = base[i % len(base)]
        data = case.model_dump(mode="json")
        data["case_id"] = f"GEN-{i:05d}"
        data["public"]["source_id"] = data["case_id"]
        data["public"]["request"]["arguments"]["seq"] = i
        data["attributes"]["scenario"] = f"gen-{i // 4}"
        cases.append(type(case).model_validate(data))
    return cases


def child(interface: str, with_records: bool, n: int) -> dict[str, float]:
    """Run one variant in this process and report throughput and peak RSS."""
    from authpairs.backends.scripted import ScriptedBackend
    from authpairs.cases.dataset import Dataset
    from authpairs.review.interfaces import get_interface
    from authpairs.review.reviewers import ModelReviewer
    from authpairs.runs.api import run_async
    from authpairs.runs.config import RunConfig, SamplingConfig

    answer = ('{"checks": [{"requirement": "r", "finding": "f", "evidence": ["e"]}], '
              '"decision": "ALLOW"}' if interface != "direct" else '{"decision": "BLOCK"}')
    dataset = Dataset("generated", generated_cases(n))
    reviewer = ModelReviewer(get_interface(interface), ScriptedBackend(lambda r: answer),
                             SamplingConfig())
    with tempfile.TemporaryDirectory() as tmp:
        if with_records:
            config = RunConfig(dataset="generated", split="all", enforce=False, concurrency=16,
                               records=str(Path(tmp) / "r.sqlite"))
            started = time.perf_counter()
            state = asyncio.run(run_async(config, progress=False, dataset=dataset,
                                          reviewer=reviewer))
            elapsed = time.perf_counter() - started
            assert state.completed_now == n
        else:
            started = time.perf_counter()
            for case in dataset:
                request = reviewer.render(case.public)
                request.sha256()
                reviewer.parse(asyncio.run(reviewer.answer(request)))
            elapsed = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "cases_per_s": n / elapsed, "peak_rss_mib": peak_mib,
            "cpu_s": time.process_time()}


def main() -> None:
    """Run every variant ``--repeat`` times side by side and print a markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write bench/results/harness.md")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1] == "1", args.cases)))
        return
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.repeat):
        for name, (interface, records) in VARIANTS.items():
            out = subprocess.run([sys.executable, __file__, "--cases", str(args.cases),
                                  "--child", interface, "1" if records else "0"],
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            if name not in best or result["cases_per_s"] > best[name]["cases_per_s"]:
                best[name] = result
    reference = best["direct, no records (render+parse only)"]["cases_per_s"]
    lines = [f"### Harness overhead ({datetime.now(UTC):%Y-%m-%d}, {args.cases} generated cases, "
             f"best of {args.repeat}, scripted backend)", "",
             "| variant | cases/s | ratio to render+parse only | target 500 cases/s | peak RSS | "
             "CPU time |",
             "|---|---|---|---|---|---|"]
    for name, result in best.items():
        rss = f"{result['peak_rss_mib']:.0f} MiB"
        lines.append(f"| {name} | {result['cases_per_s']:.0f} | "
                     f"{result['cases_per_s'] / reference:.2f} | "
                     f"{result['cases_per_s'] / 500:.1f}x | {rss} | "
                     f"{result.get('cpu_s', 0.0):.2f} s |")
    lines += ["", "cases/s is the run's wall time in one process (render, hash, parse, records "
              "in batched SQLite transactions); the CPU time includes start-up and imports."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(__file__).with_name("results").joinpath("harness.md").write_text(text)


if __name__ == "__main__":
    main()
