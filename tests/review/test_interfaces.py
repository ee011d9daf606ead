"""Interfaces render the public case faithfully and declare their templates and schemas."""

from __future__ import annotations

import pytest

from authpairs.cases.models import (
    EffectDescriptor,
    Evidence,
    EvidenceDocument,
    Policy,
    PublicCase,
    Request,
)
from authpairs.review.interfaces import INTERFACES, get_interface
from authpairs.review.schemas import STRUCTURED_SCHEMA

CASE = PublicCase(
    source_id="X-1",
    request=Request(subject="user:anne", action="can_view", resource="doc:1",
                    arguments={"amount": 75}, environment={"time": "2026-01-01T00:00:00Z"},
                    purpose="audit"),
    policy=Policy(format="cedar", text="permit(principal, action, resource);",
                  schema_text="entity User;"),
    evidence=Evidence(documents=[EvidenceDocument(doc_id="d1", issuer="HR",
                                                  time="2026-01-01T00:00:00Z",
                                                  text="Anne is on the team.")],
                      state={"context": {"mfa": True}, "entities": [{"uid": "User::anne"}],
                             "tuples": []}),
    effect=EffectDescriptor(type="record_update", params={"record_id": "R1"}))


@pytest.mark.parametrize("name", INTERFACES.names())
def test_every_public_field_is_rendered(name: str) -> None:
    request = get_interface(name).render(CASE)
    # Chat messages, a raw completion prompt, and request options (Granite's criteria,
    # Nemotron content safety's custom policy).
    kwargs = [v for v in (request.options or {}).values() if isinstance(v, dict)]
    text = "\n".join([*(m["content"] for m in request.messages), request.prompt or "",
                      *(v["guardian_config"]["custom_criteria"] for v in kwargs
                        if "guardian_config" in v),
                      *(v["custom_policy"] for v in kwargs if "custom_policy" in v)])
    for fragment in ["permit(principal, action, resource);", "entity User;", "user:anne",
                     "can_view", "doc:1", '"amount": 75', "2026-01-01T00:00:00Z", "audit",
                     "Anne is on the team.", "issued by HR", '{"mfa": true}',
                     '- {"uid": "User::anne"}', "### tuples\n(none)", "record_update",
                     '"record_id": "R1"', "Case id: X-1"]:
        assert fragment in text, (name, fragment)


def test_only_schema_review_constrains_decoding() -> None:
    assert get_interface("direct").render(CASE).response_format is None
    assert get_interface("structured").render(CASE).response_format is None
    schema = get_interface("schema").render(CASE).response_format
    assert schema is not None and schema["json_schema"]["schema"] == STRUCTURED_SCHEMA
    # The schema fixes the format only: it names no policy, label or case content.
    assert "lawful" not in str(schema) and "forbidden" not in str(schema)


def test_structured_and_schema_share_the_prompt() -> None:
    structured = get_interface("structured").render(CASE).messages
    schema = get_interface("schema").render(CASE).messages
    assert structured == schema


def test_template_hashes_cover_every_file_used() -> None:
    hashes = get_interface("schema").template_hashes()
    assert set(hashes) == {"system.j2", "structured.j2", "case.j2"}
    assert all(len(h) == 64 for h in hashes.values())


def test_unknown_interface_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="direct"):
        get_interface("nope")
