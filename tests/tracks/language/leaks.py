"""Helper: find reference or attribute data in the public half of a case."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from authpairs.cases.canonical import canonical_json
from authpairs.cases.models import Case

PUBLIC_KEYS = {"source_id", "request", "policy", "evidence", "effect"}
DOC_KEYS = {"doc_id", "issuer", "time", "text"}


def _strings(value: Any, keys: bool = False) -> Iterator[str]:
    """Every string value inside ``value`` (and every mapping key when ``keys``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if keys:
                yield key
            yield from _strings(item, keys)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, keys)


def public_leaks(case: Case) -> list[str]:
    """Reasons why the public half of ``case`` exposes scoring data (empty when clean)."""
    problems: list[str] = []
    public = case.public.model_dump(mode="json")
    if set(public) != PUBLIC_KEYS:
        problems.append(f"public keys {sorted(public)}")
    for doc in public["evidence"]["documents"]:
        if set(doc) != DOC_KEYS:
            problems.append(f"document keys {sorted(doc)}")
    if public["evidence"]["state"]:
        problems.append("evidence.state is not empty")
    if public["source_id"] != case.case_id:
        problems.append("source_id is not the case id")
    values = set(_strings(public))
    names = set(_strings(public, keys=True))
    text = canonical_json(public)
    if case.reference.expression and case.reference.expression.strip() in text:
        problems.append("expression text is public")
    for name in ("label", "expression", "facts", "resolved", "unresolved", "variant",
                 "family", "scenario"):
        if name in public or name in public["request"]:
            problems.append(f"public field named {name!r}")
    # generic variant words ('issuer', 'status') are legitimate keys; check them as values only
    if case.attributes.get("variant") in values:
        problems.append(f"variant {case.attributes['variant']!r} appears as a public value")
    for key in ("path", "family", "scenario"):
        if case.attributes.get(key) in names:
            problems.append(f"attribute {key}={case.attributes[key]!r} appears as a public "
                            "value or key")
    if case.reference.label.value in values:
        problems.append("the label appears as a public value")
    return problems
