"""The code behind each effect type: which seeder, executor and verifier carry it out.

The case contract (:mod:`authpairs.cases.effect_types`) knows an effect type only by its name,
parameter model and documentation; this module, in the enforcement layer, binds each name to the
enforcement code. The bindings are ``"module:attribute"`` paths loaded on first use, so the
enforcement point imports executors and verifiers only when a run needs them, and a verifier
module never imports an executor module.

Add the code of an effect type: a seeder, an executor and an independent verifier (in a module
that imports no executor code), then one :class:`EffectImplementation` under the effect type's
name (``EFFECT_IMPLEMENTATIONS.add(...)``, or the ``authpairs.effect_implementations``
entry-point group for a plugin), beside its :class:`~authpairs.cases.effect_types.EffectType`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from authpairs.registry import Registry, RegistryError, load_object


@dataclass(frozen=True)
class EffectImplementation:
    """Where the seeder, executor and verifier of one effect type are.

    Each is a ``"module:attribute"`` path: the seeder and executor are functions, the verifier a
    class with no constructor arguments.
    """

    seeder: str
    executor: str
    verifier: str

    def load_seeder(self) -> Callable[..., None]:
        """The seeding function ``(db, root, params, scope) -> None``."""
        return _callable(load_object(self.seeder), self.seeder)

    def load_executor(self) -> Callable[..., dict[str, Any]]:
        """The executor ``(params, ExecContext) -> description of what was done``."""
        return _callable(load_object(self.executor), self.executor)

    def load_verifier(self) -> Any:
        """A fresh instance of the independent verifier."""
        return _callable(load_object(self.verifier), self.verifier)()


def _callable(value: object, target: str) -> Callable[..., Any]:
    if not callable(value):
        raise TypeError(f"{target} is not callable")
    return value


def _check(raw: object) -> EffectImplementation:
    if not isinstance(raw, EffectImplementation):
        raise TypeError(f"{raw!r} is not an EffectImplementation")
    return raw


EFFECT_IMPLEMENTATIONS: Registry[EffectImplementation] = Registry("effect_implementations",
                                                                  _check)
"""Effect type name -> its :class:`EffectImplementation` (built-ins below; plugins via entry
points)."""


def implementation(effect_type: str) -> EffectImplementation:
    """The seeder, executor and verifier of ``effect_type``; a clear error when none is bound."""
    if effect_type not in EFFECT_IMPLEMENTATIONS:
        known = ", ".join(EFFECT_IMPLEMENTATIONS.names()) or "none"
        raise RegistryError(f"effect type '{effect_type}' has no seeder, executor and verifier "
                            f"registered in EFFECT_IMPLEMENTATIONS (known: {known})")
    return EFFECT_IMPLEMENTATIONS.get(effect_type)


_E = "authpairs.enforce"
_BUILT_IN_VERIFIERS = {
    "ledger_transfer": "LedgerVerifier", "order_creation": "OrderVerifier",
    "record_update": "RecordVerifier", "byte_delivery": "DeliveryVerifier",
    "deployment": "DeploymentVerifier", "document_signing": "SigningVerifier",
    "reservation": "ReservationVerifier", "analysis_inclusion": "AnalysisVerifier",
    "download_delivery": "DownloadVerifier",
}
for _name, _verifier in _BUILT_IN_VERIFIERS.items():
    EFFECT_IMPLEMENTATIONS.add(_name, EffectImplementation(
        seeder=f"{_E}.seeding:seed_built_in", executor=f"{_E}.execute.built_in:execute_{_name}",
        verifier=f"{_E}.verify.built_in:{_verifier}"))
