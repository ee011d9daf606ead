"""Cost model: count loss, break-even ratios, selection grids."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from analysis_helpers import rec

from authpairs.analysis.compose import compose_all
from authpairs.analysis.cost import (
    Condition,
    GridSpec,
    GridSpecError,
    break_even,
    break_even_table,
    condition_from_composition,
    cost_grid,
    load_grid_spec,
    output_price_break_even,
)


def _cond(name: str, u: int, d: int, a: int = 0, t: int = 0, p: int = 0) -> Condition:
    return Condition(name, u, d, a, t, p, n_forbidden=448, n_lawful=767,
                     output_tokens_forbidden=t // 2, output_tokens_lawful=t - t // 2,
                     input_tokens_forbidden=p // 2, input_tokens_lawful=p - p // 2)


def test_paper_break_even_171() -> None:
    q27 = _cond("27B", 1, 10)
    q27sg = _cond("27B -> Safeguard", 0, 181)
    assert break_even(q27, q27sg) == pytest.approx(171)
    assert q27.loss(171) == pytest.approx(q27sg.loss(171))
    assert q27.loss(172) > q27sg.loss(172)
    rows = break_even_table([q27, q27sg])
    assert rows[0]["riskier"] == "27B" and rows[0]["break_even_r"] == pytest.approx(171)


def test_break_even_with_token_prices_and_equal_u() -> None:
    a = _cond("a", 3, 5, t=2_000_000, p=1_000_000)
    b = _cond("b", 1, 9, t=1_000_000, p=3_000_000)
    # r*3 + 5 + 2*lo + 1*li = r*1 + 9 + 1*lo + 3*li  ->  r = (4 - lo + 2*li) / 2
    assert break_even(a, b, output_price=2, input_price=1) == pytest.approx((4 - 2 + 2) / 2)
    assert break_even(a, _cond("c", 3, 0)) is None


def test_condition_of_one_reviewer() -> None:
    """One run's records as a cost condition: the composition of that one reviewer (every
    record one consultation), as the commands build it."""
    records = [rec("1", "forbidden", "ALLOW", tin=10, tout=1),
               rec("2", "forbidden", "UNAVAILABLE", tin=20, tout=2),
               rec("3", "lawful", "BLOCK", tin=30, tout=3),
               rec("4", "lawful", "UNKNOWN", tin=40, tout=4),
               rec("5", "lawful", "ALLOW", tin=50, tout=5)]
    c = condition_from_composition(compose_all({"x": records})[1][0])
    assert (c.incorrect_approvals, c.lawful_nonapprovals, c.unavailable) == (1, 2, 1)
    assert (c.input_tokens, c.output_tokens) == (150, 15)
    assert (c.input_tokens_forbidden, c.output_tokens_lawful) == (30, 12)


def test_grid_sizes_and_brute_force_selection() -> None:
    conds = [_cond("safe", 0, 200, a=5, t=3_000_000), _cond("mid", 1, 10, t=2_000_000),
             _cond("risky", 20, 0, t=100_000), _cond("twin", 1, 10, t=2_000_000)]
    spec = GridSpec()
    grid = cost_grid(conds, spec)
    assert len(grid.rows) == 720
    prev = cost_grid(conds, spec, with_prevalence=True)
    assert len(prev.rows) == 2880
    for row in grid.rows:
        feasible = [c for c in conds
                    if (row["approval_cap"] is None or c.incorrect_approvals
                        <= row["approval_cap"])
                    and (row["availability_cap"] is None or c.unavailable
                         <= row["availability_cap"])]
        if not feasible:
            assert row["status"] == "infeasible" and row["best"] == []
            continue
        losses = {c.name: c.loss(row["severity"], row["output_price"], row["input_price"])
                  for c in feasible}
        low = min(losses.values())
        assert row["loss"] == pytest.approx(low)
        assert set(row["best"]) == {n for n, v in losses.items() if abs(v - low) < 1e-6}
        # "mid" and "twin" are identical: whenever one wins the cell is a tie.
        if "mid" in row["best"]:
            assert row["status"] == "tie" and "twin" in row["best"]
    counts = grid.status_counts()
    assert sum(counts.values()) == 720
    # U cap 0 with availability cap 0 excludes every condition here.
    assert counts["infeasible"] == 6 * 5 * 3
    assert counts["tie"] > 0


def test_prevalence_loss_matches_formula() -> None:
    a = _cond("a", 1, 10, t=1_000_000, p=2_000_000)
    b = _cond("b", 0, 181)
    spec = GridSpec(severity=(100, 1000), output_price=(0, 5), input_price=(0,),
                    approval_cap=(None,), availability_cap=(None,), prevalence=(0.1, 0.5))
    grid = cost_grid([a, b], spec, with_prevalence=True)
    for row in grid.rows:
        pi, r, lo = row["prevalence"], row["severity"], row["output_price"]

        def loss(c: Condition, pi: float = pi, r: float = r, lo: float = lo) -> float:
            return (pi * r * c.incorrect_approvals / 448
                    + (1 - pi) * c.lawful_nonapprovals / 767
                    + lo * (pi * c.output_tokens_forbidden / 448
                            + (1 - pi) * c.output_tokens_lawful / 767) / 1e6)

        expected = min(loss(a), loss(b))
        assert row["loss"] == pytest.approx(expected)
    assert len(list(itertools.product(*[spec.severity, spec.output_price, spec.prevalence]))) \
        == len(grid.rows)


def test_output_price_break_even_paper_shape() -> None:
    # 9B -> 27B versus 27B alone: same U, 109 more lawful non-approvals, 880,080 fewer output
    # tokens and 2,087,957 more input tokens: lambda_o* = (109 + 2.087957*lambda_i)/0.880080.
    alone = Condition("27B", 1, 10, 0, 3_525_000, 5_000_000, 448, 767)
    chain = Condition("9B -> 27B", 1, 119, 0, 3_525_000 - 880_080, 5_000_000 + 2_087_957,
                      448, 767)
    for li in (0.0, 1.0, 10.0):
        lam = output_price_break_even(alone, chain, input_price=li)
        assert lam == pytest.approx((109 + 2.087957 * li) / 0.880080)
        assert alone.loss(0, lam, li) == pytest.approx(chain.loss(0, lam, li))
    rows = break_even_table([alone, chain])
    assert rows[0]["break_even_r"] is None
    assert rows[0]["break_even_output_price"] == pytest.approx(109 / 0.880080)


# Table 9 of the paper: incorrect approvals, lawful approvals /767, unavailable (1,215 cases).
TABLE9 = {
    "9B": (261, 656, 0), "27B": (1, 757, 0), "SG": (12, 588, 6),
    "9B-27B": (1, 648, 0), "9B-SG": (11, 503, 5), "27B-9B": (1, 648, 0),
    "27B-SG": (0, 586, 5), "SG-9B": (11, 503, 6), "SG-27B": (0, 586, 6),
    "9B-27B-SG": (0, 502, 4), "9B-SG-27B": (0, 502, 5), "27B-9B-SG": (0, 502, 4),
    "27B-SG-9B": (0, 502, 5), "SG-9B-27B": (0, 502, 6), "SG-27B-9B": (0, 502, 6),
}


def test_paper_cap_feasibility_counts() -> None:
    conds = [Condition(n, u, 767 - la, a, 0, 0, 448, 767) for n, (u, la, a) in TABLE9.items()]
    spec = GridSpec(severity=(1,), output_price=(0,), input_price=(0,),
                    approval_cap=(0, 1, 12, 448), availability_cap=(None, 0), prevalence=(0.5,))
    grid = cost_grid(conds, spec)
    feasible = {(row["approval_cap"], row["availability_cap"]): row["feasible"]
                for row in grid.rows}
    # "Caps of zero, one, twelve and 448 incorrect approvals admit eight, eleven, fourteen and
    # fifteen conditions when availability is unrestricted. Requiring no unavailable decisions
    # leaves zero, three, three and four."
    assert [feasible[(c, None)] for c in (0, 1, 12, 448)] == [8, 11, 14, 15]
    assert [feasible[(c, 0)] for c in (0, 1, 12, 448)] == [0, 3, 3, 4]
    assert break_even(conds[1], conds[6]) == pytest.approx(171)  # 27B vs 27B -> Safeguard


def test_grid_spec_file(tmp_path: Path) -> None:
    f = tmp_path / "grid.yaml"
    f.write_text("severity: [1, 171]\napproval_cap: [0, null]\nprevalence: [0.2]\n")
    spec = load_grid_spec(f)
    assert spec.severity == (1.0, 171.0) and spec.approval_cap == (0, None)
    assert spec.output_price == GridSpec().output_price and spec.prevalence == (0.2,)
    for body, message in (("severity: []\n", "severity"), ("prevalence: [1.5]\n", "prevalence"),
                          ("approval_cap: [1.5]\n", "whole count"), ("speed: [1]\n", "unknown"),
                          ("severity: [-1]\n", r"severity\[0\]")):
        f.write_text(body)
        with pytest.raises(GridSpecError, match=message):
            load_grid_spec(f)
