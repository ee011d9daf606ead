"""Benchmark of the chain check every analysis command runs on each run it loads.

``score``, ``compare``, ``compose``, ``gate``, ``report`` and ``study`` verify each run's SHA-256
chain before deciding anything on it (``authpairs.analysis.runref.check_verified``, which runs
``authpairs.runs.audit.verify_chain``: every entry's content hash and link, the head, the
header's seal, and every row's columns against its stored record). Measured here on the study
shape of the report benchmark: 24 runs x 200 cases, each case with its formal attempt (a short
JSON answer), so 9,600 chained entries. Side by side in one invocation: loading the 24 runs'
case records alone (``load_records`` without the check) and with it, best of ``--repeat``.

    python bench/bench_verify.py [--repeat 5] [--write]

``--write`` writes ``bench/results/verify.md`` (a section of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from authpairs.analysis import runref
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.audit import verify_chain
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore

RUNS, CASES = 24, 200


def write_records(path: Path) -> list[str]:
    """24 runs of 200 cases, each with one formal attempt; returns the run ids."""
    ids = [f"run-{i:02d}" for i in range(RUNS)]
    case_ids = [f"AC-{c // 4:02d}-{c % 4}" for c in range(CASES)]
    with RecordStore(path) as store:
        for i, run_id in enumerate(ids):
            store.open_run(RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00",
                                   config={"resolved": {"run_id": run_id}}, config_sha256="c",
                                   manifest={"name": "bench", "n_cases": CASES},
                                   manifest_sha256="m", expected_case_ids=case_ids))
            items = []
            for c, case_id in enumerate(case_ids):
                allow = (c * 7 + i) % 3 != 0
                decision = Decision.ALLOW if allow else Decision.BLOCK
                digest = f"{c:064x}"
                record = CaseRecord(
                    run_id=run_id, case_id=case_id, input_sha256=digest,
                    status=OutcomeStatus.DECISION, decision=decision,
                    dispatch=Dispatch.ALLOW if allow else Dispatch.BLOCK,
                    label="lawful" if c % 4 < 2 else "forbidden", cluster=f"scn-{c // 4:02d}",
                    attributes={"family": "ownership", "domain": "payments",
                                "scenario": f"scn-{c // 4:02d}", "path": f"p-{c % 2}"},
                    input_tokens=1200, output_tokens=40)
                attempt = AttemptRecord(
                    run_id=run_id, case_id=case_id, attempt_no=1, kind="formal",
                    input_sha256=digest, output_text=f'{{"decision": "{decision.value}"}}',
                    finish_reason="stop", input_tokens=1200, output_tokens=40, latency_s=0.5)
                items.append((record, [attempt]))
            store.add_cases(items)
    return ids


def _load_unchecked(path: Path, ids: list[str]) -> None:
    with RecordStore(path, readonly=True) as store:
        for run_id in ids:
            store.case_records(run_id)


def _load_checked(path: Path, ids: list[str]) -> None:
    for run_id in ids:
        runref.load_records(runref.RunRef(path, run_id))


def _verify_only(path: Path, ids: list[str]) -> None:
    with RecordStore(path, readonly=True) as store:
        for run_id in ids:
            assert verify_chain(store, run_id).ok


def best(action: object, repeat: int, *args: object) -> float:
    """Best wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    """Measure and print (or write) the markdown section."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        ids = write_records(path)
        load = best(_load_unchecked, args.repeat, path, ids)
        checked = best(_load_checked, args.repeat, path, ids)
        verify = best(_verify_only, args.repeat, path, ids)
    load1 = os.getloadavg()[0]
    lines = [
        f"## Chain check of analysed runs (bench/bench_verify.py, "
        f"{datetime.now(UTC).date().isoformat()})",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {load1:.1f} after; best of {args.repeat}. "
        f"{RUNS} runs x {CASES} cases, each case with one formal attempt "
        f"({RUNS * CASES * 2:,} chained entries), in one records file.",
        "",
        "| step | wall, all 24 runs | per run |",
        "|---|---|---|",
        f"| load the case records (no check) | {load:.3f} s | {load / RUNS * 1000:.1f} ms |",
        f"| `verify_chain` alone | {verify:.3f} s | {verify / RUNS * 1000:.1f} ms |",
        f"| load with the check (`load_records`, what every analysis command does) | "
        f"{checked:.3f} s | {checked / RUNS * 1000:.1f} ms |",
        "",
        f"The check adds {checked - load:.3f} s to loading 24 runs ({checked / load:.1f}x the "
        "load alone): every entry's SHA-256 and link, the head, the header's seal, and each row's "
        "indexed columns against its record parsed from the stored text.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = Path(__file__).resolve().parent / "results" / "verify.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
