"""A reviewer never sees reference labels, expressions, facts, notes or grouping attributes."""

from __future__ import annotations

import json

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.cases.models import Case, Label
from authpairs.review.guardrails.registry import resolve_guardrail
from authpairs.review.interfaces import INTERFACES, get_interface
from authpairs.review.reviewers import BaselineReviewer
from authpairs.tracks.language.cases import load_language_dataset


def _datasets() -> list[Dataset]:
    return [load_examples(), load_language_dataset()]


def _request_text(request: ChatRequest) -> str:
    """Everything a reviewer is sent: messages, a raw prompt and request options."""
    parts = [m["content"] for m in request.messages]
    parts.append(request.prompt or "")
    parts.append(json.dumps(request.options or {}, sort_keys=True))
    return "\n".join(parts)


def _flip(case: Case) -> Case:
    other = Label.FORBIDDEN if case.reference.label is Label.LAWFUL else Label.LAWFUL
    reference = case.reference.model_copy(update={
        "label": other, "expression": "SECRET-EXPRESSION", "notes": "SECRET-NOTES",
        "facts": {"secret.fact": "SECRET-FACT"}, "resolved": not case.reference.resolved})
    return case.model_copy(update={"reference": reference,
                                   "attributes": {"family": "SECRET-FAMILY"}})


@pytest.mark.parametrize("name", INTERFACES.names())
def test_prompts_depend_only_on_the_public_half(name: str) -> None:
    interface = get_interface(name)
    for dataset in _datasets():
        for case in dataset:
            original = interface.render(case.public)
            flipped = _flip(case)
            assert interface.render(flipped.public) == original
            text = _request_text(original)
            for secret in (case.reference.expression, case.reference.notes or None):
                if secret:
                    assert secret not in text, f"{case.case_id}: reference text leaked"
            for fact in case.reference.facts:
                assert fact not in text, f"{case.case_id}: fact name {fact} leaked"
            for key in ("family", "scenario", "path", "variant"):
                value = case.attributes.get(key, "")
                if "_" in value or "-" in value:
                    assert value not in text, f"{case.case_id}: attribute {key} leaked"


def test_baseline_input_is_the_public_case_only() -> None:
    reviewer = BaselineReviewer("always-allow")
    for case in load_examples():
        text = "\n".join(m["content"] for m in reviewer.render(case.public).messages)
        assert '"label"' not in text and "reference" not in text


def test_inspect_task_samples_depend_only_on_the_public_half() -> None:
    """The Inspect AI task's samples (full check: tests/integrations) are label-independent."""
    from authpairs.integrations.inspect_task import build_samples

    interface = get_interface("schema")
    for dataset in _datasets():
        flipped = Dataset(dataset.name, [_flip(c) for c in dataset])
        for sample, other in zip(build_samples(dataset, interface),
                                 build_samples(flipped, interface), strict=True):
            assert isinstance(sample.input, list) and isinstance(other.input, list)
            assert [m.text for m in sample.input] == [m.text for m in other.input]
            assert sample.metadata == other.metadata and sample.target == other.target == ""

def _guardrail_reviewers() -> list[tuple[str, object]]:
    """Every built-in guardrail that renders its own input (and a Python callable)."""
    reviewers: list[tuple[str, object]] = [
        ("callable", resolve_guardrail("tests.review.guardrails.guards:review").build(
            "callable", {}, None, SamplingConfig())),
        ("http", resolve_guardrail("http").build(
            "http", {"url": "http://127.0.0.1:9/"}, None, SamplingConfig())),
    ]
    try:
        import nemoguardrails  # noqa: F401
    except ImportError:
        return reviewers
    from authpairs.review.guardrails.nemo import NemoSelfCheckReviewer

    reviewers.append(("nemo-self-check", NemoSelfCheckReviewer(None, SamplingConfig())))  # type: ignore[arg-type]
    return reviewers


@pytest.mark.parametrize("name", ["callable", "http", "nemo-self-check"])
def test_guardrail_inputs_depend_only_on_the_public_half(name: str) -> None:
    found = dict(_guardrail_reviewers())
    if name not in found:
        pytest.skip("nemoguardrails (extra 'nemo') is not installed")
    reviewer = found[name]
    for case in load_examples():
        original = reviewer.render(case.public)  # type: ignore[attr-defined]
        assert reviewer.render(_flip(case).public) == original  # type: ignore[attr-defined]
        text = _request_text(original)
        for secret in (case.reference.expression, case.reference.notes or None):
            if secret:
                assert secret not in text, f"{case.case_id}: reference text leaked"
        assert '"label"' not in text and "reference" not in text
