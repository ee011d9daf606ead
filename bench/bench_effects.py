"""Benchmark: execute and verify 200 language-track effects (all dispatched ALLOW).

Uses the real language dataset when ``authpairs.tracks.language.load_language_dataset`` exists,
otherwise 200 generated, realistic descriptors spread over the nine effect types.

    python bench/bench_effects.py            # print the numbers
    python bench/bench_effects.py --write    # also write bench/results/effects.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.models import EffectDescriptor
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.enforce.selftest import generated_descriptors
from authpairs.review.outcome import Dispatch

TARGET_S = 5.0
N = 200


def load_descriptors() -> tuple[str, list[tuple[str, EffectDescriptor]]]:
    """(source description, [(case id, descriptor)])."""
    try:
        from authpairs.tracks.language.cases import load_language_dataset
    except ImportError:
        source = f"{N} generated descriptors (load_language_dataset not available)"
        return source, generated_descriptors(N)
    dataset = load_language_dataset()
    cases = [c for c in dataset.cases if c.public.effect is not None]
    pairs = [(c.case_id, c.public.effect) for c in cases if c.public.effect is not None]
    return f"real language dataset ({len(pairs)} cases with effects)", pairs


def run(pairs: list[tuple[str, EffectDescriptor]]) -> dict[str, Any]:
    """Execute and verify every descriptor as ALLOW; return timings and audit counts."""
    per_type: dict[str, list[float]] = defaultdict(list)
    failures: list[str] = []
    t0 = time.perf_counter()
    with LocalEnforcer() as enf:
        t1 = time.perf_counter()
        for case_id, effect in pairs:
            s = time.perf_counter()
            rec = enf.enforce(case_id, effect, Dispatch.ALLOW)
            per_type[effect.type].append(time.perf_counter() - s)
            if not (rec.executed and rec.verified and rec.audit_ok):
                failures.append(f"{case_id}: {rec.error or rec.observation.get('judgement')}")
        t2 = time.perf_counter()
    t3 = time.perf_counter()
    return {"total_s": t3 - t0, "enforce_s": t2 - t1, "startup_s": t1 - t0,
            "shutdown_s": t3 - t2, "per_type": per_type, "failures": failures,
            "n": len(pairs)}


def report(source: str, result: dict[str, Any]) -> str:
    """Markdown section with the measured numbers."""
    lines = [
        "## Effects: execute + verify 200 language-track effects (all ALLOW)",
        "",
        f"- Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs",
        f"- Descriptors: {source}",
        "- Measured: `bench/bench_effects.py` -- one LocalEnforcer (sandbox start, SQLite, keys,"
        " HTTP server), every descriptor enforced as ALLOW: seed, whole-sandbox digest, observe,"
        " execute, observe, digest, judge; then shutdown.",
        f"- Result: {result['n']} effects, {result['n'] - len(result['failures'])} executed +"
        f" verified + audit_ok; total **{result['total_s']:.2f} s** (target <= {TARGET_S:.0f} s):"
        f" startup {result['startup_s']:.2f} s, enforcement {result['enforce_s']:.2f} s,"
        f" shutdown {result['shutdown_s']:.2f} s.",
        "",
        "| effect type | n | mean ms | max ms |",
        "|---|---|---|---|",
    ]
    for t in EFFECT_TYPES:
        xs = result["per_type"].get(t, [])
        if xs:
            lines.append(f"| {t} | {len(xs)} | {statistics.mean(xs) * 1000:.1f} |"
                         f" {max(xs) * 1000:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Run the benchmark; exit 1 when it misses the target or an effect fails its audit."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="write bench/results/effects.md")
    parser.add_argument("--generated", action="store_true",
                        help="use the 200 generated descriptors even if the dataset exists")
    args = parser.parse_args()
    if args.generated:
        source, pairs = f"{N} generated descriptors (--generated)", generated_descriptors(N)
    else:
        source, pairs = load_descriptors()
    result = run(pairs)
    text = report(source, result)
    print(text)
    for failure in result["failures"][:10]:
        print("FAILED", failure)
    if args.write:
        out = Path(__file__).resolve().parent / "results" / "effects.md"
        out.write_text(text, encoding="utf-8")
    return 0 if not result["failures"] and result["total_s"] <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
