"""Overhead at real latencies, side by side in one run, whole processes timed as a user runs them.

The same 2,000 prompts (direct interface, generated cases) go to one local OpenAI-compatible stub
on 127.0.0.1 that answers each after 50 ms (a fast guardrail model) and, in a second round, at
once, with 16 requests in flight, through:

* ``bare httpx`` -- ``bench/bare_client.py``: the pre-rendered bodies POSTed by httpx workers,
  nothing recorded (the floor; rendering is done before its clock starts);
* ``authpairs run`` -- the CLI as a user runs it (``--backend openai --base-url ...
  --concurrency 16 --no-enforce``): start-up, dataset load and validation, render, hash, call,
  strict parse, one SQLite case record + attempt per case;
* ``inspect eval`` -- Inspect AI's CLI running the ``authpairs/cases`` task on the same file.

Each command runs in its own process; wall time and peak RSS are measured from outside
(``os.wait4``); variants alternate within each repeat (every other repeat in the opposite
order) so their ratios are comparable on a noisy machine, and the verdict is the median ratio.
A second part runs ``authpairs run --baseline always-allow`` on 2,000, 20,000 and 100,000 cases
for peak memory against the number of cases.
The stub is pinned to the last CPU (it stands for a model server elsewhere) where ``taskset``
exists.

With ``--against SRC`` (another checkout's ``src`` folder) the same CLI also runs from that
source (``PYTHONPATH=SRC``) as the variant ``authpairs run (against)``, in the same rounds, so a
change is measured against the revision before it; ``--no-inspect`` leaves Inspect AI out.

    python bench/bench_overhead.py [--cases 2000] [--repeat 3] [--latencies 50,0]
        [--memory 2000,20000,100000] [--against SRC] [--no-inspect] [--write]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CONCURRENCY = 16
VARIANTS = ("bare httpx", "authpairs run", "inspect eval")
AGAINST = "authpairs run (against)"
TARGETS = {50.0: 1.10, 0.0: 1.25}  # authpairs / bare httpx, by stub latency in ms


def write_inputs(tmp: Path, n: int) -> tuple[Path, Path]:
    """``n`` generated cases as JSONL, and the bodies authpairs sends for them (for the floor),
    written by a child process: a forked child's peak RSS starts from its parent's, so the
    parent must not hold the cases."""
    subprocess.run([sys.executable, __file__, "--write-inputs", str(tmp), str(n)], check=True)
    return tmp / f"cases-{n}.jsonl", tmp / f"bodies-{n}.jsonl"


def _write_inputs_here(tmp: Path, n: int) -> None:
    sys.path.insert(0, str(HERE))
    from bench_harness import generated_cases

    from authpairs.backends.config import SamplingConfig
    from authpairs.backends.openai_http import build_payload
    from authpairs.cases.dataset import Dataset
    from authpairs.review.interfaces import get_interface

    dataset = Dataset("generated", generated_cases(n))  # type: ignore[arg-type]
    cases = tmp / f"cases-{n}.jsonl"
    dataset.write_jsonl(cases)
    interface = get_interface("direct")
    bodies = tmp / f"bodies-{n}.jsonl"
    bodies.write_text("".join(
        json.dumps(build_payload("stub", interface.render(c.public), SamplingConfig(), {}))
        + "\n" for c in dataset))


def start_stub(latency_ms: float, jitter: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    """The stub server, pinned to the last CPU where possible, and its base URL (``jitter``:
    see ``openai_stub.py --jitter``)."""
    command = [sys.executable, str(HERE / "openai_stub.py"), "--latency-ms", str(latency_ms),
               "--jitter", str(jitter)]
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        command = ["taskset", "-c", str((os.cpu_count() or 1) - 1), *command]
    stub = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert stub.stdout is not None
    port = stub.stdout.readline().split()[1]
    return stub, f"http://127.0.0.1:{port}/v1"


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``command`` to completion: wall seconds and peak RSS in MiB (from ``wait4``)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command[:3]} failed: {stderr[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def commands(variant: str, cases: Path, bodies: Path, url: str, tmp: Path, tag: str
             ) -> list[str]:
    """The command line of one variant."""
    if variant == "bare httpx":
        return [sys.executable, str(HERE / "bare_client.py"), str(bodies), "--base-url", url,
                "--concurrency", str(CONCURRENCY)]
    if variant in ("authpairs run", AGAINST):
        return [str(BIN / "authpairs"), "run", "--dataset", str(cases), "--split", "all",
                "--interface", "direct", "--backend", "openai", "--base-url", url, "--model",
                "stub", "--concurrency", str(CONCURRENCY), "--no-enforce", "--records",
                str(tmp / f"{tag}.sqlite"), "--run-id", tag, "--quiet"]
    return [str(BIN / "inspect"), "eval", "authpairs/cases", "-T", f"dataset={cases}",
            "-T", "interface=direct", "-T", "split=all", "-T", "enforce=false",
            "--model", "openai-api/stub/stub", "--max-connections", str(CONCURRENCY),
            "--log-dir", str(tmp / f"logs-{tag}"), "--display", "none"]


def overhead(tmp: Path, n: int, latencies: list[float], repeat: int, jitter: float = 0.0,
             variants: Sequence[str] = VARIANTS, against: Path | None = None
             ) -> list[dict[str, object]]:
    """Wall time and peak RSS of every variant at every latency (``jitter``: see
    ``openai_stub.py --jitter``), ``repeat`` times; ``against`` is the source the variant
    ``AGAINST`` runs from."""
    cases, bodies = write_inputs(tmp, n)
    rows: list[dict[str, object]] = []
    for latency in latencies:
        stub, url = start_stub(latency, jitter)
        env = {**os.environ, "STUB_API_KEY": "unused", "STUB_BASE_URL": url,
               "INSPECT_LOG_LEVEL": "error"}
        try:
            for round_no in range(repeat):
                # every other round in the opposite order, so no variant always runs first
                for variant in variants if round_no % 2 == 0 else variants[::-1]:
                    tag = f"r{latency:g}-{round_no}-{variants.index(variant)}"
                    wall, rss = timed(commands(variant, cases, bodies, url, tmp, tag),
                                      _env_of(variant, env, against))
                    rows.append({"latency_ms": latency, "round": round_no, "variant": variant,
                                 "wall_s": wall, "peak_rss_mib": rss})
                    print(f"{latency:>4g} ms  {variant:<14} {wall:7.2f} s  {rss:6.0f} MiB",
                          flush=True)
        finally:
            stub.terminate()
            stub.wait()
    return rows


def _env_of(variant: str, env: dict[str, str], against: Path | None) -> dict[str, str]:
    """The environment a variant runs in: ``AGAINST`` imports authpairs from ``against``."""
    if variant == AGAINST and against is not None:
        return {**env, "PYTHONPATH": str(against)}
    return env


def memory(tmp: Path, sizes: list[int], against: Path | None = None
           ) -> list[dict[str, object]]:
    """Peak RSS of an always-allow run (no model) against the number of cases (and, with
    ``against``, the same runs from that source beside each)."""
    rows: list[dict[str, object]] = []
    for n in sizes:
        cases, _ = write_inputs(tmp, n)
        for variant in ("authpairs run", AGAINST) if against else ("authpairs run",):
            tag = f"memory-{n}-{len(rows)}"
            command = [str(BIN / "authpairs"), "run", "--dataset", str(cases), "--split", "all",
                       "--baseline", "always-allow", "--no-enforce", "--records",
                       str(tmp / f"{tag}.sqlite"), "--run-id", tag, "--quiet"]
            wall, rss = timed(command, _env_of(variant, dict(os.environ), against))
            rows.append({"cases": n, "variant": variant, "wall_s": wall, "peak_rss_mib": rss})
            print(f"always-allow {n:>7} cases {variant:<24} {wall:7.2f} s  {rss:6.0f} MiB",
                  flush=True)
    return rows


def summary(rows: list[dict[str, object]], mem: list[dict[str, object]],
            targets: dict[float, float] = TARGETS) -> str:
    """The results as Markdown: medians, median back-to-back ratios, verdicts against
    ``targets`` (ratio to the bare client by latency)."""
    lines = ["| stub latency | variant | median wall (s) | median peak RSS (MiB) | "
             "median ratio to bare httpx |", "|---|---|---|---|---|"]
    verdicts = []
    for latency in sorted({float(r["latency_ms"]) for r in rows}, reverse=True):  # type: ignore[arg-type]
        mine = [r for r in rows if r["latency_ms"] == latency]
        floor = {r["round"]: float(r["wall_s"]) for r in mine if r["variant"] == "bare httpx"}  # type: ignore[arg-type]
        ratios: dict[str, float] = {}
        for variant in dict.fromkeys(str(r["variant"]) for r in mine):
            these = [r for r in mine if r["variant"] == variant]
            wall = statistics.median(float(r["wall_s"]) for r in these)  # type: ignore[arg-type]
            rss = statistics.median(float(r["peak_rss_mib"]) for r in these)  # type: ignore[arg-type]
            ratios[variant] = statistics.median(
                float(r["wall_s"]) / floor[r["round"]] for r in these)  # type: ignore[arg-type]
            lines.append(f"| {latency:g} ms | {variant} | {wall:.2f} | {rss:.0f} | "
                         f"{ratios[variant]:.2f} |")
        target = targets.get(latency)
        if target is not None:
            ok = ratios["authpairs run"] <= target
            verdicts.append(f"* {latency:g} ms: authpairs {ratios['authpairs run']:.2f}x the "
                            f"bare client (target <= {target:.2f}x): {'met' if ok else 'MISSED'}")
        if AGAINST in ratios:
            verdicts.append(f"* {latency:g} ms: authpairs {ratios['authpairs run']:.3f}x and "
                            f"the source it is measured against {ratios[AGAINST]:.3f}x the bare "
                            f"client: {ratios['authpairs run'] / ratios[AGAINST]:.3f}x")
        if "inspect eval" in ratios:
            speedup = ratios["inspect eval"] / ratios["authpairs run"]
            verdicts.append(f"* {latency:g} ms: Inspect AI takes {speedup:.1f}x authpairs' "
                            f"time (target >= 4x): {'met' if speedup >= 4 else 'MISSED'}")
    if mem:
        lines += ["", "| always-allow cases | variant | wall (s) | peak RSS (MiB) |",
                  "|---|---|---|---|"]
        lines += [f"| {r['cases']:,} | {r['variant']} | "
                  f"{float(r['wall_s']):.2f} | "  # type: ignore[arg-type]
                  f"{float(r['peak_rss_mib']):.0f} |" for r in mem]  # type: ignore[arg-type]
        mine = [r for r in mem if r["variant"] == "authpairs run"]
        first, last = mine[0], mine[-1]
        growth = float(last["peak_rss_mib"]) / float(first["peak_rss_mib"])  # type: ignore[arg-type]
        verdicts.append(f"* peak RSS at {last['cases']:,} cases is {growth:.2f}x the peak at "
                        f"{first['cases']:,} (target <= 1.5x): "
                        f"{'met' if growth <= 1.5 else 'MISSED'}")
    return "\n".join([*lines, "", *verdicts])


def main() -> None:
    """Parse arguments, run both parts, print (and with --write store) the results."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latencies", default="50,0")
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="the stub's waits drawn from +-this fraction of each latency; the "
                        "targets are set for exact waits, so a run with jitter is written to "
                        "results/overhead_jitter.* and judged against none")
    parser.add_argument("--memory", default="2000,20000,100000")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout's src folder, run beside this one")
    parser.add_argument("--no-inspect", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--write-inputs", nargs=2, metavar=("DIR", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_inputs:
        _write_inputs_here(Path(args.write_inputs[0]), int(args.write_inputs[1]))
        return
    latencies = [float(x) for x in args.latencies.split(",") if x]
    sizes = [int(x) for x in args.memory.split(",") if x]
    compile_authpairs(args.against)
    variants = [*VARIANTS[:2], *([AGAINST] if args.against else []),
                *([] if args.no_inspect else VARIANTS[2:])]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        rows = (overhead(tmp, args.cases, latencies, args.repeat, args.jitter, variants,
                         args.against) if latencies else [])
        mem = memory(tmp, sizes, args.against) if sizes else []
    load_after = os.getloadavg()
    text = summary(rows, mem, TARGETS if not args.jitter else {})
    load = (f"Load average (1, 5, 15 min) {_load(load_before)} at the start and "
            f"{_load(load_after)} at the end on {os.cpu_count()} CPUs: with other jobs on the "
            "machine, only the ratios within a round compare.")
    print(text)
    print(load)
    if args.write:
        stamp = datetime.now(UTC).date().isoformat()
        name = ("overhead_against" if args.against else
                "overhead_jitter" if args.jitter else "overhead")
        command = recorded_command()
        waits = f", waits +-{args.jitter:.0%} of each latency" if args.jitter else ""
        (HERE / "results" / f"{name}.md").write_text(
            f"## Overhead at real latencies ({stamp}, {os.cpu_count()} CPUs, {args.cases:,} "
            f"prompts, {CONCURRENCY} in flight, {args.repeat} rounds{waits})\n\n"
            f"`python bench/bench_overhead.py {command}` (whole processes, stub pinned to the "
            f"last CPU). {load}\n\n{text}\n")
        (HERE / "results" / f"{name}.json").write_text(json.dumps(
            {"overhead": rows, "memory": mem, "load_average": {"start": load_before,
                                                               "end": load_after}},
            indent=1) + "\n")


def recorded_command() -> str:
    """This benchmark's arguments as a results file records them: shell-quoted, ``--write``
    left out."""
    return shlex.join(arg for arg in sys.argv[1:] if arg != "--write")


def compile_authpairs(against: Path | None = None) -> None:
    """Compile authpairs' modules (and those of the ``against`` source), as pip compiles an
    installed wheel: an editable install where Python writes no bytecode
    (``PYTHONDONTWRITEBYTECODE``) would otherwise compile every module again in every process
    timed."""
    import authpairs

    compileall.compile_dir(Path(authpairs.__file__).parent, quiet=1)
    if against is not None:
        compileall.compile_dir(against / "authpairs", quiet=1)


def _load(values: tuple[float, float, float]) -> str:
    return "/".join(f"{v:.1f}" for v in values)


if __name__ == "__main__":
    main()
