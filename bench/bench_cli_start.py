"""Benchmark of the command line's start: whole ``authpairs`` processes, timed as a user runs them.

Targets (issue 24, point 4), wall clock on an idle two-core machine: ``authpairs --help`` and
``authpairs runs`` on a small records file <= 0.5 s, ``authpairs score RUN`` <= 1 s.

Each command is run as a new process through an ``authpairs`` script like the one pip installs
(calling the revision's own ``[project.scripts]`` entry point), once with this checkout's sources
and once with the sources of a baseline revision (``git archive REV src``, put first on
``PYTHONPATH``), alternating the two so both see the same machine load. Each
variant first writes its own small records file (the 8-case examples dataset, an always-allow
baseline, no enforcement) with its own version, so neither reads a file of the other's format.
``python -c pass`` is measured alongside as the floor every Python process pays. Reported: the
median, minimum and maximum wall time over the repetitions, and the median CPU time (user +
system of the child), which depends less on what else the machine runs.

    python bench/bench_cli_start.py [--repeat 15] [--baseline REV] [--revision REV] [--write]

``--revision`` measures a committed revision instead of the working tree (whose sources may be
half-edited while the benchmark runs).

``--write`` writes ``bench/results/cli_start.md`` (the section of docs/benchmarks.md) and the
raw per-run numbers to ``bench/results/cli_start.json``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUN_ID = "bench-small"

TARGETS = {"--help": 0.5, "runs": 0.5, "score": 1.0}
"""Wall-clock targets in seconds, by command."""


@dataclass
class Variant:
    """One version of the sources: where they are and the records file it wrote."""

    name: str
    src: Path
    records: Path
    script: Path
    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The environment of a child process that imports this variant's sources."""
        return {**os.environ, "PYTHONPATH": str(self.src), "COLUMNS": "100"}

    def commands(self) -> dict[str, list[str]]:
        """The measured command lines, by name."""
        script = str(self.script)
        return {"python -c pass": [sys.executable, "-c", "pass"],
                "--help": [script, "--help"],
                "runs": [script, "runs", "--records", str(self.records)],
                "score": [script, "score", RUN_ID, "--records", str(self.records)]}


def console_script(revision: str | None, path: Path) -> Path:
    """An ``authpairs`` script at ``path`` as pip writes one, calling the entry point that
    ``revision``'s pyproject.toml names (None: the working tree's)."""
    text = ((ROOT / "pyproject.toml").read_text(encoding="utf-8") if revision is None else
            subprocess.run(["git", "show", f"{revision}:pyproject.toml"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout)
    module, _, attribute = tomllib.loads(text)["project"]["scripts"]["authpairs"].partition(":")
    path.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {attribute}\n"
                    f"sys.argv[0] = 'authpairs'\nsys.exit({attribute}())\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def extract_sources(revision: str, into: Path) -> Path:
    """``src/`` of ``revision`` (a git revision of this repository), unpacked under ``into``."""
    archive = into / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", revision, "src"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def write_records(variant: Variant) -> None:
    """A small run (8 cases, always-allow, no enforcement) written by the variant's own code."""
    code = ("import authpairs\n"
            f"authpairs.run({{'dataset': 'examples', 'reviewer': {{'baseline': 'always-allow'}}, "
            f"'enforce': False, 'run_id': {RUN_ID!r}, 'records': {str(variant.records)!r}}})\n")
    subprocess.run([sys.executable, "-c", code], env=variant.env(), check=True,
                   capture_output=True)


def time_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process; it must exit 0."""
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr is not None else ""
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}: {stderr[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(variants: list[Variant], repeat: int) -> None:
    """Run every command of every variant ``repeat`` times, interleaved, each variant's sources
    compiled first (as an installed package is, even where Python writes no bytecode itself)."""
    for variant in variants:
        compileall.compile_dir(variant.src, quiet=1)
    for variant in variants:  # one untimed round: the file cache is warm
        for command in variant.commands().values():
            time_once(command, variant.env())
    for _ in range(repeat):
        for name in variants[0].commands():
            for variant in variants:
                wall, cpu = time_once(variant.commands()[name], variant.env())
                variant.wall.setdefault(name, []).append(wall)
                variant.cpu.setdefault(name, []).append(cpu)


def table(variants: list[Variant]) -> list[str]:
    """The results as markdown table rows."""
    head = ["| command | target |"
            + "".join(f" {v.name}: median wall (min-max) | {v.name}: median CPU |"
                      for v in variants),
            "|---|---|" + "---|---|" * len(variants)]
    rows = []
    for name in variants[0].commands():
        target = f"<= {TARGETS[name]} s" if name in TARGETS else "(floor)"
        cells = "".join(
            f" {statistics.median(v.wall[name]):.3f} s ({min(v.wall[name]):.3f}-"
            f"{max(v.wall[name]):.3f}) | {statistics.median(v.cpu[name]):.3f} s |"
            for v in variants)
        shown = f"`authpairs {name}`" if name in TARGETS else f"`{name}`"
        rows.append(f"| {shown} | {target} |{cells}")
    return head + rows


def main() -> None:
    """Measure, print the table, and with --write save the section and the raw numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--baseline", default=None,
                        help="git revision to measure beside this checkout (default: none)")
    parser.add_argument("--revision", default=None,
                        help="git revision to measure instead of the working tree")
    parser.add_argument("--write", action="store_true",
                        help="write bench/results/cli_start.md and cli_start.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="authpairs-cli-bench-") as tmp:
        work = Path(tmp)
        if args.revision is None:
            variants = [Variant("this checkout", ROOT / "src", work / "now.sqlite",
                                console_script(None, work / "authpairs-now"))]
        else:
            now = work / "now"
            now.mkdir()
            variants = [Variant(f"revision {args.revision}",
                                extract_sources(args.revision, now), work / "now.sqlite",
                                console_script(args.revision, work / "authpairs-now"))]
        if args.baseline is not None:
            before = work / "before"
            before.mkdir()
            variants.insert(0, Variant(f"baseline {args.baseline}",
                                       extract_sources(args.baseline, before),
                                       work / "before.sqlite",
                                       console_script(args.baseline, work / "authpairs-before")))
        for variant in variants:
            write_records(variant)
        load_before = os.getloadavg()[0]
        measure(variants, args.repeat)
        load_after = os.getloadavg()[0]
    rows = table(variants)
    print("\n".join(rows))
    if not args.write:
        return
    date = datetime.now(UTC).strftime("%Y-%m-%d")
    section = [
        f"## CLI start (bench/bench_cli_start.py, {date})", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {load_before:.1f} before and "
        f"{load_after:.1f} after; {args.repeat} repetitions of each command as a new process "
        "through an `authpairs` script as pip installs it (the revision's own entry point), "
        "the variants alternating; `runs` and "
        "`score` read an 8-case records file. Wall times include the interpreter's own start "
        "(the `python -c pass` row). With a load average above the number of cores, a process "
        "waits for a core and its wall time exceeds its CPU time by that wait; the CPU column "
        "is what the command itself costs.", "",
        *rows, "",
        "Registering the commands imports only typer, rich and the command modules; each "
        "command imports what it uses (the statistics, the report builder, the run path) when "
        "it runs. `tests/architecture/test_cli_start.py` checks that importing the CLI and "
        "building every command's help loads none of numpy, scipy, matplotlib, pandas, "
        "pyarrow, jinja2, httpx, openai, inspect_ai, nemoguardrails, pydantic, jsonschema or "
        "yaml. Reproduce with `python bench/bench_cli_start.py --baseline REV "
        "[--revision REV] --write`.",
    ]
    (HERE / "results" / "cli_start.md").write_text("\n".join(section) + "\n", encoding="utf-8")
    raw = {"date": date, "machine": platform.machine(), "cores": os.cpu_count(),
           "python": platform.python_version(), "repeat": args.repeat,
           "load_before": load_before, "load_after": load_after,
           "variants": {v.name: {"wall_s": v.wall, "cpu_s": v.cpu} for v in variants}}
    (HERE / "results" / "cli_start.json").write_text(json.dumps(raw, indent=1) + "\n",
                                                     encoding="utf-8")
    print(f"wrote {HERE / 'results' / 'cli_start.md'} and cli_start.json")


if __name__ == "__main__":
    main()
