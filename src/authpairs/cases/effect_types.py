"""Effect types, each defined once: parameter model, seeder, executor, verifier, documentation.

An :class:`EffectType` is the single source of truth for one kind of real operation. Dataset
checks (``authpairs data check``) and the enforcement point validate descriptors with the same
parameter model (:func:`parse_params`). The seeder, executor and verifier are named as import
paths and loaded only by the enforcement point, so the case contract never imports sandbox code,
and a verifier module never imports an executor module.

Add an effect type: write a parameter model (a subclass of
:class:`~authpairs.cases.effect_params.EffectParams`), a seeder, an executor module and an
independent verifier module, then register one :class:`EffectType` (``EFFECT_TYPES.add(...)``, or
the ``authpairs.effect_types`` entry-point group for a plugin).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from authpairs.cases import effect_params as p
from authpairs.cases.effect_params import DescriptorError, EffectParams
from authpairs.cases.models import EffectDescriptor
from authpairs.registry import Registry, load_object


@dataclass(frozen=True)
class EffectType:
    """One effect type: what its parameters are and which code seeds, executes and verifies it.

    ``seeder``, ``executor`` and ``verifier`` are ``"module:attribute"`` paths: the seeder and
    executor are functions, the verifier a class with no constructor arguments.
    """

    name: str
    params: type[EffectParams]
    seeder: str
    executor: str
    verifier: str
    doc: str

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


def _check(raw: object) -> EffectType:
    if not isinstance(raw, EffectType):
        raise TypeError(f"{raw!r} is not an EffectType")
    return raw


EFFECT_TYPES: Registry[EffectType] = Registry("effect_types", _check)
"""Effect type name -> :class:`EffectType` (built-ins below; plugins via entry points)."""

_E = "authpairs.enforce"
_BUILT_IN: tuple[tuple[str, type[EffectParams], str, str, str], ...] = (
    ("ledger_transfer", p.LedgerTransfer, "ledger:execute_ledger_transfer",
     "ledger:LedgerVerifier", "Move an amount between two ledger accounts."),
    ("order_creation", p.OrderCreation, "orders:execute_order_creation",
     "orders:OrderVerifier", "Create a purchase order with one line item."),
    ("record_update", p.RecordUpdate, "records:execute_record_update",
     "records:RecordVerifier", "Set one field of one record."),
    ("byte_delivery", p.ByteDelivery, "delivery:execute_byte_delivery",
     "delivery:DeliveryVerifier", "Deliver a file into a recipient's outbox."),
    ("deployment", p.Deployment, "deployment:execute_deployment",
     "deployment:DeploymentVerifier", "Deploy a version of a service to a share of traffic."),
    ("document_signing", p.DocumentSigning, "signing:execute_document_signing",
     "signing:SigningVerifier", "Sign a document with the signer's Ed25519 key."),
    ("reservation", p.Reservation, "reservation:execute_reservation",
     "reservation:ReservationVerifier", "Reserve a resource for a holder over an interval."),
    ("analysis_inclusion", p.AnalysisInclusion, "analysis:execute_analysis_inclusion",
     "analysis:AnalysisVerifier", "Include a participant in an analysis dataset."),
    ("download_delivery", p.DownloadDelivery, "download:execute_download_delivery",
     "download:DownloadVerifier", "Publish a complete download served over HTTP on 127.0.0.1."),
)
for _name, _params, _executor, _verifier, _doc in _BUILT_IN:
    EFFECT_TYPES.add(_name, EffectType(
        name=_name, params=_params, seeder=f"{_E}.seeding:seed_{_name}",
        executor=f"{_E}.execute.{_executor}", verifier=f"{_E}.verify.{_verifier}", doc=_doc))

BUILT_IN_EFFECT_TYPES: tuple[str, ...] = tuple(row[0] for row in _BUILT_IN)
"""The nine built-in effect types, in the paper's order."""


def parse_params(effect: EffectDescriptor) -> EffectParams:
    """Validate a public descriptor into its typed parameter model.

    Raises :class:`DescriptorError` naming the effect type and the offending parameter.
    """
    if not isinstance(effect, EffectDescriptor):
        raise TypeError(f"expected an EffectDescriptor, got {type(effect).__name__}")
    if effect.type not in EFFECT_TYPES:
        raise DescriptorError(effect.type, "unknown effect type; expected one of "
                              f"{', '.join(EFFECT_TYPES.names())}")
    model = EFFECT_TYPES.get(effect.type).params
    try:
        return model.model_validate(effect.params)
    except ValidationError as exc:
        field, message = _problems(exc, effect.type)[0]
        raise DescriptorError(effect.type, message, field or None) from None


def descriptor_problems(effect: EffectDescriptor) -> list[tuple[str | None, str]]:
    """Every problem of a descriptor as ``(parameter, message)``; empty when valid.

    The parameter is None for an unknown type and ``""`` for a rule across parameters.

    The same parameter models as :func:`parse_params`, so a descriptor that passes a dataset
    check is one the enforcement point accepts.
    """
    if effect.type not in EFFECT_TYPES:
        return [(None, f"unknown effect type {effect.type!r} (one of: "
                       f"{', '.join(EFFECT_TYPES.names())})")]
    try:
        EFFECT_TYPES.get(effect.type).params.model_validate(effect.params)
    except ValidationError as exc:
        return _problems(exc, effect.type)
    return []


def _problems(exc: ValidationError, effect_type: str) -> list[tuple[str | None, str]]:
    found: list[tuple[str | None, str]] = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"]
        if error["type"] == "missing":
            message = f"is required for {effect_type}"
        elif error["type"] == "extra_forbidden":
            allowed = ", ".join(EFFECT_TYPES.get(effect_type).params.model_fields)
            message = f"is not a parameter of {effect_type} (allowed: {allowed})"
        elif error["type"] in ("string_type", "int_type"):
            message = f"{message}, got {error['input']!r}"
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        found.append((field, message))
    return found


def validate_effect(effect: EffectDescriptor) -> None:
    """Check a descriptor (for dataset loaders); raises :class:`DescriptorError` if malformed."""
    parse_params(effect)


def param_models() -> dict[str, type[EffectParams]]:
    """Every registered effect type's parameter model, by name."""
    return {name: EFFECT_TYPES.get(name).params for name in EFFECT_TYPES.names()}
