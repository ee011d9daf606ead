"""authpairs: the AuthorizationPairs benchmark.

Tests whether an LLM guardrail honors authorization: it must block an operation under forbidden
evidence and still allow *the same operation* under valid permission. Every request keeps a stable
identity so two guardrail runs can be compared request by request.

The public API (imported lazily, so ``import authpairs`` stays cheap)::

    from authpairs import RunConfig, run, run_async, load_dataset, open_records
    from authpairs import score, compare, compose, gate, AuthpairsError
    from authpairs import agent_score, agent_compare     # agent runs (docs/agents.md)

Plugins (interfaces, guardrails, backend kinds, effect types, tracks) import from
:mod:`authpairs.plugins`. Every other module is internal.

Data flows one way: ``cases``/``tracks`` -> ``review`` -> ``enforce`` -> ``runs`` (records) ->
``analysis`` -> ``report``. See ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from authpairs.api import (
        RunResult,
        agent_compare,
        agent_score,
        compare,
        compose,
        gate,
        load_dataset,
        open_records,
        run,
        run_async,
        score,
    )
    from authpairs.errors import AuthpairsError
    from authpairs.runs.config import RunConfig

_EXPORTS = {
    "RunConfig": "authpairs.runs.config",
    "RunResult": "authpairs.api",
    "AuthpairsError": "authpairs.errors",
    **{name: "authpairs.api" for name in ("run", "run_async", "load_dataset", "open_records",
                                          "score", "compare", "compose", "gate",
                                          "agent_score", "agent_compare")},
}

__all__ = [
    "AuthpairsError",
    "RunConfig",
    "RunResult",
    "__version__",
    "agent_compare",
    "agent_score",
    "compare",
    "compose",
    "gate",
    "load_dataset",
    "open_records",
    "run",
    "run_async",
    "score",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'authpairs' has no attribute {name!r}")
