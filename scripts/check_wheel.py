"""Build the authpairs wheel and use it as a stranger would: installed, not the checkout.

    python3 scripts/check_wheel.py [--sources DIR] [--keep]

Run by ``.ci/run``. Every step happens in a fresh temporary folder (removed at the end unless
``--keep``):

1. the working tree's tracked (and not ignored) files are copied out, and the wheel is built
   from the copy with a pinned build backend (:data:`BUILD_REQUIREMENTS`, no build isolation, so
   the build does not depend on what PyPI serves today);
2. the wheel must hold every tracked file under ``src/authpairs`` (modules and package data:
   scenario YAML, interface and report templates, guardrail cards, the sources manifest, ...)
   and nothing else of the checkout;
3. a fresh virtual environment gets the wheel and the dependencies it declares, at the versions
   pinned by ``requirements.lock`` (``pip install -c requirements.lock``: a dependency missing
   from the wheel's metadata fails here instead of being hidden by the lock);
4. from a folder outside the checkout, with ``PYTHONPATH`` unset and a home of its own,
   ``authpairs`` must import from that environment's site-packages, then: two language-track
   baseline runs, ``score``, ``report`` and ``audit``; ``data fetch-sources --from`` a git mirror
   of the staged upstream sources built here (no network), ``data build-native`` and a
   native-track baseline run with its ``score``.

Each step's time is printed; the script exits 1 on the first failure, with the command's output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD_REQUIREMENTS = ("setuptools==80.9.0",)
"""The build backend, pinned (pyproject's ``license = "Apache-2.0"`` needs setuptools >= 77)."""
LOCK = REPO / "requirements.lock"
PROVENANCE = "PROVENANCE.md"
SOURCE_TREES = ("openfga-sample-stores", "cedar-examples")
CLEARED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "AUTHPAIRS_SOURCES",
               "AUTHPAIRS_NATIVE_CASES", "AUTHPAIRS_CACHE", "XDG_CACHE_HOME")


class CheckFailed(Exception):
    """One step of the check failed; the message says which and why."""


class Steps:
    """Runs the check's commands, times each step and keeps the log of what ran."""

    def __init__(self) -> None:
        """Start with no steps timed."""
        self.times: list[tuple[str, float]] = []

    def run(self, args: Sequence[str | Path], *, cwd: Path, env: dict[str, str] | None = None,
            expect: str | None = None) -> str:
        """Run one command; fail unless it exits 0 (and prints ``expect``, when given)."""
        shown = " ".join(str(a) for a in args)
        print(f"$ {shown}", flush=True)
        done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                              text=True, check=False)
        output = done.stdout + done.stderr
        if done.returncode != 0:
            raise CheckFailed(f"`{shown}` exited {done.returncode}:\n{output[-6000:]}")
        if expect is not None and expect not in output:
            raise CheckFailed(f"`{shown}` did not print {expect!r}:\n{output[-6000:]}")
        return done.stdout

    def timed(self, name: str, start: float) -> None:
        """Record that step ``name`` took from ``start`` until now."""
        seconds = time.monotonic() - start
        self.times.append((name, seconds))
        print(f"-- {name}: {seconds:.1f} s", flush=True)


def checkout_files() -> list[str]:
    """The working tree's files that git tracks or would track (ignored ones left out)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True, check=True)
    names = [n for n in listed.stdout.decode().split("\0") if n]
    return sorted(n for n in names if (REPO / n).is_file())


def copy_checkout(dest: Path) -> list[str]:
    """Copy the checkout's files (:func:`checkout_files`) into ``dest``; return their names."""
    names = checkout_files()
    for name in names:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return names


def make_venv(path: Path) -> Path:
    """A fresh virtual environment with pip (from the base interpreter); returns its python."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def build_wheel(steps: Steps, tmp: Path) -> tuple[Path, list[str]]:
    """Build the wheel from a copy of the checkout; returns it and the copied file names."""
    start = time.monotonic()
    src = tmp / "src"
    names = copy_checkout(src)
    python = make_venv(tmp / "build-venv")
    steps.run([python, "-m", "pip", "install", "--quiet", *BUILD_REQUIREMENTS], cwd=tmp)
    dist = tmp / "dist"
    steps.run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
               "-w", dist, src], cwd=tmp)
    wheels = sorted(dist.glob("authpairs-*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"expected one authpairs wheel in {dist}, found {wheels}")
    steps.timed("build the wheel", start)
    return wheels[0], names


def check_wheel_contents(wheel: Path, names: Sequence[str]) -> None:
    """The wheel holds exactly the tracked files under ``src/authpairs`` and its metadata."""
    with zipfile.ZipFile(wheel) as archive:
        members = {m for m in archive.namelist() if not m.endswith("/")}
        entry_points = next((archive.read(m).decode() for m in members
                             if m.endswith(".dist-info/entry_points.txt")), "")
    wanted = {n.removeprefix("src/") for n in names
              if n.startswith("src/authpairs/") and "/__pycache__/" not in n}
    package = {m for m in members if not m.split("/", 1)[0].endswith(".dist-info")}
    missing, extra = sorted(wanted - package), sorted(package - wanted)
    if missing or extra:
        raise CheckFailed(f"{wheel.name}: missing {missing[:20]} ({len(missing)}), "
                          f"unexpected {extra[:20]} ({len(extra)})")
    for needed in ("authpairs = authpairs.cli:main", "[inspect_ai]", "[authpairs.backends]"):
        if needed not in entry_points:
            raise CheckFailed(f"{wheel.name}: entry_points.txt lacks {needed!r}")
    data = [m for m in wanted if not m.endswith(".py")]
    print(f"{wheel.name}: {len(package)} package files ({len(data)} data files), "
          f"{wheel.stat().st_size / 1e6:.1f} MB", flush=True)


def install(steps: Steps, tmp: Path, wheel: Path) -> Path:
    """A fresh environment with the wheel and its declared dependencies at the locked versions;
    returns its ``bin`` folder."""
    start = time.monotonic()
    python = make_venv(tmp / "venv")
    steps.run([python, "-m", "pip", "install", "--quiet", "-c", LOCK, wheel], cwd=tmp)
    steps.timed("install the wheel with the locked dependencies", start)
    return python.parent


def stranger_env(tmp: Path, bin_dir: Path) -> dict[str, str]:
    """The environment of a user of the installed package: its own home and cache, the venv's
    ``bin`` first on ``PATH``, nothing pointing into the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    home = tmp / "home"
    home.mkdir()
    env.update(HOME=str(home), AUTHPAIRS_CACHE=str(home / "authpairs-cache"),
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", COLUMNS="120",
               VIRTUAL_ENV=str(bin_dir.parent))
    return env


def check_import(steps: Steps, work: Path, env: dict[str, str]) -> None:
    """``import authpairs`` resolves to the environment's site-packages, not the checkout."""
    code = ("import json, sys, sysconfig, authpairs, authpairs.cli; "
            "print(json.dumps({'file': authpairs.__file__, "
            "'purelib': sysconfig.get_paths()['purelib'], 'path': sys.path}))")
    found = json.loads(steps.run(["python", "-c", code], cwd=work, env=env))
    module, purelib = Path(found["file"]).resolve(), Path(found["purelib"]).resolve()
    if not module.is_relative_to(purelib):
        raise CheckFailed(f"authpairs was imported from {module}, not from {purelib}")
    on_path = [p for p in found["path"] if p and Path(p).resolve().is_relative_to(REPO)]
    if on_path:
        raise CheckFailed(f"the checkout is on sys.path: {on_path}")
    print(f"authpairs imported from {module}", flush=True)


def language_track(steps: Steps, work: Path, env: dict[str, str]) -> None:
    """Two language-track baselines, then ``score``, ``report`` and ``audit`` of them."""
    start = time.monotonic()
    for baseline, run_id in (("always-allow", "allow"), ("always-block", "block")):
        steps.run(["authpairs", "run", "--baseline", baseline, "--split", "dev", "--run-id",
                   run_id], cwd=work, env=env, expect=f"run {run_id}: 40 recorded of 40 expected")
    steps.run(["authpairs", "score", "allow", "block", "--out", "scores"], cwd=work, env=env,
              expect="2 runs")
    steps.run(["authpairs", "report", "allow", "block", "--compare", "allow", "block",
               "--out", "report"], cwd=work, env=env)
    written = json.loads((work / "report" / "report.json").read_text(encoding="utf-8"))
    if "transitions" not in written["sections"] or not (work / "report/report.html").is_file():
        raise CheckFailed(f"the report lacks its page or transitions: {written['sections']}")
    scored = json.loads((work / "scores" / "runs.json").read_text(encoding="utf-8"))
    if len(scored) != 2:
        raise CheckFailed(f"score --out wrote {len(scored)} runs, not 2")
    steps.run(["authpairs", "audit", "allow"], cwd=work, env=env)
    steps.timed("language track: 2 baseline runs, score, report, audit", start)


def git_mirror(sources: Path, repo: Path) -> None:
    """A local git repository holding the staged source trees (provenance files left out, as a
    mirror of the upstream repositories would have none)."""
    for tree in SOURCE_TREES:
        if not (sources / tree).is_dir():
            raise CheckFailed(f"{sources / tree} is missing: pass --sources DIR (the staged "
                              "upstream sources)")
        shutil.copytree(sources / tree, repo / tree, ignore=shutil.ignore_patterns(PROVENANCE))
    author = ["-c", "user.name=check-wheel", "-c", "user.email=check-wheel@example.org",
              "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], [*author, "commit", "-q", "-m", "mirror"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def native_track(steps: Steps, tmp: Path, work: Path, env: dict[str, str],
                 sources: Path) -> None:
    """Fetch the sources from a local git mirror, build the native track, run a baseline."""
    start = time.monotonic()
    mirror = tmp / "mirror"
    git_mirror(sources, mirror)
    steps.run(["authpairs", "data", "fetch-sources", "--from", mirror], cwd=work, env=env)
    steps.run(["authpairs", "data", "fetch-sources", "--check"], cwd=work, env=env)
    steps.timed("native track: fetch-sources from a git mirror", start)
    start = time.monotonic()
    steps.run(["authpairs", "data", "build-native", "--out", "native.jsonl"], cwd=work, env=env)
    native = {**env, "AUTHPAIRS_NATIVE_CASES": str(work / "native.jsonl")}
    steps.run(["authpairs", "run", "--dataset", "native", "--split", "dev", "--baseline",
               "always-block", "--run-id", "native-block"], cwd=work, env=native,
              expect="run native-block: 379 recorded of 379 expected")
    steps.run(["authpairs", "score", "native-block", "--by", "engine"], cwd=work, env=native,
              expect="by engine")
    steps.timed("native track: build-native, baseline run, score", start)


def default_staged_sources() -> Path:
    """``$AUTHPAIRS_SOURCES``, else ``../shared/sources`` beside the repository."""
    return Path(os.environ.get("AUTHPAIRS_SOURCES") or REPO.parent / "shared" / "sources")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the whole check; 0 when every step passed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=default_staged_sources(),
                        help="staged upstream sources to mirror (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    steps = Steps()
    began = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="authpairs-wheel-"))
    try:
        wheel, names = build_wheel(steps, tmp)
        check_wheel_contents(wheel, names)
        bin_dir = install(steps, tmp, wheel)
        work = tmp / "work"
        work.mkdir()
        env = stranger_env(tmp, bin_dir)
        check_import(steps, work, env)
        language_track(steps, work, env)
        native_track(steps, tmp, work, env, args.sources.resolve())
    except CheckFailed as failed:
        print(f"check_wheel: FAILED: {failed}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"check_wheel: OK in {time.monotonic() - began:.0f} s ("
          + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in steps.times) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
