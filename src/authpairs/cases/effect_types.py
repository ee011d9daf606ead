"""Effect types, each defined once: name, parameter model and documentation.

An :class:`EffectType` is the case contract's view of one kind of real operation. Dataset checks
(``authpairs data check``) and the enforcement point validate descriptors with the same parameter
model (:func:`parse_params`). The code that seeds, executes and verifies an effect type belongs
to the enforcement layer, which binds it to the type's name
(:mod:`authpairs.enforce.implementations`), so the case contract never names sandbox code.

Add an effect type: write a parameter model (a subclass of
:class:`~authpairs.cases.effect_params.EffectParams`) and register one :class:`EffectType`
(``EFFECT_TYPES.add(...)``, or the ``authpairs.effect_types`` entry-point group for a plugin);
then its seeder, executor and verifier in the enforcement layer.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass

from pydantic import ValidationError

from authpairs.cases import effect_params as p
from authpairs.cases.effect_params import DescriptorError, EffectParams
from authpairs.cases.models import EffectDescriptor
from authpairs.registry import Registry


@dataclass(frozen=True)
class EffectType:
    """One effect type: its name, what its parameters are, and one line saying what it does."""

    name: str
    params: type[EffectParams]
    doc: str


def _check(raw: object) -> EffectType:
    if not isinstance(raw, EffectType):
        raise TypeError(f"{raw!r} is not an EffectType")
    return raw


EFFECT_TYPES: Registry[EffectType] = Registry("effect_types", _check)
"""Effect type name -> :class:`EffectType` (built-ins below; plugins via entry points)."""

_BUILT_IN: tuple[tuple[str, type[EffectParams], str], ...] = (
    ("ledger_transfer", p.LedgerTransfer, "Move an amount between two ledger accounts."),
    ("order_creation", p.OrderCreation, "Create a purchase order with one line item."),
    ("record_update", p.RecordUpdate, "Set one field of one record."),
    ("byte_delivery", p.ByteDelivery, "Deliver a file into a recipient's outbox."),
    ("deployment", p.Deployment, "Deploy a version of a service to a share of traffic."),
    ("document_signing", p.DocumentSigning, "Sign a document with the signer's Ed25519 key."),
    ("reservation", p.Reservation, "Reserve a resource for a holder over an interval."),
    ("analysis_inclusion", p.AnalysisInclusion, "Include a participant in an analysis dataset."),
    ("download_delivery", p.DownloadDelivery,
     "Publish a complete download served over HTTP on 127.0.0.1."),
)
for _name, _params, _doc in _BUILT_IN:
    EFFECT_TYPES.add(_name, EffectType(name=_name, params=_params, doc=_doc))

BUILT_IN_EFFECT_TYPES: tuple[str, ...] = tuple(row[0] for row in _BUILT_IN)
"""The nine built-in effect types, in the paper's order."""


def parse_params(effect: EffectDescriptor) -> EffectParams:
    """Validate a public descriptor into its typed parameter model.

    Raises :class:`DescriptorError` naming the effect type and the offending parameter.
    """
    if not isinstance(effect, EffectDescriptor):
        raise TypeError(f"expected an EffectDescriptor, got {type(effect).__name__}")
    if effect.type in EFFECT_TYPES:
        with suppress(ValidationError):  # the problems are read again below, by name
            return EFFECT_TYPES.get(effect.type).params.model_validate(effect.params)
    field, message = descriptor_problems(effect)[0]
    raise DescriptorError(effect.type, message, field or None)


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
