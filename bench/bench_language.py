"""Benchmark of the language-track machinery on the packaged 50 scenarios.

Measures (best of N, wall clock and process CPU time): loading + validating all scenario files,
evaluating all 200 contexts with each evaluator, building the 200 cases, the full data check,
and the bag-of-words baseline. Run: ``python bench/bench_language.py [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from authpairs.tracks.language.baseline import classifier_baseline
from authpairs.tracks.language.cases import load_language_dataset
from authpairs.tracks.language.checks import check_language
from authpairs.tracks.language.evaluate import context_facts, request_data
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql
from authpairs.tracks.language.loader import load_scenarios


def _best(func: Callable[[], object], repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        func()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    """Run every measurement and print a markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    scenarios = load_scenarios()
    inputs = [(parse_expression(s.scenario.expression), context_facts(s.scenario, c),
               request_data(s.scenario)) for s in scenarios for c in s.scenario.contexts]

    def run_all(evaluator: Callable[..., object]) -> None:
        for tree, facts, request in inputs:
            evaluator(tree, facts, request)

    rows = [
        ("load + validate 50 scenario files", _best(load_scenarios, repeats)),
        (f"interpreter: {len(inputs)} contexts", _best(lambda: run_all(interpret), repeats)),
        (f"SQLite evaluator: {len(inputs)} contexts",
         _best(lambda: run_all(evaluate_sql), repeats)),
        ("build dataset (200 cases, both evaluators)", _best(load_language_dataset, repeats)),
        ("full data check", _best(check_language, repeats)),
        ("bag-of-words baseline (test, 5-fold GroupKFold)",
         _best(lambda: classifier_baseline(load_language_dataset()), repeats)),
    ]
    print(f"Python {platform.python_version()} on {platform.machine()}; best of {repeats}")
    print("| measurement | wall s | CPU s |\n|---|---|---|")
    for name, (wall, cpu) in rows:
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
