"""Typed models of one scenario file (see ``docs/datasets/language-format.md``).

These models check *shape* (field names, enumerations, basic types). Cross-field rules -- exact
quotes, fact types against values, effect parameters, expression names -- are checked by
:mod:`authpairs.tracks.language.validate`, which reports the file and field of every problem.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from authpairs.cases.models import Label, Request, StrictModel

FactType = Literal["string", "number", "boolean", "timestamp", "null", "list", "records"]
FieldType = Literal["string", "number", "boolean", "timestamp"]
#: Keys of a record item that give its span; they are not fields.
RECORD_SPAN_KEYS = ("source", "quote")
Split = Literal["dev", "test"]
Domain = Literal["payments", "clinical", "software", "education", "documents"]
Family = Literal[
    "delegated_scope", "purpose_category", "relationship", "joint_authority", "amount_interval",
    "authority_transition", "revoke_supersede", "consumption", "conditional_exception",
    "conflict_exception", "public_basis", "ownership", "role_hierarchy", "break_glass",
]
Variant = Literal[
    "baseline", "alternate_path", "scope", "status", "issuer", "relationship", "timing",
    "conflict", "irrelevant_evidence", "missing_prerequisite",
]


class FactSpec(StrictModel):
    """A typed fact bound to an exact quote of a context document or of the policy.

    ``source`` is a document id (its text), ``<id>.issuer`` / ``<id>.time`` / ``<id>.id`` (that
    metadata field of the document) or ``policy``. A ``records`` fact declares ``fields`` and its
    value is a list of mappings; each record also carries its own ``quote`` (and optionally its
    own ``source``, by default the fact's).
    """

    value: Any = Field(description="The value, typed by ``type``.")
    type: FactType
    source: str = Field(min_length=1, description="Document id, '<id>.issuer|time|id' or "
                                                  "'policy'.")
    quote: str = Field(min_length=1, description="Exact substring of the source text.")
    fields: dict[str, FieldType] | None = Field(
        default=None, description="Records only: field name -> type.")

    def evaluated_value(self) -> Any:
        """The value as the evaluators read it (records without their span keys)."""
        if self.type != "records" or not isinstance(self.value, list):
            return self.value
        return [{k: v for k, v in item.items() if k not in RECORD_SPAN_KEYS}
                if isinstance(item, dict) else item for item in self.value]

    @field_validator("type", mode="before")
    @classmethod
    def _yaml_null_type(cls, value: Any) -> Any:
        """Unquoted ``type: null`` reaches us as YAML null; it means the type ``"null"``."""
        return "null" if value is None else value


class DocumentSpec(StrictModel):
    """One evidence document of a context."""

    id: str = Field(min_length=1)
    issuer: str = Field(min_length=1)
    time: str = Field(description="Canonical UTC timestamp, 'YYYY-MM-DDTHH:MM:SSZ'.")
    text: str = Field(min_length=1)


class ContextSpec(StrictModel):
    """One of the four contexts: evidence documents, typed facts and the author's label."""

    id: str
    label: Label
    variant: Variant
    path: str = Field(min_length=1, description="Authorization path established or broken.")
    documents: list[DocumentSpec] = Field(min_length=1)
    facts: dict[str, FactSpec] = Field(default_factory=dict)
    unresolved_reason: str | None = None


class EffectSpec(StrictModel):
    """The public effect descriptor: one of the nine effect types with concrete parameters."""

    type: str
    params: dict[str, Any]


class Scenario(StrictModel):
    """A complete scenario: one operation under four contexts."""

    slug: str
    title: str = Field(min_length=1)
    split: Split
    domain: Domain
    family: Family
    policy: str = Field(min_length=1)
    request: Request
    effect: EffectSpec
    expression: str = Field(min_length=1)
    policy_facts: dict[str, FactSpec] = Field(default_factory=dict)
    contexts: list[ContextSpec]


class LoadedScenario(StrictModel):
    """A validated scenario with the package-relative path of its file."""

    scenario: Scenario
    path: str = Field(description="File path relative to the scenarios root ('payments/x.yaml').")
