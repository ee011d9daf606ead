"""Enforcement: the enforcement point, the per-run sandbox, effect executors and verifiers.

Use :func:`make_enforcer` (the run orchestrator does)::

    with make_enforcer(config) as enforcer:
        record = enforcer.enforce(case_id, case.public.effect, outcome.dispatch)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from authpairs.enforce.base import Enforcer
from authpairs.enforce.descriptors import (
    EFFECT_TYPES,
    PARAM_MODELS,
    DescriptorError,
    parse_params,
    validate_effect,
)
from authpairs.enforce.enforcer import DecisionOnlyEnforcer, LocalEnforcer
from authpairs.enforce.sandbox import Sandbox

if TYPE_CHECKING:
    from authpairs.runs.config import RunConfig


def make_enforcer(config: RunConfig | None = None, *, parent: Path | None = None,
                  keep: bool = False) -> Enforcer:
    """The enforcer for a run: a :class:`LocalEnforcer` with a fresh sandbox, or a
    :class:`DecisionOnlyEnforcer` when ``config.enforce`` is False."""
    if config is not None and not config.enforce:
        return DecisionOnlyEnforcer()
    return LocalEnforcer(parent, keep=keep)


__all__ = [
    "EFFECT_TYPES",
    "PARAM_MODELS",
    "DecisionOnlyEnforcer",
    "DescriptorError",
    "Enforcer",
    "LocalEnforcer",
    "Sandbox",
    "make_enforcer",
    "parse_params",
    "validate_effect",
]
