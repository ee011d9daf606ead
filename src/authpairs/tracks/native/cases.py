"""Turn engine-labelled assertions into benchmark cases, one per canonical full input.

The canonical full input of an OpenFGA Check is (model text, sorted effective tuples, user,
relation, object, context); of a Cedar request it is (policies text, schema text when the
upstream test passes one, template links, sorted entities, principal, action, resource,
context). Tuple and entity sorting keeps multiplicity and every value. Assertions with the same
canonical input are merged into one case; the others are linked as duplicates in the reference
facts. The reference label is the engine's own answer; an answer that differs from the
upstream expectation, or from a duplicate's answer, is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from authpairs.cases.canonical import sha256_hex
from authpairs.cases.models import (
    Case,
    Evidence,
    Label,
    Policy,
    PublicCase,
    Reference,
    Request,
    Source,
)
from authpairs.tracks.native.cedar_engine import CedarAnswer
from authpairs.tracks.native.cedar_import import CedarExample, CedarRequest
from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.openfga_engine import FgaRun
from authpairs.tracks.native.openfga_import import FgaCheck
from authpairs.tracks.native.sources import Provenance

ID_HEX = 24
ENCODING_HEX = 16


@dataclass(frozen=True)
class SourceInfo:
    """Where a batch of assertions comes from: dataset, track, paths and revisions."""

    dataset: str
    track: str
    relpath: str
    group: str
    provenance: Provenance
    provenance_relpath: str = ""
    engine_version: str = ""


@dataclass
class _Draft:
    """One canonical input while duplicates are being merged."""

    case_id: str
    public: PublicCase
    label: Label
    expected: bool
    source: Source
    attributes: dict[str, str]
    facts: dict[str, Any]
    locators: list[str] = field(default_factory=list)


def encoding_hash(policy: Policy, links: Sequence[dict[str, Any]] = ()) -> str:
    """Hash prefix of the exact policy encoding (format, text, schema text, template links)."""
    return sha256_hex({"format": policy.format, "text": policy.text,
                       "schema_text": policy.schema_text, "links": list(links)})[:ENCODING_HEX]


def _add_repository(facts: dict[str, Any], info: SourceInfo) -> None:
    """Name the upstream repository in the facts when the provenance knows it."""
    if info.provenance.repository:
        facts["repository"] = info.provenance.repository


def _label(allowed: bool) -> Label:
    return Label.LAWFUL if allowed else Label.FORBIDDEN


def _merge(drafts: dict[str, _Draft], draft: _Draft, path: str) -> None:
    known = drafts.get(draft.case_id)
    if known is None:
        drafts[draft.case_id] = draft
        return
    if known.label != draft.label:
        raise NativeImportError(path, f"the engine gave different answers to identical inputs "
                                      f"({known.locators[0]})", draft.locators[0])
    known.locators.extend(draft.locators)


def fga_canonical(model_text: str, check: FgaCheck) -> dict[str, Any]:
    """The canonical full input of one OpenFGA Check assertion."""
    return {"engine": "openfga", "model": model_text, "tuples": list(check.tuples),
            "user": check.user, "relation": check.relation, "object": check.object,
            "context": check.context}


def _fga_draft(run: FgaRun, check: FgaCheck, info: SourceInfo) -> _Draft:
    answer = run.checks[check.locator]
    locator = f"{info.relpath}#{check.locator}"
    where = run.suite.path
    if answer.error is not None:
        raise NativeImportError(where, f"the OpenFGA engine failed: {answer.error}",
                                check.locator)
    if not isinstance(answer.got, bool):
        raise NativeImportError(where, "the OpenFGA engine gave no Boolean answer",
                                check.locator)
    if answer.got != check.expected:
        raise NativeImportError(where, f"the engine answers {str(answer.got).lower()}, the file "
                                       f"expects {str(check.expected).lower()}", check.locator)
    canonical = fga_canonical(run.suite.model_text, check)
    digest = sha256_hex(canonical)
    policy = Policy(format="openfga", text=run.suite.model_text)
    public = PublicCase(
        source_id=f"OFGA-{digest[:ID_HEX]}",
        request=Request(subject=check.user, action=check.relation, resource=check.object,
                        environment=dict(check.context)),
        policy=policy,
        evidence=Evidence(state={"tuples": list(check.tuples), "context": dict(check.context)}),
    )
    source = Source(track=info.track, dataset=info.dataset, path=info.relpath,
                    revision=info.provenance.commit_for(info.provenance_relpath),
                    licence=info.provenance.licence, locator=check.locator)
    attributes = {
        "engine": "openfga", "group": info.group, "encoding": encoding_hash(policy),
        "query_kind": "check", "path": info.relpath,
        "query": sha256_hex([policy.text, check.user, check.relation, check.object])[:16],
    }
    facts = {"input_sha256": digest, "expected": check.expected, "engine_answer": answer.got,
             "engine": info.engine_version, "test_name": check.test_name,
             "model_files": [p.name for p in run.suite.model_files]}
    _add_repository(facts, info)
    return _Draft(public.source_id, public, _label(answer.got), check.expected, source,
                  attributes, facts, [locator])


def openfga_drafts(runs: Sequence[tuple[FgaRun, SourceInfo]]) -> list[_Draft]:
    """Merge the Check assertions of many test files into drafts, first occurrence first."""
    drafts: dict[str, _Draft] = {}
    for run, info in runs:
        for check in run.suite.checks:
            _merge(drafts, _fga_draft(run, check, info), str(run.suite.path))
    return list(drafts.values())


def cedar_canonical(example: CedarExample, request: CedarRequest) -> dict[str, Any]:
    """The canonical full input of one Cedar request."""
    return {"engine": "cedar", "policies": example.policies_text, "schema": example.schema_text,
            "links": example.links, "entities": example.sorted_entities(),
            "principal": request.principal, "action": request.action,
            "resource": request.resource, "context": request.context}


def _cedar_draft(example: CedarExample, request: CedarRequest, answer: CedarAnswer,
                 info: SourceInfo) -> _Draft:
    if answer.allowed != request.expected:
        decision = "Allow" if answer.allowed else "Deny"
        raise NativeImportError(request.path, f"the Cedar engine decides {decision}, the folder "
                                              f"expects the opposite", request.locator)
    canonical = cedar_canonical(example, request)
    digest = sha256_hex(canonical)
    policy = Policy(format="cedar", text=example.policies_text, schema_text=example.schema_text)
    state: dict[str, Any] = {"entities": example.sorted_entities(),
                             "context": dict(request.context)}
    if example.links:
        state["template_links"] = list(example.links)
    public = PublicCase(
        source_id=f"CEDAR-{digest[:ID_HEX]}",
        request=Request(subject=request.principal, action=request.action,
                        resource=request.resource, environment=dict(request.context)),
        policy=policy, evidence=Evidence(state=state),
    )
    relpath = f"{info.relpath}/{request.locator}"
    source = Source(track=info.track, dataset=info.dataset, path=relpath,
                    revision=info.provenance.commit_for(info.provenance_relpath),
                    licence=info.provenance.licence, locator=request.locator)
    attributes = {
        "engine": "cedar", "group": info.group,
        "encoding": encoding_hash(policy, example.links), "query_kind": "authorize",
        "path": info.relpath,
        "query": sha256_hex([policy.text, request.principal, request.action,
                             request.resource])[:16],
    }
    facts = {"input_sha256": digest, "expected": request.expected,
             "engine_answer": answer.allowed, "engine": info.engine_version,
             "determining_policies": list(answer.reasons), "engine_errors": list(answer.errors),
             "schema_passed": example.schema_text is not None}
    _add_repository(facts, info)
    return _Draft(public.source_id, public, _label(answer.allowed), request.expected, source,
                  attributes, facts, [relpath])


def cedar_drafts(items: Sequence[tuple[CedarExample, list[CedarAnswer], SourceInfo]]
                 ) -> list[_Draft]:
    """Merge the requests of many Cedar example folders into drafts."""
    drafts: dict[str, _Draft] = {}
    for example, answers, info in items:
        for request, answer in zip(example.requests, answers, strict=True):
            _merge(drafts, _cedar_draft(example, request, answer, info), info.relpath)
    return list(drafts.values())


def draft_to_case(draft: _Draft, split: str = "test") -> Case:
    """The final case: duplicates recorded in the reference facts and notes."""
    duplicates = draft.locators[1:]
    facts = dict(draft.facts, assertions=list(draft.locators), duplicates=duplicates)
    notes = (f"Reference label = engine answer ({draft.facts.get('engine', '')}); "
             f"upstream expectation agrees. {len(duplicates)} duplicate assertion(s) linked.")
    attributes = dict(draft.attributes, split=split)
    if split not in ("dev", "test"):
        raise ValueError(f"unknown split {split!r}")
    return Case(case_id=draft.case_id, split="dev" if split == "dev" else "test",
                public=draft.public,
                reference=Reference(label=draft.label, facts=facts, notes=notes),
                source=draft.source, attributes=attributes)
