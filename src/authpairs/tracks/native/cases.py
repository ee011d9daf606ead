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
    source: Source
    attributes: dict[str, str]
    facts: dict[str, Any]
    locators: list[str] = field(default_factory=list)


def encoding_hash(policy: Policy, links: Sequence[dict[str, Any]] = ()) -> str:
    """Hash prefix of the exact policy encoding (format, text, schema text, template links)."""
    return sha256_hex({"format": policy.format, "text": policy.text,
                       "schema_text": policy.schema_text, "links": list(links)})[:ENCODING_HEX]


def _draft(info: SourceInfo, canonical: dict[str, Any], prefix: str, policy: Policy,
           request: Request, state: dict[str, Any], answer: bool, expected: bool,
           where: tuple[str, str, str], facts: dict[str, Any],
           links: Sequence[dict[str, Any]] = ()) -> _Draft:
    """The draft of one engine-labelled input; ``where`` is (source path, locator inside it,
    the assertion's full locator)."""
    digest = sha256_hex(canonical)
    public = PublicCase(source_id=f"{prefix}-{digest[:ID_HEX]}", request=request, policy=policy,
                        evidence=Evidence(state=state))
    path, locator, assertion = where
    source = Source(track=info.track, dataset=info.dataset, path=path,
                    revision=info.provenance.commit_for(info.provenance_relpath),
                    licence=info.provenance.licence, locator=locator)
    attributes = {
        "engine": canonical["engine"], "group": info.group,
        "encoding": encoding_hash(policy, links),
        "query_kind": "check" if canonical["engine"] == "openfga" else "authorize",
        "path": info.relpath,
        "query": sha256_hex([policy.text, request.subject, request.action,
                             request.resource])[:16],
    }
    facts = {"input_sha256": digest, "expected": expected, "engine_answer": answer,
             "engine": info.engine_version, **facts}
    if info.provenance.repository:  # name the upstream repository when the provenance knows it
        facts["repository"] = info.provenance.repository
    label = Label.LAWFUL if answer else Label.FORBIDDEN
    return _Draft(public.source_id, public, label, source, attributes, facts, [assertion])


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
    context = dict(check.context)
    return _draft(
        info, fga_canonical(run.suite.model_text, check), "OFGA",
        Policy(format="openfga", text=run.suite.model_text),
        Request(subject=check.user, action=check.relation, resource=check.object,
                environment=context),
        {"tuples": list(check.tuples), "context": context}, answer.got, check.expected,
        (info.relpath, check.locator, f"{info.relpath}#{check.locator}"),
        {"test_name": check.test_name, "model_files": [p.name for p in run.suite.model_files]})


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
    state: dict[str, Any] = {"entities": example.sorted_entities(),
                             "context": dict(request.context)}
    if example.links:
        state["template_links"] = list(example.links)
    relpath = f"{info.relpath}/{request.locator}"
    return _draft(
        info, cedar_canonical(example, request), "CEDAR",
        Policy(format="cedar", text=example.policies_text, schema_text=example.schema_text),
        Request(subject=request.principal, action=request.action, resource=request.resource,
                environment=dict(request.context)),
        state, answer.allowed, request.expected, (relpath, request.locator, relpath),
        {"determining_policies": list(answer.reasons), "engine_errors": list(answer.errors),
         "schema_passed": example.schema_text is not None}, example.links)


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
