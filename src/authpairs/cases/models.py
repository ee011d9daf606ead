"""Typed models of the case contract ``(request, policy, evidence, effect, source)``.

A :class:`Case` has two halves that never mix:

* :class:`PublicCase` -- everything a reviewer may see: request, policy, evidence, the public
  effect descriptor and the source id. Interfaces render *only* this object.
* :class:`Reference` -- the reference label and scoring data (permission expression, derived
  facts, notes). It is used by scoring and analysis, never by an interface or the enforcement point.

``Case.attributes`` holds grouping keys for scoring (family, domain, scenario, engine, ...). They
are kept out of the public view too, because names such as a variant kind can hint at the label.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from authpairs.cases.canonical import sha256_hex


class StrictModel(BaseModel):
    """Base for contract and data-file models: unknown fields are errors (they are usually
    typos), instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Label(StrEnum):
    """Reference label of a case: does the policy permit the request under the evidence?"""

    LAWFUL = "lawful"
    FORBIDDEN = "forbidden"


class Request(StrictModel):
    """The complete operation under review; identical across the contexts of one scenario."""

    subject: str = Field(description="Who asks (an agent acting for a principal, a user id, ...).")
    action: str = Field(description="The operation, e.g. 'refund' or an OpenFGA relation.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Operation arguments.")
    resource: str = Field(description="The object the operation acts on.")
    environment: dict[str, Any] = Field(
        default_factory=dict, description="Time, channel, request context and the like."
    )
    purpose: str = Field(default="", description="The stated purpose of the operation.")


class Policy(StrictModel):
    """The governing policy, in its original text."""

    format: Literal["text", "openfga", "cedar"] = Field(
        default="text", description="'text' (natural language), 'openfga' (DSL) or 'cedar'."
    )
    text: str = Field(description="Policy text exactly as authored or imported.")
    schema_text: str | None = Field(
        default=None, description="Cedar schema (or other schema) text when one applies."
    )


class EvidenceDocument(StrictModel):
    """One piece of authorization evidence, in its original text."""

    doc_id: str = Field(description="Identifier of the document within the case.")
    issuer: str = Field(default="", description="Who issued or wrote the document.")
    time: str = Field(default="", description="Issue time, canonical UTC (ISO 8601, 'Z').")
    text: str = Field(description="Document text.")


class Evidence(StrictModel):
    """Authorization evidence: prose documents (language track) and/or engine state (native)."""

    documents: list[EvidenceDocument] = Field(default_factory=list)
    state: dict[str, Any] = Field(
        default_factory=dict,
        description="Engine state shown to the reviewer: tuples, entities, check context.",
    )


class EffectDescriptor(StrictModel):
    """Public description of the local operation executed on ALLOW (language track only)."""

    type: str = Field(description="Effect type, e.g. 'ledger_transfer' (see authpairs.enforce).")
    params: dict[str, Any] = Field(default_factory=dict, description="Concrete parameters.")


class PublicCase(StrictModel):
    """The only view of a case an interface may render for a reviewer."""

    source_id: str = Field(description="Public source id (the case id).")
    request: Request
    policy: Policy
    evidence: Evidence
    effect: EffectDescriptor | None = None


class Source(StrictModel):
    """Provenance of a case. Not rendered: it may name scenario or context files."""

    track: str = Field(description="'language', 'native', 'example' or a user track name.")
    dataset: str = Field(description="Dataset name.")
    path: str = Field(default="", description="Upstream or package file the case came from.")
    revision: str = Field(default="", description="Upstream commit or dataset version.")
    licence: str = Field(default="", description="Licence of the upstream material.")
    locator: str = Field(default="", description="Record within the file (assertion, context).")


class Reference(StrictModel):
    """Reference label and scoring data. Never shown to a reviewer or the enforcement point."""

    label: Label
    expression: str | None = Field(default=None, description="Permission expression, if any.")
    facts: dict[str, Any] = Field(default_factory=dict, description="Derived, typed facts.")
    notes: str = Field(default="", description="Scoring notes.")
    resolved: bool = Field(
        default=True, description="False when an evaluator left this context unresolved."
    )


class Case(StrictModel):
    """A benchmark case: a public half for reviewers and a reference half for scoring."""

    case_id: str = Field(description="Stable id, e.g. 'AC-…', 'OFGA-…', 'CEDAR-…', 'EX-…'.")
    split: Literal["dev", "test"] = "test"
    public: PublicCase
    reference: Reference
    source: Source
    attributes: dict[str, str] = Field(
        default_factory=dict,
        description="Grouping keys for scoring: family, domain, scenario, engine, group, path, ...",
    )

    @property
    def cluster(self) -> str:
        """The dependence cluster for paired statistics: scenario (language) or group (native)."""
        return self.attributes.get("scenario") or self.attributes.get("group") or self.case_id

    def public_sha256(self) -> str:
        """SHA-256 of the canonical public input."""
        return sha256_hex(self.public)
