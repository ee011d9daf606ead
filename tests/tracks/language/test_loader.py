"""Loading scenario files: good fixtures load; every malformed input names file and field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from authpairs.tracks.language.loader import (
    ScenarioError,
    collect_scenarios,
    load_scenario_file,
    load_scenarios,
)
from tests.tracks.language.conftest import GOOD, REFUND, Mutator

FILE = "payments/fixture-refund-ceiling.yaml"


def test_good_fixtures_load() -> None:
    loaded = load_scenarios(GOOD)
    assert [item.path for item in loaded] == ["clinical/fixture-unresolved-handoff.yaml", FILE]
    refund = loaded[1].scenario
    assert refund.slug == "fixture-refund-ceiling"
    assert len(refund.contexts) == 4
    assert refund.policy_facts["policy.channels"].value == ["support_console", "phone_desk"]
    # timestamps stay the exact text (YAML would otherwise turn them into datetimes)
    assert refund.request.environment["time"] == "2026-05-04T10:00:00Z"
    assert refund.contexts[0].documents[0].time == "2026-05-01T09:00:00Z"


def test_load_single_file_uses_domain_relative_path() -> None:
    assert load_scenario_file(REFUND).path == FILE


def _ctx(data: dict[str, Any], index: int) -> dict[str, Any]:
    ctx: dict[str, Any] = data["contexts"][index]
    return ctx


def _set(path: list[Any], value: Any) -> Mutator:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _delete(path: list[Any]) -> Mutator:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


def _fact(index: int, key: str, **fields: Any) -> Mutator:
    def change(data: dict[str, Any]) -> None:
        _ctx(data, index)["facts"][key].update(fields)
    return change


BAD: list[tuple[str, Mutator, str, str]] = [
    ("quote", _fact(2, "grant.ceiling", quote="USD 75"),
     "contexts[2].facts.grant.ceiling.quote", "quote not found in document d1"),
    ("policy quote", _set(["policy_facts", "refund.manager_threshold", "quote"], "USD 900"),
     "policy_facts.refund.manager_threshold.quote", "quote not found in the policy"),
    ("unknown source", _fact(0, "grant.holder", source="d9"),
     "contexts[0].facts.grant.holder.source", "unknown source 'd9'"),
    ("other context's doc", _fact(1, "role.name", source="d2"),
     "contexts[1].facts.role.name.source", "unknown source"),
    ("number type", _fact(0, "grant.ceiling", value="100"),
     "contexts[0].facts.grant.ceiling.value", "type number"),
    ("timestamp not canonical", _fact(0, "grant.ends", value="2026-05-31 23:59"),
     "contexts[0].facts.grant.ends.value", "canonical UTC"),
    ("timestamp with offset", _fact(0, "grant.ends", value="2026-05-31T23:59:59+00:00"),
     "contexts[0].facts.grant.ends.value", "canonical UTC"),
    ("yes as string", _fact(0, "grant.status", value=True),
     "contexts[0].facts.grant.status.value", "quote it"),
    ("effect text", _set(["effect", "params", "currency"], 1.10), "effect.params.currency",
     "quote it"),
    ("null type", _fact(2, "grant.ends", value="none"),
     "contexts[2].facts.grant.ends.value", "type null"),
    ("boolean type", _fact(0, "grant.status", type="boolean"),
     "contexts[0].facts.grant.status.value", "type boolean"),
    ("list type", _set(["policy_facts", "policy.channels", "value"], [True]),
     "policy_facts.policy.channels.value", "type list"),
    ("unknown fact type", _fact(0, "grant.status", type="text"),
     "contexts[0].facts.grant.status.type", "Input should be"),
    ("fact key syntax", lambda d: _ctx(d, 0)["facts"].update(
        {"Grant-Holder": _ctx(d, 0)["facts"]["grant.holder"]}),
     "contexts[0].facts.Grant-Holder", "dotted lower-case name"),
    ("request fact key", lambda d: _ctx(d, 0)["facts"].update(
        {"request.amount": _ctx(d, 0)["facts"]["grant.holder"]}),
     "contexts[0].facts.request.amount", "may not start with 'request.'"),
    ("policy fact from a document", _set(["policy_facts", "policy.channels", "source"], "d1"),
     "policy_facts.policy.channels.source", "source: policy"),
    ("fact shadows policy fact", lambda d: _ctx(d, 0)["facts"].update(
        {"policy.channels": d["policy_facts"]["policy.channels"]}),
     "contexts[0].facts.policy.channels", "also defined in policy_facts"),
    ("slug", _set(["slug"], "other-slug"), "slug", "file name stem"),
    ("slug case", _set(["slug"], "Fixture_Refund"), "slug", "kebab-case"),
    ("domain dir", _set(["domain"], "clinical"), "domain", "does not match the directory"),
    ("unknown domain", _set(["domain"], "banking"), "domain", "Input should be"),
    ("unknown family", _set(["family"], "misc"), "family", "Input should be"),
    ("unknown split", _set(["split"], "train"), "split", "Input should be"),
    ("typo field", _set(["polcy"], "x"), "polcy", "Extra inputs"),
    ("missing expression", _delete(["expression"]), "expression", "Field required"),
    ("three contexts", lambda d: d["contexts"].pop(), "contexts", "exactly 4 contexts"),
    ("labels", _set(["contexts", 2, "label"], "lawful"), "contexts",
     "2 lawful and 2 forbidden"),
    ("bad label", _set(["contexts", 2, "label"], "allowed"), "contexts[2].label",
     "Input should be"),
    ("context id", _set(["contexts", 3, "id"], "c9"), "contexts[3].id", "c1..c4"),
    ("duplicate context id", _set(["contexts", 3, "id"], "c1"), "contexts[3].id",
     "duplicate context id"),
    ("duplicate doc id", lambda d: _ctx(d, 0)["documents"].append(
        dict(_ctx(d, 0)["documents"][0], text="another note")),
     "contexts[0].documents[1].id", "duplicate document id 'd1'"),
    ("doc time", _set(["contexts", 1, "documents", 0, "time"], "2026-05-02"),
     "contexts[1].documents[0].time", "canonical UTC"),
    ("no documents", _set(["contexts", 1, "documents"], []), "contexts[1].documents",
     "at least 1"),
    ("unknown variant", _set(["contexts", 1, "variant"], "other"), "contexts[1].variant",
     "Input should be"),
    ("identical evidence", lambda d: _ctx(d, 3).update(documents=_ctx(d, 2)["documents"]),
     "contexts[3].documents", "identical evidence to context c3"),
    ("effect type", _set(["effect", "type"], "wire_transfer"), "effect.type",
     "unknown effect type"),
    ("effect decimal", _set(["effect", "params", "amount"], 80.0), "effect.params.amount",
     "quote it"),
    ("effect decimal format", _set(["effect", "params", "amount"], "80.001"),
     "effect.params.amount", "decimal string"),
    ("effect identifier", _set(["effect", "params", "to_account"], "card 1001/x"),
     "effect.params.to_account", "identifier"),
    ("effect missing param", _delete(["effect", "params", "currency"]),
     "effect.params.currency", "required for ledger_transfer"),
    ("effect extra param", _set(["effect", "params", "memo"], "x"), "effect.params.memo",
     "not a parameter of ledger_transfer"),
    ("expression syntax", _set(["expression"], "grant.holder = 1"), "expression",
     "syntax error"),
    ("expression unknown fact", _set(["expression"], "grant.holdr == 1"), "expression",
     "'grant.holdr' is not a fact"),
    ("expression unknown request field", _set(["expression"],
                                              "request.arguments.amout <= grant.ceiling"),
     "expression", "request.arguments.amout is not a field of the request"),
    ("request typo", _set(["request", "argument"], {}), "request.argument", "Extra inputs"),
    ("empty unresolved reason", _set(["contexts", 0, "unresolved_reason"], " "),
     "contexts[0].unresolved_reason", "must explain"),
]


@pytest.mark.parametrize(("name", "change", "field", "message"), BAD, ids=[b[0] for b in BAD])
def test_errors_name_file_and_field(mutate: Callable[[Mutator], Path], name: str,
                                    change: Mutator, field: str, message: str) -> None:
    path = mutate(change)
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    text = str(info.value)
    expected = f"{FILE}: {field}: "
    assert any(str(issue).startswith(expected) and message in str(issue)
               for issue in info.value.issues), text


def test_unquoted_null_type_means_null(mutate: Callable[[Mutator], Path]) -> None:
    path = mutate(_fact(2, "grant.ends", type=None))
    loaded = load_scenario_file(path)
    assert loaded.scenario.contexts[2].facts["grant.ends"].type == "null"


def test_effect_param_kinds(mutate: Callable[[Mutator], Path]) -> None:
    def to_reservation(data: dict[str, Any]) -> None:
        data["effect"] = {"type": "reservation", "params": {
            "resource_id": "room-1", "holder": "Ana", "start": "2026-05-04T12:00:00Z",
            "end": "2026-05-04T11:00:00Z"}}
    with pytest.raises(ScenarioError, match=r"effect\.params: start must be before end"):
        load_scenario_file(mutate(to_reservation))


def test_deployment_percentage_range(mutate: Callable[[Mutator], Path]) -> None:
    def to_deployment(data: dict[str, Any]) -> None:
        data["effect"] = {"type": "deployment", "params": {
            "service": "web", "version": "1.2", "content": "hi", "percentage": 150}}
    with pytest.raises(ScenarioError,
                       match=r"effect\.params\.percentage: Input should be less than or equal"):
        load_scenario_file(mutate(to_deployment))


def test_file_name_must_not_be_a_path(mutate: Callable[[Mutator], Path]) -> None:
    def to_delivery(data: dict[str, Any]) -> None:
        data["effect"] = {"type": "byte_delivery", "params": {
            "recipient": "ana", "file_name": "../etc/passwd", "content": "x"}}
    with pytest.raises(ScenarioError, match=r"effect\.params\.file_name"):
        load_scenario_file(mutate(to_delivery))


def test_invalid_yaml_names_line(good_root: Path) -> None:
    path = good_root / "payments" / "fixture-refund-ceiling.yaml"
    path.write_text("slug: x\ncontexts: [\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=rf"{FILE}: line \d+, column \d+: invalid YAML"):
        load_scenario_file(path)


def test_non_mapping_file(good_root: Path) -> None:
    path = good_root / "payments" / "fixture-refund-ceiling.yaml"
    path.write_text("- just a list\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="must be a YAML mapping"):
        load_scenario_file(path)


def test_collect_reports_all_files_and_keeps_valid_ones(
        mutate: Callable[[Mutator], Path], good_root: Path) -> None:
    mutate(_fact(2, "grant.ceiling", quote="nowhere"))
    loaded, issues = collect_scenarios(good_root)
    assert [item.path for item in loaded] == ["clinical/fixture-unresolved-handoff.yaml"]
    assert [str(i) for i in issues] == [
        f"{FILE}: contexts[2].facts.grant.ceiling.quote: quote not found in document d1: "
        "'nowhere' (scenario fixture-refund-ceiling, context c3)"]
    with pytest.raises(ScenarioError):
        load_scenarios(good_root)


def test_duplicate_slug_across_domains(good_root: Path) -> None:
    target = good_root / "documents" / "fixture-refund-ceiling.yaml"
    target.parent.mkdir()
    text = (good_root / "payments" / "fixture-refund-ceiling.yaml").read_text(encoding="utf-8")
    target.write_text(text.replace("domain: payments", "domain: documents"), encoding="utf-8")
    _, issues = collect_scenarios(good_root)
    assert any("duplicate slug" in str(i) for i in issues)


def test_duplicate_yaml_key_is_an_error(good_root: Path) -> None:
    path = good_root / "payments" / "fixture-refund-ceiling.yaml"
    text = path.read_text(encoding="utf-8")
    line = ('      grant.status: {value: "active", type: string, source: d1, '
            'quote: "active until"}\n')
    assert line in text
    path.write_text(text.replace(line, line + line.replace('"active"', '"revoked"'), 1),
                    encoding="utf-8")
    with pytest.raises(ScenarioError,
                       match=rf"{FILE}: line \d+, column \d+: invalid YAML: duplicate key "
                             "'grant.status'"):
        load_scenario_file(path)
