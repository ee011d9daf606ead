"""Where the overhead benchmark's time goes: the phases of `authpairs run` beside the bare client.

Both run as ``bench_overhead.py`` runs them (the same generated cases and bodies, the same stub,
the same command lines), each started through a probe that stamps moments with the wall clock
(``time.time()``, comparable across processes):

* ``libraries loaded`` -- the interpreter started and the libraries imported (the bare client:
  httpx; authpairs: ``authpairs.cli`` and ``authpairs.runs.api``, which ``run`` imports anyway);
* ``cases checked`` -- authpairs only: the command line read and every case validated, hashed and
  checked (``authpairs.runs.api.open_run_cases`` returned);
* ``first request`` / ``last answer`` -- the first ``httpx.AsyncClient.send`` began, the last one
  returned;
* ``exited`` -- the parent saw the process end (authpairs: the summary written, the records
  file closed).

The requests phase is split in two: the mean time of one request (send to answer, what the
server and the client's event loop take) and the time each worker spends between its requests
(reading the answer, recording, preparing the next request, and waiting for the event loop).

Each phase is the time from the previous stamp; the table gives the median of each over the
rounds and the difference between the two clients, so a change's effect on start-up, the
requests or the end shows on its own line.

    python bench/bench_phases.py [--latency 50] [--jitter 0] [--repeat 5] [--cases 2000]
        [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_overhead import (  # noqa: E402
    CONCURRENCY,
    commands,
    compile_authpairs,
    recorded_command,
    start_stub,
    write_inputs,
)

VARIANTS = ("bare httpx", "authpairs run")
PHASES = ("libraries loaded", "cases checked", "first request", "last answer", "exited")


def _probe(stamps_path: str, command: list[str]) -> None:
    """Run ``command`` (``python SCRIPT ...`` for the bare client, ``authpairs ...``) in this
    process, stamping its moments into ``stamps_path`` (JSON) as it exits."""
    import atexit

    import httpx

    stamps: dict[str, float] = {}
    send = httpx.AsyncClient.send

    async def stamped_send(self: httpx.AsyncClient, *args: object, **kwargs: object
                           ) -> httpx.Response:
        started = time.time()
        stamps.setdefault("first request", started)
        reply = await send(self, *args, **kwargs)  # type: ignore[arg-type]
        stamps["last answer"] = time.time()
        stamps["in requests"] = stamps.get("in requests", 0.0) + stamps["last answer"] - started
        stamps["requests"] = stamps.get("requests", 0) + 1
        return reply

    httpx.AsyncClient.send = stamped_send  # type: ignore[method-assign]
    atexit.register(lambda: Path(stamps_path).write_text(json.dumps(stamps)))
    if command[1].endswith(".py"):  # the bare client: python SCRIPT ARGS
        stamps["libraries loaded"] = time.time()
        sys.argv = command[1:]
        runpy.run_path(command[1], run_name="__main__")
        return
    import authpairs.cli
    import authpairs.runs.api as run_api

    stamps["libraries loaded"] = time.time()
    open_run_cases = run_api.open_run_cases

    def stamped_open(*args: object, **kwargs: object) -> object:
        cases = open_run_cases(*args, **kwargs)  # type: ignore[arg-type]
        stamps["cases checked"] = time.time()
        return cases

    run_api.open_run_cases = stamped_open  # type: ignore[assignment]
    sys.argv = ["authpairs", *command[1:]]
    authpairs.cli.main()


def _one(command: list[str], env: dict[str, str], tmp: Path, tag: str
         ) -> tuple[dict[str, float], dict[str, float]]:
    """The phases of one run of ``command``, and the split of its requests phase (see the
    module docstring), in seconds."""
    stamps_path = tmp / f"stamps-{tag}.json"
    started = time.time()
    subprocess.run([sys.executable, __file__, "--probe", str(stamps_path), "--", *command],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stamps = {**json.loads(stamps_path.read_text()), "exited": time.time()}
    phases, previous = {}, started
    for name in PHASES:
        if name in stamps:
            phases[name] = stamps[name] - previous
            previous = stamps[name]
    split = {"a request": stamps["in requests"] / stamps["requests"],
             "between requests": phases["last answer"] - stamps["in requests"] / CONCURRENCY}
    return phases, split


def main() -> None:
    """Parse arguments, time the phases of both clients, print (and store) the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=50.0)
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="the stub's waits drawn from +-this fraction of --latency")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.probe:
        _probe(args.probe, rest[1:] if rest[:1] == ["--"] else rest)
        return
    compile_authpairs()
    runs: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {
        variant: [] for variant in VARIANTS}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        cases, bodies = write_inputs(tmp, args.cases)
        stub, url = start_stub(args.latency, args.jitter)
        env = {**os.environ, "STUB_API_KEY": "unused"}
        try:
            for round_no in range(args.repeat):
                for variant in VARIANTS:
                    tag = f"{round_no}-{variant.split()[0]}"
                    phases, split = _one(commands(variant, cases, bodies, url, tmp, tag), env,
                                         tmp, tag)
                    runs[variant].append((phases, split))
                    print(f"{variant:<14} " + "  ".join(f"{k} {v:.3f}" for k, v in phases.items())
                          + f"  total {sum(phases.values()):.3f} s", flush=True)
        finally:
            stub.terminate()
            stub.wait()
    table = _table(runs)
    load = "/".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\n{table}\n\nLoad average {load} on {os.cpu_count()} CPUs.")
    if args.write:
        stamp = datetime.now(UTC).date().isoformat()
        command = recorded_command()
        waits = f" +-{args.jitter:.0%}" if args.jitter else ""
        (HERE / "results" / "phases.md").write_text(
            f"## Where the overhead goes ({stamp}, {os.cpu_count()} CPUs, {args.cases:,} "
            f"prompts, stub answering after {args.latency:g} ms{waits}, {args.repeat} rounds)\n\n"
            f"`python bench/bench_phases.py {command}` (whole processes as `bench_overhead.py` "
            f"runs them; load average {load} at the end). Each phase runs from the stamp above "
            f"it; medians over the rounds.\n\n{table}\n", encoding="utf-8")


def _table(runs: dict[str, list[tuple[dict[str, float], dict[str, float]]]]) -> str:
    """The median of every phase for both clients and their difference, as Markdown."""
    lines = ["| phase (ends when) | bare httpx (s) | authpairs run (s) | difference (s) |",
             "|---|---|---|---|"]
    totals = {variant: statistics.median(sum(r[0].values()) for r in rows)
              for variant, rows in runs.items()}

    def row(label: str, part: int, key: str, digits: int = 3) -> None:
        medians = {variant: statistics.median(r[part].get(key, 0.0) for r in rows)
                   for variant, rows in runs.items()}
        bare, mine = medians["bare httpx"], medians["authpairs run"]
        lines.append(f"| {label} | {bare:.{digits}f} | {mine:.{digits}f} | "
                     f"{mine - bare:+.{digits}f} |")

    for phase in PHASES:
        row(phase, 0, phase)
        if phase == "last answer":
            row("... of which one request, send to answer (mean)", 1, "a request", 4)
            row("... of which each worker between its requests", 1, "between requests")
    bare, mine = totals["bare httpx"], totals["authpairs run"]
    lines.append(f"| whole run | {bare:.3f} | {mine:.3f} | {mine - bare:+.3f} "
                 f"({mine / bare:.3f}x) |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
