"""The public surface for extending authpairs: everything a plugin imports, from one module.

A plugin adds review interfaces, guardrails, backend kinds, effect types and dataset tracks. It
imports only from here (``from authpairs.plugins import ReviewInterface, register_interface``);
every other module of the package is internal and may change without notice. Names load on
first use, so importing this module is cheap.

Register a component either in code, with the ``register_*`` functions below, or, for a
pip-installed distribution, through entry points (``[project.entry-points."authpairs.<kind>"]``
with kind ``interfaces``, ``guardrails``, ``backends``, ``effect_types``,
``effect_implementations`` or ``tracks``). ``docs/architecture.md`` ("Where to add things") walks
through each kind; ``tests/architecture/toy_plugin.py`` is a complete example.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from authpairs.registry import caller_module

if TYPE_CHECKING:
    from collections.abc import Callable

    from authpairs.backends.base import Backend as Backend
    from authpairs.backends.base import ChatRequest as ChatRequest
    from authpairs.backends.base import ChatResponse as ChatResponse
    from authpairs.backends.config import BACKEND_KINDS as BACKEND_KINDS
    from authpairs.backends.config import BackendConfigBase as BackendConfigBase
    from authpairs.backends.config import SamplingConfig as SamplingConfig
    from authpairs.cases.dataset import Dataset as Dataset
    from authpairs.cases.effect_params import DescriptorError as DescriptorError
    from authpairs.cases.effect_params import EffectParams as EffectParams
    from authpairs.cases.effect_params import Identifier as Identifier
    from authpairs.cases.effect_types import EFFECT_TYPES as EFFECT_TYPES
    from authpairs.cases.effect_types import EffectType as EffectType
    from authpairs.cases.models import Case as Case
    from authpairs.cases.models import EffectDescriptor as EffectDescriptor
    from authpairs.cases.models import Evidence as Evidence
    from authpairs.cases.models import EvidenceDocument as EvidenceDocument
    from authpairs.cases.models import Label as Label
    from authpairs.cases.models import Policy as Policy
    from authpairs.cases.models import PublicCase as PublicCase
    from authpairs.cases.models import Reference as Reference
    from authpairs.cases.models import Request as Request
    from authpairs.cases.models import Source as Source
    from authpairs.enforce.execute.context import ExecContext as ExecContext
    from authpairs.enforce.execute.context import ExecutionError as ExecutionError
    from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS as EFFECT_IMPLEMENTATIONS
    from authpairs.enforce.implementations import EffectImplementation as EffectImplementation
    from authpairs.enforce.verify.base import Judgement as Judgement
    from authpairs.enforce.verify.base import ResourceKey as ResourceKey
    from authpairs.enforce.verify.base import Verifier as Verifier
    from authpairs.enforce.verify.base import mismatch as mismatch
    from authpairs.enforce.verify.channel import ObservationError as ObservationError
    from authpairs.enforce.verify.channel import ReadChannel as ReadChannel
    from authpairs.errors import AuthpairsError as AuthpairsError
    from authpairs.errors import BackendError as BackendError
    from authpairs.errors import ConfigError as ConfigError
    from authpairs.errors import DataError as DataError
    from authpairs.errors import EnforcementError as EnforcementError
    from authpairs.errors import MissingDependencyError as MissingDependencyError
    from authpairs.errors import ReviewerError as ReviewerError
    from authpairs.errors import TransportError as TransportError
    from authpairs.registry import Entry as Entry
    from authpairs.registry import Registry as Registry
    from authpairs.registry import RegistryError as RegistryError
    from authpairs.registry import load_object as load_object
    from authpairs.review.guardrails.native import NativeInterface as NativeInterface
    from authpairs.review.guardrails.registry import GUARDRAILS as GUARDRAILS
    from authpairs.review.guardrails.registry import GuardrailFactory as GuardrailFactory
    from authpairs.review.interfaces import INTERFACES as INTERFACES
    from authpairs.review.interfaces import ReviewInterface as ReviewInterface
    from authpairs.review.interfaces import register_interface as register_interface
    from authpairs.review.outcome import Decision as Decision
    from authpairs.review.outcome import ReasonCode as ReasonCode
    from authpairs.review.outcome import ReviewOutcome as ReviewOutcome
    from authpairs.review.reviewers import Reviewer as Reviewer
    from authpairs.tracks.registry import TRACKS as TRACKS
    from authpairs.tracks.registry import TrackLoader as TrackLoader

_EXPORTS: dict[str, tuple[str, ...]] = {
    "authpairs.backends.base": ("Backend", "ChatRequest", "ChatResponse"),
    "authpairs.backends.config": ("BACKEND_KINDS", "BackendConfigBase", "SamplingConfig"),
    "authpairs.cases.dataset": ("Dataset",),
    "authpairs.cases.effect_params": ("DescriptorError", "EffectParams", "Identifier"),
    "authpairs.cases.effect_types": ("EFFECT_TYPES", "EffectType"),
    "authpairs.cases.models": (
        "Case", "EffectDescriptor", "Evidence", "EvidenceDocument", "Label", "Policy",
        "PublicCase", "Reference", "Request", "Source"),
    "authpairs.enforce.execute.context": ("ExecContext", "ExecutionError"),
    "authpairs.enforce.implementations": ("EFFECT_IMPLEMENTATIONS", "EffectImplementation"),
    "authpairs.enforce.verify.base": ("Judgement", "mismatch", "ResourceKey", "Verifier"),
    "authpairs.enforce.verify.channel": ("ObservationError", "ReadChannel"),
    "authpairs.errors": (
        "AuthpairsError", "BackendError", "ConfigError", "DataError", "EnforcementError",
        "MissingDependencyError", "ReviewerError", "TransportError"),
    "authpairs.registry": ("Entry", "load_object", "Registry", "RegistryError"),
    "authpairs.review.guardrails.native": ("NativeInterface",),
    "authpairs.review.guardrails.registry": ("GuardrailFactory", "GUARDRAILS"),
    "authpairs.review.interfaces": ("INTERFACES", "ReviewInterface", "register_interface"),
    "authpairs.review.outcome": ("Decision", "ReasonCode", "ReviewOutcome"),
    "authpairs.review.reviewers": ("Reviewer",),
    "authpairs.tracks.registry": ("TrackLoader", "TRACKS"),
}
"""Each module of the package -> the names it exports here (the imports above, for type
checkers: ``X as X`` marks each as exported); a name loads with its module on first use."""
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_MODULE_OF, "register_backend_kind", "register_effect_type",
                  "register_guardrail", "register_track"])


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (then it is a plain global)."""
    if name in _MODULE_OF:
        value = getattr(importlib.import_module(_MODULE_OF[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'authpairs.plugins' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return __all__


def register_guardrail(name: str, factory: GuardrailFactory | type[GuardrailFactory]
                       | Callable[..., Any]) -> None:
    """Register a guardrail: a :class:`GuardrailFactory` (class or instance) or a callable."""
    from authpairs.review.guardrails.registry import GUARDRAILS, as_factory

    GUARDRAILS.add(name, as_factory(factory), registered_by=caller_module(1))


def register_backend_kind(config: type[BackendConfigBase]) -> type[BackendConfigBase]:
    """Register a backend kind by its configuration model (its ``kind`` default is the name)."""
    from authpairs.backends.config import BACKEND_KINDS

    return BACKEND_KINDS.add(config.model_fields["kind"].default, config,
                             registered_by=caller_module(1))


def register_effect_type(name: str, params: type[EffectParams], *, seeder: str, executor: str,
                         verifier: str, doc: str) -> EffectType:
    """Register an effect type: its parameter model and one-line documentation (the case
    contract) and the ``"module:attribute"`` paths of its seeder, executor and verifier (the
    enforcement code)."""
    from authpairs.cases.effect_types import EFFECT_TYPES, EffectType
    from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS, EffectImplementation

    by = caller_module(1)
    effect_type = EFFECT_TYPES.add(name, EffectType(name=name, params=params, doc=doc),
                                   registered_by=by)
    EFFECT_IMPLEMENTATIONS.add(name, EffectImplementation(
        seeder=seeder, executor=executor, verifier=verifier), registered_by=by)
    return effect_type


def register_track(name: str, loader: TrackLoader) -> TrackLoader:
    """Register a dataset track: a function with no arguments returning a :class:`Dataset`."""
    from authpairs.tracks.registry import TRACKS

    return TRACKS.add(name, loader, registered_by=caller_module(1))
