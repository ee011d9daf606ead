"""Evaluate Cedar example requests with the Cedar engine (``cedarpy``), one batch per folder.

The policy set is parsed once, template links from ``linked`` are applied with
``PolicySet.with_linked_batch`` (matched to templates by their ``@id`` annotation), and every
request of the folder goes through one ``is_authorized_batch`` call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import cedarpy

from authpairs.tracks.native.cedar_import import CedarExample, short_engine_error
from authpairs.tracks.native.errors import NativeImportError


@dataclass(frozen=True)
class CedarAnswer:
    """The engine's answer to one request file."""

    locator: str
    expected: bool
    allowed: bool
    reasons: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        """True when the engine decided and matched the expected folder (ALLOW/DENY)."""
        return self.allowed == self.expected


def policy_set(example: CedarExample) -> cedarpy.PolicySet:
    """The parsed policy set with the example's template links applied."""
    try:
        policies = cedarpy.PolicySet.from_str(example.policies_text)
    except ValueError as exc:
        raise NativeImportError(example.policies_path, f"Cedar cannot parse the policies: {exc}")\
            from exc
    if not example.links:
        return policies
    links = [{"template_id": link["template_id"], "new_id": link["link_id"],
              "values": link["args"]} for link in example.links]
    try:
        return policies.with_linked_batch(links)
    except (ValueError, KeyError) as exc:
        raise NativeImportError(example.folder / "linked", f"Cedar cannot link templates: {exc}")\
            from exc


def evaluate_example(example: CedarExample) -> list[CedarAnswer]:
    """Evaluate every request of ``example`` in one batch; answers in request order.

    A request the engine cannot decide (for example an entity type the schema does not declare)
    raises :class:`NativeImportError` naming the request file.
    """
    policies = policy_set(example)
    requests = [r.as_engine_request() for r in example.requests]
    try:
        results = cedarpy.is_authorized_batch(requests, policies, json.dumps(example.entities),
                                              schema=example.schema_text)
    except (ValueError, RuntimeError) as exc:
        raise short_engine_error(example, str(exc)) from exc
    answers: list[CedarAnswer] = []
    for request, result in zip(example.requests, results, strict=True):
        # The engine returns the determining policies and the errors as sets whose order
        # changes from process to process; sorted, the stored case is the same in every build.
        errors = tuple(sorted(str(e) for e in result.diagnostics.errors))
        if result.decision not in (cedarpy.Decision.Allow, cedarpy.Decision.Deny):
            raise short_engine_error(example, "; ".join(errors) or "no decision", request)
        reasons = tuple(sorted(str(r) for r in result.diagnostics.reasons))
        answers.append(CedarAnswer(request.locator, request.expected, result.allowed, reasons,
                                   errors))
    return answers
