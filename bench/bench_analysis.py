"""Benchmark of the analysis layer on synthetic records (no model, no I/O).

Targets (issue 6):
* a 36-contrast study family with 10,000 bootstrap draws each (160 language-test cases per run,
  40 scenario clusters), including matching, sign-flip tests and Holm: <= 2 s;
* 15-order composition of three reviewers plus the 720-cell and 2,880-cell cost grids on 1,215
  native-test cases: <= 1 s.

Run: ``python bench/bench_analysis.py`` (prints a markdown section).
"""

from __future__ import annotations

import platform
import time
from datetime import UTC, datetime

import numpy as np

from authpairs.analysis.compose import compose_all
from authpairs.analysis.cost import GridSpec, condition_from_composition, cost_grid
from authpairs.analysis.stats import _draw_counts
from authpairs.analysis.study import analyze_family, expand_plan, plan_from_dict
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord


def _record(run_id: str, case_id: str, label: str, cluster: str, outcome: str,
            tin: int = 0, tout: int = 0) -> CaseRecord:
    if outcome == "UNAVAILABLE":
        status, decision = OutcomeStatus.UNAVAILABLE, None
    else:
        status, decision = OutcomeStatus.DECISION, Decision(outcome)
    return CaseRecord(run_id=run_id, case_id=case_id, input_sha256="0" * 64, status=status,
                      decision=decision,
                      dispatch=Dispatch.ALLOW if outcome == "ALLOW" else Dispatch.BLOCK,
                      label=label, cluster=cluster, attributes={"path": "p"},
                      input_tokens=tin, output_tokens=tout)


def _language_run(run_id: str, rng: np.random.Generator, unresolved: bool = False
                  ) -> list[CaseRecord]:
    out = []
    for s in range(40):
        for k in range(4):
            label = "lawful" if k < 2 else "forbidden"
            p_allow = 0.8 if label == "lawful" else 0.1
            r = rng.random()
            outcome = "ALLOW" if r < p_allow else ("UNAVAILABLE" if r > 0.97 else "BLOCK")
            r = _record(run_id, f"AC-{s:02d}-{k}", label, f"scn-{s:02d}", outcome)
            if unresolved and s in (3, 17) and k == 0:
                r = r.model_copy(update={"resolved": False})
            out.append(r)
    return out


def bench_family(repeats: int = 3, unresolved: bool = False) -> tuple[float, int]:
    """Best-of wall time for the full 36-contrast analysis (``unresolved``: two unresolved
    lawful contexts per run, so every contrast also computes its sensitivity view)."""
    plan = plan_from_dict({
        "base": {"dataset": "language", "split": "test"},
        "factors": {"model": {"m9": {"reviewer.backend.model": "m9"},
                              "m27": {"reviewer.backend.model": "m27"}},
                    "interface": {i: {"reviewer.interface": i}
                                  for i in ("direct", "structured", "nemo", "schema")}},
        "seeds": [0, 1, 2], "analysis": {"draws": 10_000, "seed": 39039}})
    cells = expand_plan(plan)
    rng = np.random.default_rng(0)
    records = {c.run_id: _language_run(c.run_id, rng, unresolved) for c in cells}
    best = float("inf")
    n = 0
    for _ in range(repeats):
        _draw_counts.cache_clear()  # every repeat pays for its bootstrap draws
        t0 = time.perf_counter()
        contrasts = analyze_family(plan, cells, records)
        best = min(best, time.perf_counter() - t0)
        n = len(contrasts)
    return best, n


def bench_compose(repeats: int = 3) -> tuple[float, int, int, int]:
    """Best-of wall time for 15 orders + 720 + 2,880 grid cells on 1,215 cases."""
    rng = np.random.default_rng(1)
    labels = ["forbidden"] * 448 + ["lawful"] * 767
    runs = {}
    for name, p_ok in (("9b", 0.7), ("27b", 0.95), ("safeguard", 0.8)):
        recs = []
        for i, label in enumerate(labels):
            correct = rng.random() < p_ok
            allow = correct if label == "lawful" else not correct
            outcome = "UNAVAILABLE" if rng.random() < 0.005 else ("ALLOW" if allow else "BLOCK")
            recs.append(_record(name, f"N-{i:04d}", label, f"g{i % 47}", outcome,
                                int(rng.integers(500, 3000)), int(rng.integers(50, 800))))
        runs[name] = recs
    best = float("inf")
    sizes = (0, 0, 0)
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, results = compose_all(runs)
        conditions = [condition_from_composition(r) for r in results]
        g1 = cost_grid(conditions, GridSpec())
        g2 = cost_grid(conditions, GridSpec(), with_prevalence=True)
        best = min(best, time.perf_counter() - t0)
        sizes = (len(results), len(g1.rows), len(g2.rows))
    return best, *sizes


def main() -> None:
    """Run both benchmarks and print a markdown section."""
    fam_s, n_contrasts = bench_family()
    sens_s, _ = bench_family(unresolved=True)
    comp_s, n_orders, n720, n2880 = bench_compose()
    print(f"## Analysis benchmark ({datetime.now(UTC).date().isoformat()})\n")
    print(f"Machine: {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__}; best of 3, wall clock.\n")
    print("| measurement | target | measured |")
    print("|---|---|---|")
    print(f"| study family: {n_contrasts} contrasts x 10,000 cluster-bootstrap draws "
          f"(160 cases/run, 40 clusters; matching + McNemar + sign-flip + Holm) | <= 2 s | "
          f"{fam_s:.3f} s |")
    print(f"| same, with 2 unresolved contexts per run (adds the resolved-only sensitivity view: "
          f"2 x 10,000 draws per contrast) | <= 2 s | {sens_s:.3f} s |")
    print(f"| {n_orders}-order composition + {n720}-cell + {n2880}-cell cost grids "
          f"(3 reviewers x 1,215 cases) | <= 1 s | {comp_s:.3f} s |")


if __name__ == "__main__":
    main()
