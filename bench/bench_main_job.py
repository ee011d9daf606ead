"""Benchmark of the main job: ``authpairs run --config configs/local-smollm2.yaml`` from scratch.

Each repeat is the real job (language dev split, schema interface, the embedded xllamacpp server
with SmolLM2, SQLite records, effects enforced) with a fresh records file and a fresh server. It
records the wall time, the CPU time of the harness and of the server child process, the load
average, prompt/output tokens and per-case latency, and compares the decisions and raw outputs of
the repeats (determinism).

On a shared machine the wall time is inflated by the other jobs; the server's CPU time is not
(much): with one case in flight the server computes one case after another, so
``server CPU / server threads + harness CPU`` estimates the wall time on a quiet machine (a lower
bound with several threads: they also wait for each other).

    python bench/bench_main_job.py                       # 40 cases, twice, print
    python bench/bench_main_job.py --limit 8 --repeats 2 # a slice
    python bench/bench_main_job.py --set concurrency=2 --set reviewer.backend.n_parallel=2
    python bench/bench_main_job.py --write               # also write bench/results/main_job.md
    python bench/bench_main_job.py --beside-load         # run 1 idle, run 2 beside a CPU hog

``--beside-load`` runs the job once as is and once beside one CPU-bound process (``while True:
pass``) pinned to the same CPUs, and reports the loaded/idle wall-time ratio and whether the two
runs gave identical decisions and raw outputs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import multiprocessing
import os
import platform
import resource
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, load_config
from authpairs.runs.store import RecordStore

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "local-smollm2.yaml"
TARGET_S = 300.0


@dataclass
class JobMeasure:
    """One from-scratch run of the main job."""

    wall_s: float
    harness_cpu_s: float
    server_cpu_s: float
    load_before: float
    load_after: float
    decisions: dict[str, str]
    outputs: dict[str, str]
    correct: int
    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    finish_reasons: dict[str, int] = field(default_factory=dict)
    infra_attempts: int = 0
    """Infrastructure attempts (timeouts, transport errors): each one regenerated a case."""

    server_threads: int = 1

    @property
    def quiet_estimate_s(self) -> float:
        """Wall time expected on a quiet machine: the CPU both processes needed, the server's
        spread over its threads."""
        return self.harness_cpu_s + self.server_cpu_s / self.server_threads

    @property
    def output_tokens_per_server_cpu_s(self) -> float:
        """Output tokens per second of server CPU (prompt processing included)."""
        return sum(self.output_tokens) / self.server_cpu_s if self.server_cpu_s else 0.0


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def cpu_hog() -> Iterator[None]:
    """One CPU-bound child process pinned to this process's CPUs while the block runs."""
    hog = multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
    hog.start()
    assert hog.pid is not None
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(hog.pid, os.sched_getaffinity(0))
    try:
        yield
    finally:
        hog.terminate()
        hog.join()


def _parse_value(text: str) -> Any:
    return yaml.safe_load(text)


def main_job_config(records: Path, limit: int | None,
                    overrides: dict[str, Any] | None = None) -> RunConfig:
    """The main job's configuration with a fresh records file (and optionally a slice)."""
    values: dict[str, Any] = {"records": str(records), "limit": limit}
    values.update(overrides or {})
    return load_config(CONFIG, values)


def run_main_job(config: RunConfig) -> JobMeasure:
    """Run the job once from scratch and measure it (the server is a child process)."""
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run_async(config, progress=False))
    wall_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = (children.ru_utime - children_before.ru_utime
                  + children.ru_stime - children_before.ru_stime)
    run_id = config.resolved_run_id()
    with RecordStore(config.records) as store:
        cases = store.case_records(run_id)
        attempts = store.attempts(run_id)
        outputs = {a.case_id: hashlib.sha256((a.output_text or "").encode()).hexdigest()
                   for a in attempts if a.kind == "formal"}
    finish: dict[str, int] = {}
    for case in cases:
        finish[str(case.finish_reason)] = finish.get(str(case.finish_reason), 0) + 1
    return JobMeasure(
        wall_s=wall_s, harness_cpu_s=cpu_s, server_cpu_s=server_cpu, load_before=load_before,
        load_after=os.getloadavg()[0],
        decisions={c.case_id: f"{c.status}:{c.decision}" for c in cases}, outputs=outputs,
        correct=sum(1 for c in cases if c.status == "decision"
                    and c.dispatch.value == ("ALLOW" if c.lawful else "BLOCK")),
        input_tokens=[c.input_tokens for c in cases],
        output_tokens=[c.output_tokens for c in cases],
        latencies=[c.latency_s for c in cases], finish_reasons=finish,
        infra_attempts=sum(1 for a in attempts if a.kind == "infrastructure"),
        server_threads=getattr(config.reviewer.backend, "n_threads", None) or 1)


def _row(index: int, m: JobMeasure) -> str:
    out = m.output_tokens
    return (f"| {index} | {m.wall_s:.0f} | {m.quiet_estimate_s:.0f} | {m.server_cpu_s:.0f} | "
            f"{m.harness_cpu_s:.1f} | {m.load_before:.1f} / {m.load_after:.1f} | "
            f"{statistics.mean(m.input_tokens):.0f} | {statistics.mean(out):.0f} "
            f"({min(out)}-{max(out)}) | {statistics.median(m.latencies):.1f} | "
            f"{m.output_tokens_per_server_cpu_s:.1f} | {m.correct} | {m.infra_attempts} |")


def report(measures: list[JobMeasure], config: RunConfig, overrides: dict[str, Any],
           beside_load: bool = False) -> str:
    """Markdown section: one row per repeat plus the determinism verdict (and, with
    ``beside_load``, the loaded/idle wall-time ratio of runs 2 and 1)."""
    n = len(measures[0].decisions)
    same_decisions = all(m.decisions == measures[0].decisions for m in measures)
    same_outputs = all(m.outputs == measures[0].outputs for m in measures)
    backend = config.reviewer.backend.model_dump(mode="json")
    setting = {k: backend.get(k) for k in ("n_parallel", "n_threads", "speculative",
                                           "extra_body", "stream", "deadline_s")}
    lines = [
        f"## Main job: `authpairs run --config configs/local-smollm2.yaml` ({n} cases)",
        "",
        f"- Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs",
        f"- Measured: `bench/bench_main_job.py` -- {len(measures)} from-scratch runs (fresh "
        f"records file, fresh server each); settings {setting}, concurrency {config.concurrency}, "
        f"sampling {config.reviewer.sampling.model_dump(exclude_none=True)}"
        + (f", overrides {overrides}" if overrides else ""),
        f"- Quiet estimate = harness CPU + server CPU / server threads (one case in flight); "
        f"target <= {TARGET_S:.0f} s on 2 cores.",
        (f"- Determinism: decisions {'identical' if same_decisions else 'DIFFERENT'}, raw "
         f"outputs {'identical' if same_outputs else 'DIFFERENT'} across the {len(measures)} runs."
         if len(measures) > 1 else "- Determinism: not checked (one run)."),
        "",
        "| run | wall s | quiet estimate s | server CPU s | harness CPU s | load before / after "
        "| prompt tokens/case | output tokens/case (range) | median latency s "
        "| output tok per server-CPU s | correct | infrastructure attempts |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(i + 1, m) for i, m in enumerate(measures)]
    if beside_load:
        ratio = measures[1].wall_s / measures[0].wall_s
        lines += ["", f"Run 1 as is, run 2 beside one CPU-bound process on the same CPUs: "
                  f"loaded/idle wall time {ratio:.2f}x (target <= 2.5x)."]
    finish = measures[0].finish_reasons
    lines += ["", f"Finish reasons (run 1): {finish}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse arguments, run the job ``--repeats`` times from scratch, print (and write)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="first N cases (default all 40)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="dotted config override, e.g. reviewer.backend.n_threads=2")
    parser.add_argument("--write", action="store_true", help="write bench/results/main_job.md")
    parser.add_argument("--beside-load", action="store_true",
                        help="two runs: as is, then beside one CPU-bound process on the same CPUs")
    args = parser.parse_args()
    if args.beside_load:
        args.repeats = 2
    overrides = {k: _parse_value(v) for k, v in (item.split("=", 1) for item in args.set)}
    measures: list[JobMeasure] = []
    config: RunConfig | None = None
    for index in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="authpairs-mainjob-") as tmp:
            config = main_job_config(Path(tmp) / "authpairs.sqlite", args.limit, overrides)
            loaded = args.beside_load and index == 1
            with cpu_hog() if loaded else contextlib.nullcontext():
                measure = run_main_job(config)
        measures.append(measure)
        print(f"run {index + 1}: {measure.wall_s:.0f} s wall, server CPU "
              f"{measure.server_cpu_s:.0f} s, correct {measure.correct}, infrastructure "
              f"attempts {measure.infra_attempts}", flush=True)
    assert config is not None
    text = report(measures, config, overrides, beside_load=args.beside_load)
    print(text)
    if args.write:
        out = Path(__file__).resolve().parent / "results" / "main_job.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
