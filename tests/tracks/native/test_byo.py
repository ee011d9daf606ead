"""Bring-your-own imports: engine-labelled cases, duplicates, the public half, CLI and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cases.dataset import load_dataset
from authpairs.cases.models import Label
from authpairs.cli import app
from authpairs.tracks.native.byo import import_cedar, import_openfga
from authpairs.tracks.native.errors import NativeImportError

from .conftest import CEDAR_BAD, CEDAR_GOOD, OPENFGA_BAD, OPENFGA_GOOD

runner = CliRunner()


def test_openfga_cases_one_per_canonical_input() -> None:
    dataset = import_openfga(OPENFGA_GOOD)
    assert len(dataset) == 10  # 11 Check assertions, one exact duplicate
    assert all(c.case_id.startswith("OFGA-") and len(c.case_id) == 29 for c in dataset)
    merged = [c for c in dataset if c.reference.facts["duplicates"]]
    assert len(merged) == 1
    case = merged[0]
    assert case.reference.facts["duplicates"] == [
        "library/store.fga.yaml#tests[1].check[0].assertions.reader"]
    assert case.source.locator == "tests[0].check[0].assertions.reader"
    assert case.reference.label == Label.LAWFUL
    # Same question with an extra test-level tuple is a different input, not a duplicate.
    carla = [c for c in dataset if c.public.request.subject == "member:carla"
             and c.public.request.action == "reader"]
    assert len(carla) == 2


def test_openfga_public_half_and_attributes() -> None:
    dataset = import_openfga(OPENFGA_GOOD / "library" / "store.fga.yaml")
    late = [c for c in dataset if c.public.request.environment.get("now", "").startswith("2031")]
    assert len(late) == 1
    case = late[0]
    assert case.reference.label == Label.FORBIDDEN
    assert case.public.policy.format == "openfga"
    assert "condition before_due" in case.public.policy.text
    assert case.public.request.subject == "member:ben"
    assert case.public.request.resource == "book:dune"
    assert case.public.evidence.state["context"] == {"now": "2031-06-01T00:00:00Z"}
    assert len(case.public.evidence.state["tuples"]) == 3
    public_json = case.public.model_dump_json()
    assert "expected" not in public_json and "forbidden" not in public_json
    assert case.attributes["engine"] == "openfga"
    assert case.attributes["group"] == "openfga/library"
    assert case.attributes["query_kind"] == "check"
    assert case.attributes["split"] == "test" and case.split == "test"
    assert len(case.attributes["encoding"]) == 16
    ben = [c for c in dataset if c.public.request.subject == "member:ben"]
    assert len(ben) == 2 and {c.reference.label for c in ben} == {Label.LAWFUL, Label.FORBIDDEN}
    assert len({c.attributes["query"] for c in ben}) == 1  # same policy and query, other state


def test_ids_are_stable_and_input_sensitive(tmp_path: Path) -> None:
    first = {c.case_id for c in import_openfga(OPENFGA_GOOD / "library")}
    again = {c.case_id for c in import_openfga(OPENFGA_GOOD / "library")}
    assert first == again
    copy = tmp_path / "store.fga.yaml"
    text = (OPENFGA_GOOD / "library" / "store.fga.yaml").read_text()
    extra = "  - user: member:zed\n    relation: curator\n    object: shelf:fiction\ntests:\n"
    copy.write_text(text.replace("tests:\n", extra, 1))
    changed = {c.case_id for c in import_openfga(copy)}
    assert len(changed) == len(first)
    assert changed.isdisjoint(first)


def test_cedar_cases() -> None:
    dataset = import_cedar(CEDAR_GOOD)
    assert len(dataset) == 7
    assert all(c.case_id.startswith("CEDAR-") for c in dataset)
    clinic = [c for c in dataset if c.attributes["group"] == "cedar/clinic"]
    kiosk = [c for c in dataset if c.attributes["group"] == "cedar/kiosk"]
    assert len(clinic) == 5 and len(kiosk) == 2
    assert all(c.public.policy.schema_text is not None for c in clinic)
    assert all(c.public.policy.schema_text is None for c in kiosk)
    pia = next(c for c in clinic if c.public.request.subject == 'Clinic::Staff::"pia"')
    assert pia.reference.label == Label.LAWFUL
    assert pia.public.evidence.state["template_links"][0]["link_id"] == "PiaCoversWest"
    assert pia.public.request.environment == {"on_shift": False}
    assert pia.reference.facts["determining_policies"] == ["PiaCoversWest"]
    assert pia.source.path == "good/clinic/ALLOW/pia_covers_c3.json"
    entities = pia.public.evidence.state["entities"]
    assert entities == sorted(entities, key=lambda e: json.dumps(e, sort_keys=True,
                                                                  separators=(",", ":")))
    assert sum(c.reference.label == Label.LAWFUL for c in dataset) == 3


def test_cli_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "mine.jsonl"
    result = runner.invoke(app, ["data", "import-openfga", str(OPENFGA_GOOD), "--out", str(out)])
    assert result.exit_code == 0, result.output
    loaded = load_dataset(out)
    assert len(loaded) == 10
    assert loaded.by_id() == import_openfga(OPENFGA_GOOD).by_id()
    out2 = tmp_path / "cedar.jsonl"
    result = runner.invoke(app, ["data", "import-cedar", str(CEDAR_GOOD / "clinic"),
                                 "--out", str(out2)])
    assert result.exit_code == 0, result.output
    assert len(load_dataset(out2)) == 5


@pytest.mark.parametrize(("name", "needles"), [
    ("broken-yaml.fga.yaml", ["broken-yaml.fga.yaml", "invalid YAML (line 6"]),
    ("bad-model.fga.yaml", ["bad-model.fga.yaml", "could not run this file",
                            "relation type 'usr'"]),
    ("unknown-type.fga.yaml", ["unknown-type.fga.yaml", "tests[0].check[1].assertions.viewer",
                               "type 'folder' not found"]),
    ("wrong-expectation.fga.yaml", ["wrong-expectation.fga.yaml",
                                    "tests[0].check[0].assertions.viewer",
                                    "the engine answers false, the file expects true"]),
])
def test_openfga_byo_errors(tmp_path: Path, name: str, needles: list[str]) -> None:
    with pytest.raises(NativeImportError) as info:
        import_openfga(OPENFGA_BAD / name)
    for needle in needles:
        assert needle in str(info.value)
    result = runner.invoke(app, ["data", "import-openfga", str(OPENFGA_BAD / name),
                                 "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(("folder", "needles"), [
    ("wrong-expectation", ["DENY/guest_prints_5.json", "decides Allow, the folder expects"]),
    ("undeclared-type", ["ALLOW/visitor.json", "policies.cedarschema does not declare"]),
    ("broken-request", ["ALLOW/truncated.json", "invalid JSON"]),
])
def test_cedar_byo_errors(folder: str, needles: list[str]) -> None:
    with pytest.raises(NativeImportError) as info:
        import_cedar(CEDAR_BAD / folder)
    for needle in needles:
        assert needle in str(info.value)


def test_missing_path() -> None:
    with pytest.raises(NativeImportError, match="no such file or folder"):
        import_openfga(OPENFGA_GOOD / "nope.fga.yaml")
    with pytest.raises(NativeImportError, match="must be a folder"):
        import_cedar(CEDAR_GOOD / "nope")
