"""The overhead benchmark's 0 ms run counted in instructions, which the machine's load leaves be.

At 0 ms the client's CPU is the bottleneck, so ``bench_overhead.py``'s wall times follow it; but
on a shared 2-core machine they swing by several percent from round to round, more than the
differences a change is measured for. Here the same command lines (the same generated cases and
bodies, the same stub answering at once, 16 in flight) run under ``valgrind --tool=callgrind``,
which counts the instructions each process executes: ``bare httpx``, ``authpairs run`` and, with
``--against SRC``, ``authpairs run (against)`` from that source.

Each variant runs at two sizes; the difference divided by the difference in cases is the cost of
one case (requests, parsing, recording), the rest is start-up (interpreter, imports, the
dataset's check and the summary). Counts still move a little with the event loop's timing
(how often it polls), far less than wall time does.

    python bench/bench_instructions.py [--sizes 250,1250] [--against SRC] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from bench_overhead import (
    AGAINST,
    VARIANTS,
    _env_of,
    commands,
    compile_authpairs,
    recorded_command,
    start_stub,
    write_inputs,
)

HERE = Path(__file__).resolve().parent
_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(command: list[str], env: dict[str, str], out: Path) -> int:
    """The instructions ``command`` executed (its own process, under callgrind)."""
    process = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    found = _COLLECTED.search(process.stderr)
    if process.returncode != 0 or found is None:
        raise RuntimeError(f"{command[:3]} failed under valgrind: {process.stderr[-2000:]}")
    return int(found.group(1))


def count(tmp: Path, sizes: tuple[int, int], variants: list[str], against: Path | None
          ) -> list[dict[str, object]]:
    """Instructions of every variant at both sizes, two processes at a time."""
    jobs = []
    for n in sizes:
        cases, bodies = write_inputs(tmp, n)
        jobs += [(variant, n, cases, bodies) for variant in variants]
    stub, url = start_stub(0.0)
    env = {**os.environ, "STUB_API_KEY": "unused", "STUB_BASE_URL": url}

    def one(job: tuple[str, int, Path, Path]) -> dict[str, object]:
        variant, n, cases, bodies = job
        tag = f"i{n}-{variants.index(variant)}"
        total = instructions(commands(variant, cases, bodies, url, tmp, tag),
                             _env_of(variant, env, against), tmp / f"{tag}.callgrind")
        print(f"{variant:<24} {n:>6} cases  {total / 1e9:8.3f} G instructions", flush=True)
        return {"variant": variant, "cases": n, "instructions": total}

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(one, jobs))
    finally:
        stub.terminate()
        stub.wait()


def summary(rows: list[dict[str, object]]) -> str:
    """Per-case and start-up instructions of each variant as Markdown, with the ratios."""
    small, large = sorted({int(r["cases"]) for r in rows})  # type: ignore[call-overload]
    totals = {(str(r["variant"]), int(r["cases"])): int(r["instructions"])  # type: ignore[call-overload]
              for r in rows}
    lines = ["| variant | per case (M) | start-up (G) | "
             f"{large:,} cases (G) | per case, ratio to bare httpx |", "|---|---|---|---|---|"]
    per_case = {}
    for variant in dict.fromkeys(str(r["variant"]) for r in rows):
        per_case[variant] = (totals[variant, large] - totals[variant, small]) / (large - small)
        startup = totals[variant, small] - small * per_case[variant]
        lines.append(f"| {variant} | {per_case[variant] / 1e6:.3f} | {startup / 1e9:.3f} | "
                     f"{totals[variant, large] / 1e9:.3f} | "
                     f"{per_case[variant] / per_case['bare httpx']:.2f} |")
    verdicts = []
    if AGAINST in per_case:
        mine, theirs = per_case["authpairs run"], per_case[AGAINST]
        whole = totals["authpairs run", large] / totals[AGAINST, large]
        verdicts.append(f"* per case: authpairs {mine / 1e6:.3f} M instructions against "
                        f"{theirs / 1e6:.3f} M from the source it is measured against: "
                        f"{mine / theirs:.3f}x; the whole {large:,}-case run {whole:.3f}x")
    return "\n".join([*lines, "", *verdicts])


def main() -> None:
    """Parse arguments, count, print (and with --write store) the results."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="250,1250", help="the two numbers of cases")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout's src folder, counted beside this one")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    small, large = sorted(int(x) for x in args.sizes.split(","))
    compile_authpairs(args.against)
    variants = [*VARIANTS[:2], *([AGAINST] if args.against else [])]
    with tempfile.TemporaryDirectory() as name:
        rows = count(Path(name), (small, large), variants, args.against)
    text = summary(rows)
    print(text)
    if args.write:
        stamp = datetime.now(UTC).date().isoformat()
        (HERE / "results" / "instructions.md").write_text(
            f"## Instructions at 0 ms ({stamp}, {small:,} and {large:,} prompts, 16 in flight)\n\n"
            f"`python bench/bench_instructions.py {recorded_command()}` (whole processes under "
            "`valgrind --tool=callgrind`, the command lines of `bench_overhead.py`; the "
            "counts barely move with the machine's load).\n\n" + text + "\n")
        (HERE / "results" / "instructions.json").write_text(
            json.dumps({"counts": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
