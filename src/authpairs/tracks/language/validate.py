"""Cross-field validation of one scenario (everything the pydantic models cannot express).

:func:`validate_scenario` returns ``(field, message)`` pairs; the loader adds the file name.
Fields use the YAML layout with 0-based list indexes, e.g. ``contexts[2].facts.grant.limit``.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from authpairs.cases.effect_types import descriptor_problems
from authpairs.cases.models import EffectDescriptor, Label
from authpairs.tracks.language.expr.ast import names
from authpairs.tracks.language.expr.parser import ExpressionSyntaxError, parse_expression
from authpairs.tracks.language.models import ContextSpec, FactSpec, Scenario
from authpairs.tracks.language.spec import CONTEXTS_PER_SCENARIO

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FACT_KEY_RE = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*$")
DOC_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
IDENT_RE = re.compile(r"^[A-Za-z0-9._-]+$")
DECIMAL_RE = re.compile(r"^\d+(?:\.\d+)?$")
CANONICAL_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
CONTEXT_IDS = tuple(f"c{i}" for i in range(1, CONTEXTS_PER_SCENARIO + 1))

Problems = list[tuple[str, str]]


def is_canonical_utc(value: Any) -> bool:
    """True for a valid ``YYYY-MM-DDTHH:MM:SSZ`` string."""
    if not isinstance(value, str) or not CANONICAL_RE.match(value):
        return False
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value)


_QUOTE_HINT = " (YAML reads unquoted yes/no/on/off, numbers and dates as non-strings: quote it)"


def fact_value_problem(fact: FactSpec) -> str | None:
    """Why ``fact.value`` does not fit ``fact.type`` (None when it fits)."""
    value = fact.value
    if fact.type == "string" and not isinstance(value, str):
        return f"type string needs a string value, got {value!r}" + _QUOTE_HINT
    if fact.type == "number" and not _is_number(value):
        return f"type number needs a finite number, got {value!r}"
    if fact.type == "boolean" and not isinstance(value, bool):
        return f"type boolean needs true or false, got {value!r}"
    if fact.type == "null" and value is not None:
        return f"type null needs the value null, got {value!r}"
    if fact.type == "timestamp" and not is_canonical_utc(value):
        return f"type timestamp needs canonical UTC 'YYYY-MM-DDTHH:MM:SSZ', got {value!r}"
    if fact.type == "list" and (not isinstance(value, list) or not all(
            isinstance(item, str) or _is_number(item) for item in value)):
        return f"type list needs a list of strings or numbers, got {value!r}"
    return None


def _check_fact(where: str, key: str, fact: FactSpec, texts: dict[str, str],
                problems: Problems) -> None:
    if not FACT_KEY_RE.match(key):
        problems.append((where, "fact key must be a dotted lower-case name "
                                "([a-z_][a-z0-9_]* segments)"))
    if key == "request" or key.startswith("request."):
        problems.append((where, "fact keys may not start with 'request.' (request fields are "
                                "names of their own)"))
    wrong = fact_value_problem(fact)
    if wrong:
        problems.append((f"{where}.value", wrong))
    if fact.source not in texts:
        known = ", ".join(sorted(texts))
        problems.append((f"{where}.source", f"unknown source {fact.source!r} (known: {known})"))
    elif fact.quote not in texts[fact.source]:
        what = "the policy" if fact.source == "policy" else f"document {fact.source}"
        problems.append((f"{where}.quote", f"quote not found in {what}: {fact.quote!r}"))


def _check_context(index: int, context: ContextSpec, scenario: Scenario,
                   problems: Problems) -> None:
    base = f"contexts[{index}]"
    texts: dict[str, str] = {"policy": scenario.policy}
    for d_index, doc in enumerate(context.documents):
        where = f"{base}.documents[{d_index}]"
        if not DOC_ID_RE.match(doc.id) or doc.id == "policy":
            problems.append((f"{where}.id", f"document id {doc.id!r} must match [A-Za-z0-9_-]+ "
                                            "and not be 'policy'"))
        if doc.id in texts and doc.id != "policy":
            problems.append((f"{where}.id", f"duplicate document id {doc.id!r} in context "
                                            f"{context.id}"))
        texts[doc.id] = doc.text
        if not is_canonical_utc(doc.time):
            problems.append((f"{where}.time", f"must be canonical UTC 'YYYY-MM-DDTHH:MM:SSZ', "
                                              f"got {doc.time!r}"))
    for key, fact in context.facts.items():
        _check_fact(f"{base}.facts.{key}", key, fact, texts, problems)
        if key in scenario.policy_facts:
            problems.append((f"{base}.facts.{key}", "also defined in policy_facts"))
    if context.unresolved_reason is not None and not context.unresolved_reason.strip():
        problems.append((f"{base}.unresolved_reason", "must explain why, or be omitted"))


def _check_contexts(scenario: Scenario, problems: Problems) -> None:
    contexts = scenario.contexts
    if len(contexts) != CONTEXTS_PER_SCENARIO:
        problems.append(("contexts", f"exactly {CONTEXTS_PER_SCENARIO} contexts required, "
                                     f"got {len(contexts)}"))
    ids = [c.id for c in contexts]
    for index, cid in enumerate(ids):
        if cid not in CONTEXT_IDS:
            problems.append((f"contexts[{index}].id", f"context ids are c1..c4, got {cid!r}"))
        elif ids.index(cid) != index:
            problems.append((f"contexts[{index}].id", f"duplicate context id {cid!r}"))
    lawful = sum(1 for c in contexts if c.label is Label.LAWFUL)
    if lawful != 2 or len(contexts) - lawful != 2:
        problems.append(("contexts", f"2 lawful and 2 forbidden contexts required, got {lawful} "
                                     f"lawful and {len(contexts) - lawful} forbidden"))
    seen: dict[str, str] = {}
    for index, context in enumerate(contexts):
        _check_context(index, context, scenario, problems)
        key = repr([(d.issuer, d.time, d.text) for d in context.documents])
        if key in seen:
            problems.append((f"contexts[{index}].documents",
                             f"identical evidence to context {seen[key]}"))
        seen.setdefault(key, context.id)


def _check_effect(scenario: Scenario, problems: Problems) -> None:
    """The effect descriptor, checked with the enforcement point's own parameter models."""
    effect = scenario.effect
    for field, message in descriptor_problems(EffectDescriptor(type=effect.type,
                                                               params=effect.params)):
        where = "effect.type" if field is None else ".".join(
            part for part in ("effect.params", field) if part)
        value = effect.params.get(field) if field else None
        if message.startswith("Input should be a valid string") and value is not None:
            message += _QUOTE_HINT
        problems.append((where, message))


def _request_has(request: dict[str, Any], path: str) -> bool:
    node: Any = request
    for part in path.split(".")[1:]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _check_expression(scenario: Scenario, problems: Problems) -> None:
    try:
        tree = parse_expression(scenario.expression)
    except ExpressionSyntaxError as exc:
        problems.append(("expression", str(exc)))
        return
    declared = set(scenario.policy_facts)
    for context in scenario.contexts:
        declared.update(context.facts)
    request = scenario.request.model_dump(mode="json")
    for name in names(tree):
        if name.startswith("request."):
            if not _request_has(request, name):
                problems.append(("expression", f"{name} is not a field of the request"))
        elif name not in declared:
            problems.append(("expression", f"name {name!r} is not a fact of any context or of "
                                           "policy_facts"))


def validate_scenario(scenario: Scenario, path: str | Path | None = None) -> Problems:
    """All cross-field problems of ``scenario`` as (field, message) pairs."""
    problems: Problems = []
    if not SLUG_RE.match(scenario.slug):
        problems.append(("slug", f"must be kebab-case, got {scenario.slug!r}"))
    if path is not None:
        p = Path(path)
        if p.stem != scenario.slug:
            problems.append(("slug", f"must equal the file name stem {p.stem!r}, "
                                     f"got {scenario.slug!r}"))
        if p.parent.name != scenario.domain:
            problems.append(("domain", f"{scenario.domain!r} does not match the directory "
                                       f"{p.parent.name!r}"))
    for key, fact in scenario.policy_facts.items():
        where = f"policy_facts.{key}"
        if fact.source != "policy":
            problems.append((f"{where}.source", "policy_facts must have source: policy"))
            continue
        _check_fact(where, key, fact, {"policy": scenario.policy}, problems)
    _check_contexts(scenario, problems)
    _check_effect(scenario, problems)
    _check_expression(scenario, problems)
    return problems
