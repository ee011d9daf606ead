"""Count-loss cost model, break-even ratios and selection grids over candidate conditions.

Count loss of a condition: ``C = r*U + D + lambda_o*T/1e6 + lambda_i*P/1e6`` where ``U`` counts
incorrect approvals, ``D`` lawful non-approvals (usable false denials *and* unavailable or
abstaining reviews), ``T``/``P`` selected output/input tokens. One lawful non-approval costs 1,
``r`` is the relative cost of an incorrect approval and the token prices are per million tokens
in the same units.

With a forbidden-class prevalence ``pi`` the loss becomes a per-request expectation using the
class-conditional rates: ``pi*r*U/N_f + (1-pi)*D/N_l + lambda_o*(pi*T_f/N_f + (1-pi)*T_l/N_l)/1e6
+ lambda_i*(pi*P_f/N_f + (1-pi)*P_l/N_l)/1e6``.

Caps are feasibility constraints on the observed counts: ``U <= approval cap`` and
``unavailable <= availability cap`` (``None`` = no cap). Each grid cell selects the feasible
condition(s) of least loss; ties (within 1e-9 relative) and infeasible cells are kept and marked.

Default grid (the paper fixes the grid's shape, 6x5x3x4x2 = 720 cells and x4 prevalences =
2,880 cells, and the caps 0, 1, 12 and all-448 incorrect approvals; the other values are ours):
severity ratios r in (1, 10, 100, 300, 1000, 10000) -- bracketing the paper's break-even 171 and
containing its r = 1000 example; output prices (0, 1, 10, 100, 1000) and input prices (0, 1, 10)
per million tokens; incorrect-approval caps (0, 1, 12, none); availability caps (none, 0);
forbidden-class prevalences (0.01, 0.1, 0.25, 0.5).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from authpairs.analysis.compose import CompositionResult
from authpairs.analysis.formatting import PlainData
from authpairs.errors import ConfigError
from authpairs.yamlfiles import read_yaml_mapping


@dataclass(frozen=True)
class Condition(PlainData):
    """A candidate condition's observed counts and selected tokens."""

    name: str
    incorrect_approvals: int
    lawful_nonapprovals: int
    unavailable: int
    output_tokens: int
    input_tokens: int
    n_forbidden: int
    n_lawful: int
    output_tokens_forbidden: int = 0
    output_tokens_lawful: int = 0
    input_tokens_forbidden: int = 0
    input_tokens_lawful: int = 0

    def loss(self, severity: float, output_price: float = 0.0, input_price: float = 0.0
             ) -> float:
        """Count loss ``r*U + D + lambda_o*T/1e6 + lambda_i*P/1e6``."""
        return (severity * self.incorrect_approvals + self.lawful_nonapprovals
                + output_price * self.output_tokens / 1e6 + input_price * self.input_tokens / 1e6)


def condition_from_composition(c: CompositionResult) -> Condition:
    """A cost condition from a composition replay (unavailable = reached unavailable): every
    field of :class:`Condition` is the composition's field (or property) of that name."""
    return Condition(**{f.name: getattr(c, f.name) for f in fields(Condition)})


def break_even(riskier: Condition, safer: Condition, *, output_price: float = 0.0,
               input_price: float = 0.0) -> float | None:
    """Severity ratio ``r`` at which the two conditions have equal count loss.

    ``r = (dD + lambda_o*dT/1e6 + lambda_i*dP/1e6) / dU`` with ``dU = U_riskier - U_safer`` and
    the other deltas ``safer - riskier``. Above it the condition with fewer incorrect approvals
    has the lower loss. None when both have the same ``U`` (no ratio trades them off).
    """
    du = riskier.incorrect_approvals - safer.incorrect_approvals
    if du == 0:
        return None
    dd = safer.lawful_nonapprovals - riskier.lawful_nonapprovals
    dt = safer.output_tokens - riskier.output_tokens
    dp = safer.input_tokens - riskier.input_tokens
    return (dd + output_price * dt / 1e6 + input_price * dp / 1e6) / du


def output_price_break_even(a: Condition, b: Condition, *, severity: float = 0.0,
                            input_price: float = 0.0) -> float | None:
    """Output price ``lambda_o`` (per million tokens) at which ``a`` and ``b`` have equal loss.

    ``lambda_o = (r*dU + dD + lambda_i*dP/1e6) / (-dT/1e6)`` with every delta ``b - a``; above it
    the condition selecting fewer output tokens has the lower loss. None when both select the
    same number of output tokens.
    """
    dt = b.output_tokens - a.output_tokens
    if dt == 0:
        return None
    du = b.incorrect_approvals - a.incorrect_approvals
    dd = b.lawful_nonapprovals - a.lawful_nonapprovals
    dp = b.input_tokens - a.input_tokens
    return (severity * du + dd + input_price * dp / 1e6) / (-dt / 1e6)


def break_even_table(conditions: Sequence[Condition], *, output_price: float = 0.0,
                     input_price: float = 0.0) -> list[dict[str, Any]]:
    """Break-even ratios for every pair of conditions.

    Pairs whose incorrect approvals differ get the severity break-even ``r`` (at the given token
    prices; the pair is oriented riskier -> safer). Pairs with equal ``U`` get the output-price
    break-even instead (oriented so that the second selects fewer output tokens).
    """
    rows: list[dict[str, Any]] = []
    for a, b in itertools.combinations(conditions, 2):
        if a.incorrect_approvals != b.incorrect_approvals:
            first, second = (a, b) if a.incorrect_approvals > b.incorrect_approvals else (b, a)
            r = break_even(first, second, output_price=output_price, input_price=input_price)
            lam = None
        else:
            first, second = (a, b) if a.output_tokens >= b.output_tokens else (b, a)
            r = None
            lam = output_price_break_even(first, second, input_price=input_price)
        rows.append({"riskier": first.name, "safer": second.name,
                     "delta_incorrect_approvals": first.incorrect_approvals
                     - second.incorrect_approvals,
                     "delta_lawful_nonapprovals": second.lawful_nonapprovals
                     - first.lawful_nonapprovals,
                     "delta_output_tokens": second.output_tokens - first.output_tokens,
                     "delta_input_tokens": second.input_tokens - first.input_tokens,
                     "break_even_r": r, "break_even_output_price": lam,
                     "safer_dominates": r is not None and r <= 0,
                     "output_price": output_price, "input_price": input_price})
    return rows


@dataclass(frozen=True)
class GridSpec(PlainData):
    """The values of every grid axis (see the module docstring for the defaults' origin)."""

    severity: tuple[float, ...] = (1, 10, 100, 300, 1000, 10000)
    output_price: tuple[float, ...] = (0, 1, 10, 100, 1000)
    input_price: tuple[float, ...] = (0, 1, 10)
    approval_cap: tuple[int | None, ...] = (0, 1, 12, None)
    availability_cap: tuple[int | None, ...] = (None, 0)
    prevalence: tuple[float, ...] = (0.01, 0.1, 0.25, 0.5)


@dataclass
class GridResult:
    """Per-cell selection over a grid: the axes, the winners and the status of every cell."""

    spec: GridSpec
    with_prevalence: bool
    rows: list[dict[str, Any]] = field(default_factory=list)

    def status_counts(self) -> dict[str, int]:
        """How many cells are 'unique', 'tie' or 'infeasible'."""
        counted = Counter(row["status"] for row in self.rows)
        return {status: counted[status] for status in ("unique", "tie", "infeasible")}

    def win_counts(self) -> dict[str, int]:
        """In how many cells each condition is (one of) the best."""
        out = Counter(name for row in self.rows for name in row["best"])
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _cap_array(caps: tuple[int | None, ...]) -> np.ndarray:
    return np.array([np.inf if c is None else float(c) for c in caps])


def cost_grid(conditions: Sequence[Condition], spec: GridSpec | None = None, *,
              with_prevalence: bool = False, rel_tol: float = 1e-9) -> GridResult:
    """Evaluate the selection grid (720 cells, or 2,880 with prevalences by default).

    Every cell row holds its axis values, ``status`` ('unique', 'tie' or 'infeasible'),
    ``best`` (list of the least-loss feasible condition names), ``loss`` (the least loss, None
    when infeasible) and ``feasible`` (how many conditions met the caps).
    """
    spec = spec or GridSpec()
    if not conditions:
        raise ValueError("no conditions to select from")
    names = [c.name for c in conditions]

    def counts(name: str) -> np.ndarray:  # one value per condition
        return np.array([getattr(c, name) for c in conditions], dtype=np.float64)

    u, d, a = counts("incorrect_approvals"), counts("lawful_nonapprovals"), counts("unavailable")
    prev: tuple[float | None, ...] = spec.prevalence if with_prevalence else (None,)
    axes = list(itertools.product(spec.severity, spec.output_price, spec.input_price,
                                  range(len(spec.approval_cap)),
                                  range(len(spec.availability_cap)), prev))
    r, lo, li = (np.array([x[k] for x in axes], dtype=np.float64)[:, None] for k in range(3))
    ucap = _cap_array(spec.approval_cap)[[x[3] for x in axes]][:, None]
    acap = _cap_array(spec.availability_cap)[[x[4] for x in axes]][:, None]
    if with_prevalence:
        nf, nl = np.maximum(counts("n_forbidden"), 1), np.maximum(counts("n_lawful"), 1)
        tf, tl = counts("output_tokens_forbidden"), counts("output_tokens_lawful")
        pf, pl = counts("input_tokens_forbidden"), counts("input_tokens_lawful")
        pi = np.array([x[5] for x in axes], dtype=np.float64)[:, None]
        loss = (pi * r * u / nf + (1 - pi) * d / nl
                + lo * (pi * tf / nf + (1 - pi) * tl / nl) / 1e6
                + li * (pi * pf / nf + (1 - pi) * pl / nl) / 1e6)
    else:
        loss = (r * u + d + lo * counts("output_tokens") / 1e6
                + li * counts("input_tokens") / 1e6)
    feasible = (u[None, :] <= ucap) & (a[None, :] <= acap)
    masked = np.where(feasible, loss, np.inf)
    best = masked.min(axis=1)
    tol = rel_tol * np.maximum(1.0, np.abs(np.where(np.isfinite(best), best, 0.0)))
    winners = feasible & (masked <= (best + tol)[:, None])
    n_feasible = feasible.sum(axis=1)
    n_winners = winners.sum(axis=1)
    result = GridResult(spec, with_prevalence)
    for i, x in enumerate(axes):
        ok = bool(n_feasible[i])
        best_names = [names[j] for j in np.flatnonzero(winners[i])] if ok else []
        row: dict[str, Any] = {
            "severity": x[0], "output_price": x[1], "input_price": x[2],
            "approval_cap": spec.approval_cap[x[3]],
            "availability_cap": spec.availability_cap[x[4]]}
        if with_prevalence:
            row["prevalence"] = x[5]
        row.update({"status": ("infeasible" if not ok else
                               "tie" if n_winners[i] > 1 else "unique"),
                    "best": best_names, "loss": float(best[i]) if ok else None,
                    "feasible": int(n_feasible[i])})
        result.rows.append(row)
    return result


class GridSpecError(ConfigError):
    """A grid file is malformed; the message names the file and field."""


def _axis(raw: Any, key: str, origin: str, *, caps: bool = False) -> tuple[Any, ...]:
    if not isinstance(raw, list) or not raw:
        raise GridSpecError(f"{origin}: field '{key}' must be a non-empty list")
    out: list[Any] = []
    for i, v in enumerate(raw):
        if v is None and caps:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise GridSpecError(f"{origin}: field '{key}[{i}]' must be a non-negative number"
                                + (" or null" if caps else ""))
        if caps and v != int(v):
            raise GridSpecError(f"{origin}: field '{key}[{i}]' must be a whole count")
        if key == "prevalence" and not 0 < v < 1:
            raise GridSpecError(f"{origin}: field 'prevalence[{i}]' must lie in (0, 1)")
        out.append(int(v) if caps else float(v))
    return tuple(out)


def load_grid_spec(path: str | Path) -> GridSpec:
    """Read a grid YAML file (a mapping of axis name to list of values); omitted axes keep
    their defaults. Caps may be ``null`` (no cap); every other value is a non-negative number.
    """
    raw = read_yaml_mapping(path, "grid file", GridSpecError, hint=" of axis -> values")
    default = GridSpec()
    known = set(default.to_dict())
    extra = set(raw) - known
    if extra:
        raise GridSpecError(f"{path}: unknown field(s) {sorted(extra)}; known: {sorted(known)}")
    return GridSpec(**{key: (_axis(raw[key], key, str(path), caps=key.endswith("_cap"))
                             if key in raw else getattr(default, key)) for key in known})
