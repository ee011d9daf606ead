"""authpairs: the AuthorizationPairs benchmark.

Tests whether an LLM guardrail honors authorization: it must block an operation under forbidden
evidence and still allow *the same operation* under valid permission. Every request keeps a stable
identity so two guardrail runs can be compared request by request.

The public API is :mod:`authpairs.api`, every name of its ``__all__`` also here (loaded on
first use, so ``import authpairs`` stays cheap)::

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

from authpairs._version import __version__ as __version__

if TYPE_CHECKING:
    from authpairs.api import *  # noqa: F403


def __dir__() -> list[str]:
    """The package's names with the public API's, loaded or not."""
    return sorted({*globals(), *__getattr__("__all__")})


def __getattr__(name: str) -> Any:
    """A name of the public API (``authpairs.api.__all__``), loaded on first use."""
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module 'authpairs' has no attribute {name!r}")
    api = importlib.import_module("authpairs.api")
    if name == "__all__":
        return [*api.__all__, "__version__"]
    if name in api.__all__:
        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'authpairs' has no attribute {name!r}")
