"""Case building from fixture scenarios: public/reference separation, ids, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from authpairs.cases.canonical import sha256_hex
from authpairs.cases.models import Case, Label
from authpairs.tracks.language.cases import case_id_for, load_language_dataset
from tests.tracks.language.conftest import GOOD
from tests.tracks.language.leaks import public_leaks


def test_fixture_dataset_shape_and_order() -> None:
    dataset = load_language_dataset(root=GOOD)
    assert dataset.name == "good"  # a custom folder is named after itself (or --name)
    assert load_language_dataset(root=GOOD, name="mine").name == "mine"
    assert len(dataset) == 8
    # dev before test, then domain, slug, case id (not context id: that mirrors the labels)
    assert [(c.split, c.attributes["scenario"]) for c in dataset] == \
        [("dev", "fixture-unresolved-handoff")] * 4 + [("test", "fixture-refund-ceiling")] * 4
    assert [c.case_id for c in dataset.cases[:4]] == sorted(c.case_id for c in dataset.cases[:4])
    assert [c.case_id for c in dataset.cases[4:]] == sorted(c.case_id for c in dataset.cases[4:])
    assert [c.case_id for c in load_language_dataset("test", root=GOOD)] == \
        [c.case_id for c in dataset.cases[4:]]
    assert len(load_language_dataset("dev", root=GOOD)) == 4


def _context(split: str, context: str) -> Case:
    cases = load_language_dataset(split, root=GOOD)
    return next(c for c in cases if c.attributes["context"] == context)


def test_case_fields() -> None:
    case = _context("test", "c1")
    assert case.case_id.startswith("AC-") and len(case.case_id) == 19
    assert case.public.source_id == case.case_id
    assert case.public.policy.format == "text"
    assert case.public.request.action == "refund"
    assert case.public.effect is not None and case.public.effect.type == "ledger_transfer"
    doc = case.public.evidence.documents[0]
    assert (doc.doc_id, doc.issuer, doc.time) == ("d1", "Care manager Ivo Brandt",
                                                  "2026-05-01T09:00:00Z")
    assert case.reference.label is Label.LAWFUL
    assert case.reference.resolved
    assert "grant.ceiling" in (case.reference.expression or "")
    assert case.reference.facts["grant.ceiling"] == {
        "value": 100, "type": "number", "source": "d1", "quote": "USD 100"}
    assert "refund.manager_threshold" in case.reference.facts  # policy facts included
    assert case.source.track == "language" and case.source.dataset == "good"
    assert case.source.path == "payments/fixture-refund-ceiling.yaml"  # relative to the root
    assert case.source.locator == "c1"
    packaged = load_language_dataset("dev").cases[0].source
    assert packaged.dataset == "language" and packaged.revision
    assert packaged.path.startswith("tracks/language/scenarios/")
    assert case.attributes == {
        "domain": "payments", "family": "amount_interval", "scenario": "fixture-refund-ceiling",
        "title": "Fixture refund ceiling", "context": "c1", "variant": "baseline",
        "path": "active-delegation", "split": "test"}
    assert case.cluster == "fixture-refund-ceiling"


def test_id_is_hash_of_public_input_without_id() -> None:
    for case in load_language_dataset(root=GOOD):
        payload = case.public.model_dump(mode="json", exclude={"source_id"})
        assert case.case_id == "AC-" + sha256_hex(payload)[:16]
        assert case_id_for(case.public) == case.case_id


def test_ids_are_stable_and_change_only_with_public_input(good_root: Path) -> None:
    before = {c.attributes["context"] + c.split: c.case_id for c in load_language_dataset(
        root=good_root)}
    assert before == {c.attributes["context"] + c.split: c.case_id
                      for c in load_language_dataset(root=good_root)}
    path = good_root / "payments" / "fixture-refund-ceiling.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["contexts"][0]["variant"] = "scope"          # reference-side change: same ids
    data["contexts"][0]["path"] = "other-path"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    after = {c.attributes["context"] + c.split: c.case_id
             for c in load_language_dataset(root=good_root)}
    assert after == before
    data["contexts"][0]["documents"][0]["issuer"] = "Care manager I. Brandt"  # public change
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    changed = {c.attributes["context"] + c.split: c.case_id
               for c in load_language_dataset(root=good_root)}
    assert changed["c1test"] != before["c1test"]
    assert {k: v for k, v in changed.items() if k != "c1test"} == \
        {k: v for k, v in before.items() if k != "c1test"}


def test_unresolved_context_is_kept_and_marked() -> None:
    cases = {c.attributes["context"]: c for c in load_language_dataset("dev", root=GOOD)}
    assert len(cases) == 4
    unresolved = cases["c2"]
    assert not unresolved.reference.resolved
    assert unresolved.reference.label is Label.LAWFUL
    assert "no effective time" in unresolved.reference.notes
    assert all(cases[c].reference.resolved for c in ("c1", "c3", "c4"))


def test_no_reference_data_in_public_half() -> None:
    for case in load_language_dataset(root=GOOD):
        assert public_leaks(case) == []


def test_leak_helper_detects_a_leak() -> None:
    case = _context("test", "c1")
    leaky = case.public.model_copy(update={"request": case.public.request.model_copy(
        update={"purpose": case.attributes["path"]})})
    assert public_leaks(case.model_copy(update={"public": leaky}))


def test_leak_helper_detects_a_family_name_used_as_argument_key() -> None:
    case = _context("test", "c1")
    arguments = {**case.public.request.arguments, "amount_interval": 1}
    leaky = case.public.model_copy(update={"request": case.public.request.model_copy(
        update={"arguments": arguments})})
    assert public_leaks(case.model_copy(update={"public": leaky})) == [
        "attribute family='amount_interval' appears as a public value or key"]


def test_manifest_and_jsonl_round_trip(tmp_path: Path) -> None:
    from authpairs.cases.dataset import load_dataset

    dataset = load_language_dataset(root=GOOD)
    out = tmp_path / "language.jsonl"
    dataset.write_jsonl(out)
    again = load_dataset(out, name="good")
    assert again.manifest() == dataset.manifest()
    assert dataset.manifest().n_cases == 8


def test_unknown_split_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown split"):
        load_language_dataset("train", root=GOOD)
