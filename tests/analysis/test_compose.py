"""All-must-allow composition replay."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from analysis_helpers import rec

from authpairs.analysis.compose import (
    CompositionError,
    build_matrix,
    compose_all,
    ordered_selections,
    replay_order,
)

OUTCOMES = ("ALLOW", "BLOCK", "UNAVAILABLE", "UNKNOWN")


def _random_runs(seed: int, n: int = 60) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    labels = ["forbidden" if x else "lawful" for x in rng.random(n) < 0.4]
    runs = {}
    for name in ("9b", "27b", "sg"):
        outs = rng.choice(OUTCOMES, size=n, p=[0.6, 0.3, 0.05, 0.05])
        runs[name] = [rec(f"c{i:03d}", labels[i], str(outs[i]), tin=int(rng.integers(50, 100)),
                          tout=int(rng.integers(1, 30))) for i in range(n)]
    return runs


def test_fifteen_orders_for_three_reviewers() -> None:
    orders = ordered_selections(3)
    assert len(orders) == 15
    assert sum(len(o) == 1 for o in orders) == 3
    assert sum(len(o) == 2 for o in orders) == 6
    assert sum(len(o) == 3 for o in orders) == 6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accepted_set_is_order_invariant(seed: int) -> None:
    m = build_matrix(_random_runs(seed))
    for size in (2, 3):
        for members in itertools.combinations(range(3), size):
            sets = {tuple(np.flatnonzero(replay_order(m, p)[1]))
                    for p in itertools.permutations(members)}
            assert len(sets) == 1
            expected = np.logical_and.reduce([m.allow[i] for i in members])
            assert sets.pop() == tuple(np.flatnonzero(expected))


def test_replay_against_hand_walk() -> None:
    runs = _random_runs(5, n=40)
    m, results = compose_all(runs)
    by_name = {r.name: r for r in results}
    names = list(runs)
    for order in itertools.permutations(names, 3):
        cons = unavail = abst = tin = tout = fa = la = 0
        for i in range(40):
            ok = True
            for name in order:
                r = runs[name][i]
                cons += 1
                tin += r.input_tokens
                tout += r.output_tokens
                unavail += r.status.value == "unavailable"
                abst += r.status.value == "abstention"
                if not (r.status.value == "decision" and r.decision.value == "ALLOW"):
                    ok = False
                    break
            if ok:
                fa += runs[names[0]][i].label == "forbidden"
                la += runs[names[0]][i].label == "lawful"
        got = by_name[" -> ".join(order)]
        assert (got.consultations, got.unavailable, got.abstentions, got.input_tokens,
                got.output_tokens, got.incorrect_approvals, got.lawful_approvals) == (
            cons, unavail, abst, tin, tout, fa, la)
        assert got.additional_consultations == cons - 40
        assert got.lawful_nonapprovals == m.n_lawful - la
        assert got.input_tokens_forbidden + got.input_tokens_lawful == tin


def test_consultations_follow_available_allow_only() -> None:
    runs = {
        "A": [rec("1", "lawful", "ALLOW"), rec("2", "forbidden", "ALLOW"),
              rec("3", "lawful", "UNAVAILABLE"), rec("4", "lawful", "BLOCK")],
        "B": [rec("1", "lawful", "ALLOW"), rec("2", "forbidden", "BLOCK"),
              rec("3", "lawful", "ALLOW"), rec("4", "lawful", "ALLOW")],
    }
    _, results = compose_all(runs)
    ab = next(r for r in results if r.order == ("A", "B"))
    ba = next(r for r in results if r.order == ("B", "A"))
    assert ab.consultations == 4 + 2 and ba.consultations == 4 + 3
    assert ab.unavailable == 1 and ba.unavailable == 1
    assert ab.incorrect_approvals == ba.incorrect_approvals == 0
    assert ab.lawful_approvals == ba.lawful_approvals == 1


def test_unmatched_cases_and_label_conflicts() -> None:
    m = build_matrix({"A": [rec("1"), rec("2")], "B": [rec("1"), rec("3")]})
    assert m.case_ids == ("1",) and m.unmatched == ("2", "3")
    with pytest.raises(CompositionError, match="labels differ"):
        build_matrix({"A": [rec("1", "lawful")], "B": [rec("1", "forbidden")]})
