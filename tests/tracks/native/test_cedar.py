"""Cedar importer and engine (cedarpy) on synthetic example folders."""

from __future__ import annotations

import pytest

from authpairs.tracks.native.cedar_engine import evaluate_example
from authpairs.tracks.native.cedar_import import find_example_folders, load_cedar_example
from authpairs.tracks.native.errors import NativeImportError

from .conftest import CEDAR_BAD, CEDAR_GOOD


def test_example_folder_with_schema_links_and_context() -> None:
    example = load_cedar_example(CEDAR_GOOD / "clinic")
    assert example.schema_text is not None and "namespace Clinic" in example.schema_text
    assert [link["link_id"] for link in example.links] == ["PiaCoversWest"]
    assert [r.locator for r in example.requests] == [
        "ALLOW/nina_reads_c1.json", "ALLOW/pia_covers_c3.json", "DENY/nina_off_shift.json",
        "DENY/nina_sealed_c2.json", "DENY/omar_other_ward.json"]
    assert example.requests[0].principal == 'Clinic::Staff::"nina"'
    assert example.requests[0].context == {"on_shift": True}
    answers = evaluate_example(example)
    assert [a.allowed for a in answers] == [True, True, False, False, False]
    assert all(a.agrees for a in answers)
    assert answers[1].reasons == ("PiaCoversWest",)


def test_template_link_is_needed() -> None:
    example = load_cedar_example(CEDAR_GOOD / "clinic")
    example.links = []
    answers = evaluate_example(example)
    assert answers[1].allowed is False


def test_schema_can_be_left_out() -> None:
    example = load_cedar_example(CEDAR_GOOD / "clinic", use_schema=False)
    assert example.schema_text is None
    assert all(a.agrees for a in evaluate_example(example))


def test_find_example_folders() -> None:
    assert [p.name for p in find_example_folders(CEDAR_GOOD)] == ["clinic", "kiosk"]


@pytest.mark.parametrize(("folder", "needle"), [
    ("bad-policy", "policies.cedar: Cedar cannot parse the policies"),
    ("broken-request", "truncated.json, assertion ALLOW/truncated.json: invalid JSON (line 3"),
])
def test_import_errors(folder: str, needle: str) -> None:
    with pytest.raises(NativeImportError) as info:
        evaluate_example(load_cedar_example(CEDAR_BAD / folder))
    assert needle in str(info.value)
    assert str(CEDAR_BAD / folder) in str(info.value)


def test_undeclared_type_gives_no_decision_error() -> None:
    example = load_cedar_example(CEDAR_BAD / "undeclared-type")
    with pytest.raises(NativeImportError) as info:
        evaluate_example(example)
    message = str(info.value)
    assert "visitor.json, assertion ALLOW/visitor.json" in message
    assert "type Clinic::Visitor, which policies.cedarschema does not declare" in message
    assert "--no-schema" in message
