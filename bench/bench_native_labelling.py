"""Benchmark: labelling every native-policy input with the real engines.

Measures, on the staged sources:

1. the batched path used by ``authpairs data build-native`` (one ``fga model test`` process per
   store test file, files run concurrently; one ``cedarpy.is_authorized_batch`` per Cedar
   folder), end to end including import, duplicate merging and the split;
2. a naive path on a deterministic sample: one ``fga`` process per Check assertion (a one-check
   test file with the same model and effective tuples), extrapolated to all Check assertions;
3. Cedar batch versus one ``is_authorized`` call per request.

The machine may be shared, so the 1-minute load average is recorded before and after.
Usage: ``python bench/bench_native_labelling.py [--sources DIR] [--sample 40] [--repeat 2]
[--out bench/results/native.md]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import cedarpy
import yaml

from authpairs.tracks.native.build import build_native, label_cedar_tree
from authpairs.tracks.native.openfga_engine import fga_binary
from authpairs.tracks.native.openfga_import import (
    FgaCheck,
    FgaSuite,
    find_test_files,
    load_fga_suite,
)
from authpairs.tracks.native.sources import CEDAR_DIR, OPENFGA_DIR, resolve_sources


def load1() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def naive_check(suite: FgaSuite, check: FgaCheck, workdir: Path, exe: str) -> float:
    """Run one Check assertion in its own ``fga`` process; return the wall time."""
    doc: dict[str, object] = {"name": "naive", "tuples": list(check.tuples), "tests": [{
        "name": "one", "check": [{"user": check.user, "object": check.object,
                                  "context": check.context,
                                  "assertions": {check.relation: check.expected}}]}]}
    if suite.model_files:
        doc["model_file"] = str(suite.model_files[0])
    else:
        doc["model"] = suite.model_text
    path = workdir / "one.fga.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    start = time.perf_counter()
    proc = subprocess.run([exe, "model", "test", "--tests", str(path), "--allow-external-files"],
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"naive check failed: {check.locator}: {proc.stdout[-300:]}")
    return elapsed


def bench_naive(root: Path, sample: int) -> tuple[float, int, int]:
    """Mean seconds per check for the one-process-per-check path, sample size, all checks."""
    suites = [load_fga_suite(f) for f in find_test_files(root / OPENFGA_DIR / "stores")]
    checks = [(s, c) for s in suites for c in s.checks]
    step = max(1, len(checks) // sample)
    chosen = checks[::step][:sample]
    exe = fga_binary()
    with tempfile.TemporaryDirectory() as tmp:
        times = [naive_check(s, c, Path(tmp), exe) for s, c in chosen]
    return sum(times) / len(times), len(chosen), len(checks)


def bench_cedar(root: Path, repeat: int = 20) -> tuple[float, float, int]:
    """Seconds for all Cedar requests: batched per folder versus one call per request."""
    items = label_cedar_tree(root / CEDAR_DIR)
    n = sum(len(example.requests) for example, _, _ in items)
    from authpairs.tracks.native.cedar_engine import evaluate_example, policy_set

    start = time.perf_counter()
    for _ in range(repeat):
        for example, _, _ in items:
            evaluate_example(example)
    batched = (time.perf_counter() - start) / repeat
    import json

    start = time.perf_counter()
    for _ in range(repeat):
        for example, _, _ in items:
            for request in example.requests:
                cedarpy.is_authorized(request.as_engine_request(), policy_set(example),
                                      json.dumps(example.entities), schema=example.schema_text)
    single = (time.perf_counter() - start) / repeat
    return batched, single, n


def main() -> None:
    """Run the benchmark and write the markdown result."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sources", type=Path, default=None)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench/results/native.md"))
    args = parser.parse_args()
    root = resolve_sources(args.sources)
    load_before = load1()
    runs = []
    n_cases = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        cpu0 = os.times()
        built = build_native(root)
        cpu1 = os.times()
        wall = time.perf_counter() - start
        cpu = (cpu1.children_user + cpu1.children_system + cpu1.user + cpu1.system
               - cpu0.children_user - cpu0.children_system - cpu0.user - cpu0.system)
        runs.append((wall, cpu, built.timings))
        n_cases = len(built.cases)
    per_check, n_sample, n_checks = bench_naive(root, args.sample)
    cedar_batched, cedar_single, n_cedar = bench_cedar(root)
    load_after = load1()
    best_wall = min(r[0] for r in runs)
    naive_total = per_check * n_checks
    lines = [
        "## Native-policy labelling (bench/bench_native_labelling.py)",
        "",
        f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. Machine: {os.cpu_count()} "
        f"CPUs, shared (1-min load average {load_before:.1f} before, {load_after:.1f} after).",
        "",
        f"- Batched build of all {n_cases} cases ({n_checks} OpenFGA Check assertions plus the "
        "ListObjects/ListUsers assertions of the same files, and all Cedar requests), end to "
        "end: " + ", ".join(f"{w:.1f} s wall / {c:.1f} s CPU (OpenFGA {t['openfga_s']:.1f} s, "
                           f"Cedar {t['cedar_s']:.2f} s)" for w, c, t in runs)
        + f"; best {best_wall:.1f} s (target <= 15 s).",
        f"- Naive OpenFGA path (one `fga` process per Check), sample of {n_sample}: "
        f"{per_check * 1000:.0f} ms per check, extrapolated {naive_total:.0f} s for "
        f"{n_checks} checks; ratio naive / batched = {naive_total / best_wall:.1f}x.",
        f"- Cedar, {n_cedar} requests: batched per folder {cedar_batched * 1000:.1f} ms, one "
        f"call per request {cedar_single * 1000:.1f} ms "
        f"(ratio {cedar_single / cedar_batched:.1f}x).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
