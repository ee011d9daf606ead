"""The MCP tools of agent mode: one per registered effect type, its input schema the effect's
parameter model."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from authpairs.cases.canonical import sha256_hex
from authpairs.cases.effect_types import EFFECT_TYPES
from authpairs.cases.models import EffectDescriptor
from authpairs.runs.records import Proposal


def tool_specs() -> list[types.Tool]:
    """An MCP tool for every registered effect type, in registry order. The schema is the
    parameter model's JSON Schema (pydantic), so a client sees exactly the parameters the
    enforcement point accepts; the description is the effect type's one line and its model's
    docstring."""
    specs: list[types.Tool] = []
    for name in EFFECT_TYPES.names():
        effect_type = EFFECT_TYPES.get(name)
        model = effect_type.params
        schema = model.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        detail = " ".join((model.__doc__ or "").split())
        description = effect_type.doc if not detail else f"{effect_type.doc} {detail}"
        specs.append(types.Tool(name=name, description=description, input_schema=schema))
    return specs


def proposed_descriptor(tool: str, arguments: dict[str, Any] | None) -> EffectDescriptor:
    """The effect descriptor of a tool call: the tool is the effect type, the arguments its
    parameters (validated later, by the enforcement point's parameter models)."""
    return EffectDescriptor(type=tool, params=dict(arguments or {}))


def proposal_of(case_effect: EffectDescriptor | None, proposed: EffectDescriptor) -> Proposal:
    """Whether a proposed call is the case's own operation (``CASE_OPERATION``: the same effect
    type and exactly the same parameters, compared as canonical JSON, so ``1`` and ``1.0``, or
    ``"75"`` and ``"75.00"``, differ) or another (``OTHER_OPERATION``)."""
    same = case_effect is not None and sha256_hex(case_effect) == sha256_hex(proposed)
    return Proposal.CASE_OPERATION if same else Proposal.OTHER_OPERATION
