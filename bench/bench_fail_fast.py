"""Fail fast: how long a run takes to stop when its endpoint is down, and that a re-run after
the server returns completes it with no case lost or duplicated (issue 42, docs/reliability.md).

Whole ``authpairs run`` processes against real sockets, 2,000 generated cases at concurrency 16:

1. **refused**: a port nothing listens on, with the preflight check (the default) and without it
   (``--no-preflight``: the circuit breaker stops the run). Target: exit within 10 s.
2. **dies half-way**: the OpenAI stub (``openai_stub.py``, 50 ms a request) is killed once about
   half the cases are recorded; how long the run takes to stop after the kill (the breaker's
   bound), then the stub is restarted on the same port and the same command completes the run.
   Checked: every case recorded exactly once, ``authpairs audit`` clean.

    python bench/bench_fail_fast.py [--cases 2000] [--write]

``--write`` stores the results in ``bench/results/fail_fast.json`` and ``fail_fast.md``;
``bench/collect.py`` puts the section in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CONCURRENCY = 16
TARGET_S = 10.0


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_cases(tmp: Path, n: int) -> Path:
    """``n`` generated cases as JSONL."""
    sys.path.insert(0, str(HERE))
    from bench_harness import generated_cases

    from authpairs.cases.dataset import Dataset

    path = tmp / f"cases-{n}.jsonl"
    Dataset("generated", generated_cases(n)).write_jsonl(path)  # type: ignore[arg-type]
    return path


def run_command(cases: Path, url: str, records: Path, *extra: str) -> list[str]:
    """The ``authpairs run`` command line of this benchmark."""
    return [str(BIN / "authpairs"), "run", "--dataset", str(cases), "--split", "all",
            "--interface", "direct", "--backend", "openai", "--base-url", url, "--model", "stub",
            "--concurrency", str(CONCURRENCY), "--no-enforce", "--records", str(records),
            "--run-id", "bench", "--quiet", *extra]


def timed_run(command: list[str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and the last line of stderr (or stdout) of ``command``."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return wall, done.returncode, lines[-1] if lines else ""


def start_stub(port: int = 0) -> tuple[subprocess.Popen[str], int]:
    """The OpenAI stub at 50 ms a request, and its port."""
    stub = subprocess.Popen([sys.executable, str(HERE / "openai_stub.py"), "--port", str(port),
                             "--latency-ms", "50"], stdout=subprocess.PIPE, text=True)
    assert stub.stdout is not None
    return stub, int(stub.stdout.readline().split()[1])


def recorded(records: Path) -> list[str]:
    """The case ids recorded for the benchmark's run."""
    if not records.exists():
        return []
    with sqlite3.connect(f"file:{records}?mode=ro", uri=True, timeout=5) as db:
        try:
            return [row[0] for row in db.execute(
                "SELECT case_id FROM case_records WHERE run_id = 'bench'")]
        except sqlite3.OperationalError:  # the tables are not made yet
            return []


def refused(tmp: Path, cases: Path) -> list[dict[str, object]]:
    """Runs against a refused port, with and without the preflight check."""
    rows: list[dict[str, object]] = []
    for preflight in (True, False):
        records = tmp / f"refused-{preflight}.sqlite"
        url = f"http://127.0.0.1:{closed_port()}/v1"
        extra = () if preflight else ("--no-preflight",)
        wall, code, last = timed_run(run_command(cases, url, records, *extra))
        rows.append({"scenario": "refused port", "preflight": preflight, "wall_s": round(wall, 2),
                     "exit_code": code, "records_file": records.exists(), "last_line": last,
                     "met": wall <= TARGET_S})
    return rows


def dies_half_way(tmp: Path, cases: Path, n: int) -> dict[str, object]:
    """Kill the stub once half the cases are recorded, time the stop, restart it, re-run."""
    records = tmp / "dies.sqlite"
    stub, port = start_stub()
    url = f"http://127.0.0.1:{port}/v1"
    run = subprocess.Popen(run_command(cases, url, records), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    while len(recorded(records)) < n // 2 and run.poll() is None:
        time.sleep(0.05)
    stub.send_signal(signal.SIGKILL)
    stub.wait()
    killed = time.perf_counter()
    out, err = run.communicate()
    stop_s = time.perf_counter() - killed
    first = recorded(records)
    stub, _ = start_stub(port)
    try:
        wall, code, _ = timed_run(run_command(cases, url, records))
    finally:
        stub.send_signal(signal.SIGTERM)
        stub.wait()
    ids = recorded(records)
    audit = subprocess.run([str(BIN / "authpairs"), "audit", "bench", "--records", str(records)],
                           capture_output=True, text=True)
    stopped = next((line for line in out.splitlines() if line.startswith("stopped:")), "")
    return {"scenario": "server dies half-way", "recorded_before_kill": len(first),
            "stop_after_kill_s": round(stop_s, 2), "first_exit_code": run.returncode,
            "stopped_line": stopped[:200], "rerun_wall_s": round(wall, 2),
            "rerun_exit_code": code, "recorded_after_rerun": len(ids),
            "distinct_after_rerun": len(set(ids)), "audit_exit_code": audit.returncode,
            "met": stop_s <= TARGET_S and len(ids) == len(set(ids)) == n
            and audit.returncode == 0, "stderr_lines": len(err.splitlines())}


def markdown(result: dict[str, object]) -> str:
    """The results section of docs/benchmarks.md."""
    rows = result["refused"]
    died = result["dies_half_way"]
    assert isinstance(rows, list) and isinstance(died, dict)
    load = "/".join(f"{v:.1f}" for v in result["load_average"])  # type: ignore[attr-defined]
    lines = [f"## Fail fast (bench/bench_fail_fast.py, {time.strftime('%Y-%m-%d')}, "
             f"{result['cases']} generated cases, {result['concurrency']} in flight, "
             f"load {load})", "",
             "| scenario | wall | exit | records file | last line | target 10 s |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        name = "refused port, " + ("preflight" if row["preflight"] else "--no-preflight")
        lines.append(f"| {name} | {row['wall_s']} s | {row['exit_code']} | "
                     f"{'created' if row['records_file'] else 'none'} | "
                     f"`{str(row['last_line'])[:110]}` | {'met' if row['met'] else 'missed'} |")
    lines += ["", f"Server killed once {died['recorded_before_kill']} cases were recorded: the "
              f"run stopped {died['stop_after_kill_s']} s after the kill (exit "
              f"{died['first_exit_code']}, {died['stderr_lines']} lines on stderr; "
              f"`{died['stopped_line'][:90]}...`). The same command after a restart of the "
              f"server: {died['rerun_wall_s']} s, exit {died['rerun_exit_code']}, "
              f"{died['recorded_after_rerun']} case records of which "
              f"{died['distinct_after_rerun']} distinct, audit exit "
              f"{died['audit_exit_code']}: {'met' if died['met'] else 'missed'}.", ""]
    return "\n".join(lines)


def main() -> None:
    """Run both scenarios and print (and with ``--write`` store) the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="authpairs-failfast-") as folder:
        tmp = Path(folder)
        cases = write_cases(tmp, args.cases)
        rows = refused(tmp, cases)
        died = dies_half_way(tmp, cases, args.cases)
    result = {"cases": args.cases, "concurrency": CONCURRENCY, "target_s": TARGET_S,
              "refused": rows, "dies_half_way": died, "load_average": os.getloadavg()}
    print(json.dumps(result, indent=1))
    if args.write:
        (HERE / "results" / "fail_fast.json").write_text(json.dumps(result, indent=1) + "\n")
        (HERE / "results" / "fail_fast.md").write_text(markdown(result))


if __name__ == "__main__":
    main()
