"""Cross-field validation of one scenario (everything the pydantic models cannot express).

:func:`validate_scenario` returns ``(field, message)`` pairs; the loader adds the file name.
Fields use the YAML layout with 0-based list indexes, e.g. ``contexts[2].facts.grant.limit``.
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path
from typing import Any

from authpairs.cases.canonical import parse_utc
from authpairs.cases.effect_types import descriptor_problems
from authpairs.cases.models import EffectDescriptor, Label
from authpairs.tracks.language.expr.ast import Name, fields_of, names
from authpairs.tracks.language.expr.parser import ExpressionSyntaxError, parse_expression
from authpairs.tracks.language.models import RECORD_SPAN_KEYS, ContextSpec, FactSpec, Scenario
from authpairs.tracks.language.spec import CONTEXTS_PER_SCENARIO

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FIELD_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
PLACEHOLDER = "TODO"
#: Document metadata a fact may quote as ``source: <doc id>.<field>``.
METADATA_FIELDS = ("issuer", "time", "id")
FACT_KEY_RE = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*$")
DOC_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
CONTEXT_IDS = tuple(f"c{i}" for i in range(1, CONTEXTS_PER_SCENARIO + 1))

Problems = list[tuple[str, str]]


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
    if fact.type == "timestamp" and parse_utc(value) is None:
        return f"type timestamp needs canonical UTC 'YYYY-MM-DDTHH:MM:SSZ', got {value!r}"
    if fact.type == "list" and (not isinstance(value, list) or not all(
            isinstance(item, str) or _is_number(item) for item in value)):
        return f"type list needs a list of strings or numbers, got {value!r}"
    if fact.type == "records" and not isinstance(value, list):
        return f"type records needs a list of records (mappings), got {value!r}"
    if fact.type != "records" and fact.fields is not None:
        return "only a records fact declares fields"
    return None


def _check_records(where: str, fact: FactSpec, texts: dict[str, str],
                   problems: Problems) -> None:
    fields = fact.fields or {}
    if not fields:
        problems.append((f"{where}.fields", "a records fact declares its fields, e.g. "
                                            "{role: string, amount: number}"))
    for name in fields:
        if not FIELD_RE.match(name) or name in RECORD_SPAN_KEYS:
            problems.append((f"{where}.fields.{name}", "field names are [a-z_][a-z0-9_]* and "
                                                       "not 'source' or 'quote'"))
    if not isinstance(fact.value, list):
        return
    for index, item in enumerate(fact.value):
        at = f"{where}.value[{index}]"
        if not isinstance(item, dict):
            problems.append((at, f"a record is a mapping of fields, got {item!r}"))
            continue
        for key, value in item.items():
            if key in RECORD_SPAN_KEYS:
                continue
            if key not in fields:
                problems.append((f"{at}.{key}", f"not a declared field (fields: "
                                                f"{', '.join(fields) or 'none'})"))
                continue
            wrong = None if value is None else fact_value_problem(  # null always fits
                FactSpec(value=value, type=fields[key], source="-", quote="-"))
            if wrong:
                problems.append((f"{at}.{key}", wrong))
        source = item.get("source", fact.source)
        quote = item.get("quote")
        if not isinstance(quote, str) or not quote:
            problems.append((f"{at}.quote", "each record quotes the text it was read from"))
        else:
            _check_quote(at, str(source), quote, texts, problems)


def _check_quote(where: str, source: str, quote: str, texts: dict[str, str],
                 problems: Problems) -> None:
    if source not in texts:
        known = ", ".join(sorted(k for k in texts if "." not in k))
        problems.append((f"{where}.source", f"unknown source {source!r} (known: {known}; "
                                            "or <id>.issuer, <id>.time, <id>.id)"))
    elif quote not in texts[source]:
        doc, _, meta = source.partition(".")
        what = "the policy" if source == "policy" else \
            f"the {meta} of document {doc}" if meta else f"document {source}"
        problems.append((f"{where}.quote", f"quote not found in {what}: {quote!r}"))


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
    _check_quote(where, fact.source, fact.quote, texts, problems)
    if fact.type == "records":
        _check_records(where, fact, texts, problems)


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
        for meta in METADATA_FIELDS:
            texts[f"{doc.id}.{meta}"] = getattr(doc, meta)
        if parse_utc(doc.time) is None:
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


def _request_paths(value: Any, prefix: str = "request") -> list[str]:
    if not isinstance(value, dict):
        return [prefix]
    return [path for key, sub in value.items() for path in _request_paths(sub, f"{prefix}.{key}")]


def _did_you_mean(name: str, candidates: list[str]) -> str:
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def _check_expression(scenario: Scenario, problems: Problems) -> None:
    facts: dict[str, list[FactSpec]] = {}  # every declaration of each fact key
    for scope_facts in (scenario.policy_facts, *(c.facts for c in scenario.contexts)):
        for key, fact in scope_facts.items():
            facts.setdefault(key, []).append(fact)
    request = scenario.request.model_dump(mode="json")
    known = sorted(facts) + _request_paths(request)
    try:
        tree = parse_expression(scenario.expression, tuple(known))
    except ExpressionSyntaxError as exc:
        problems.append(("expression", str(exc)))
        return
    for name in names(tree):
        if name.startswith("request."):
            if not _request_has(request, name):
                problems.append(("expression", f"{name} is not a field of the request"
                                               + _did_you_mean(name, known)))
        elif name not in facts:
            problems.append(("expression", f"name {name!r} is not a fact of any context or of "
                                           "policy_facts" + _did_you_mean(name, known)))
    for source, field in fields_of(tree):
        if not isinstance(source, Name) or source.path not in facts:
            continue
        declared = {f for fact in facts[source.path] for f in (fact.fields or {})}
        if field not in declared:
            problems.append(("expression", f"{field!r} is not a field of the records "
                                           f"{source.path!r} (fields: "
                                           f"{', '.join(sorted(declared)) or 'none'})"
                                           + _did_you_mean(field, sorted(declared))))


def _placeholders(value: Any, where: str) -> Problems:
    """Every string still holding the skeleton's placeholder marker."""
    if isinstance(value, str):
        first = value.strip().splitlines()[0] if value.strip() else ""
        return [(where, f"unfilled placeholder: {first[:70]!r}")] \
            if PLACEHOLDER in value else []
    if isinstance(value, dict):
        return [p for key, sub in value.items()
                for p in _placeholders(sub, f"{where}.{key}" if where else str(key))]
    if isinstance(value, list):
        return [p for index, sub in enumerate(value)
                for p in _placeholders(sub, f"{where}[{index}]")]
    return []


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
    problems.extend(_placeholders(scenario.model_dump(mode="json"), ""))
    return problems
