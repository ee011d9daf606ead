"""The hidden-complexity fixtures (records and aggregates) and custom-folder checking:
records, metadata quotes, teaching errors, ``--root`` for check / effects-check / build-language.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.tracks.language.cases import load_language_dataset
from authpairs.tracks.language.checks import check_language
from authpairs.tracks.language.evaluate import evaluate_scenario
from authpairs.tracks.language.expr.ast import Aggregate, walk
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.loader import load_scenarios

KIT = Path(__file__).parent / "fixtures" / "kit"
QUORUM = "software/distinct-role-quorum.yaml"
LIMIT = "payments/cumulative-commitment-limit.yaml"
CHAIN = "documents/amendment-chain-end-date.yaml"
runner = CliRunner()


@pytest.fixture
def kit_root(tmp_path: Path) -> Path:
    """A writable copy of the kit fixtures."""
    root = tmp_path / "kit"
    shutil.copytree(KIT, root)
    return root


def _edit(root: Path, rel: str, change: Any) -> None:
    path = root / rel
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _errors(root: Path) -> list[str]:
    return [str(issue) for issue in check_language(root).errors]


def test_fixtures_pass_check_and_both_evaluators() -> None:
    report = check_language(KIT)
    assert report.ok, [str(e) for e in report.errors]
    assert (report.n_valid, report.evaluated_contexts, report.determinate_reproduced) == \
        (3, 12, 12)
    assert report.domain_rows == []  # a custom folder gets no distribution checks by default
    loaded = load_scenarios(KIT)
    assert sorted(item.path for item in loaded) == sorted([QUORUM, LIMIT, CHAIN])
    for item in loaded:
        scenario = item.scenario
        assert len(scenario.expression) < 600
        funcs = {n.func for n in walk(parse_expression(scenario.expression))
                 if isinstance(n, Aggregate)}
        assert funcs, scenario.slug
        for ev in evaluate_scenario(scenario):
            assert ev.reproduces_label, (scenario.slug, ev)
            assert ev.interpreter.outcome == ev.sql.outcome


def test_hidden_complexity_uses_the_new_operators() -> None:
    by_slug = {i.scenario.slug: i.scenario for i in load_scenarios(KIT)}
    aggregates = {slug: {n.func for n in walk(parse_expression(s.expression))
                         if isinstance(n, Aggregate)} for slug, s in by_slug.items()}
    assert aggregates == {"cumulative-commitment-limit": {"sum"},
                          "distinct-role-quorum": {"count"},
                          "amendment-chain-end-date": {"any", "max"}}


def test_distribution_only_when_asked(kit_root: Path) -> None:
    assert check_language(kit_root).ok
    asked = check_language(kit_root, distribution=True)
    assert any(e.file == "(dataset)" for e in asked.errors)


def test_metadata_quote_is_verified(kit_root: Path) -> None:
    def wrong_issuer(data: dict[str, Any]) -> None:
        data["contexts"][0]["facts"]["approvals"]["value"][1]["quote"] = "Jonas Weber, DBA"
    _edit(kit_root, QUORUM, wrong_issuer)
    assert (f"{QUORUM}: contexts[0].facts.approvals.value[1].quote: quote not found in the "
            "issuer of document d2: 'Jonas Weber, DBA' (scenario distinct-role-quorum, "
            "context c1)") in _errors(kit_root)


def test_metadata_time_and_id_sources(kit_root: Path) -> None:
    def add_facts(data: dict[str, Any]) -> None:
        facts = data["contexts"][0]["facts"]
        facts["approval.time"] = {"value": "2026-06-03T15:10:00Z", "type": "timestamp",
                                  "source": "d1.time", "quote": "2026-06-03T15:10:00Z"}
        facts["approval.doc"] = {"value": "d2", "type": "string", "source": "d2.id",
                                 "quote": "d2"}
        facts["approval.bad"] = {"value": "x", "type": "string", "source": "d9.issuer",
                                 "quote": "x"}
    _edit(kit_root, QUORUM, add_facts)
    errors = _errors(kit_root)
    assert len(errors) == 1, errors
    assert "contexts[0].facts.approval.bad.source: unknown source 'd9.issuer'" in errors[0]


@pytest.mark.parametrize(("change", "field", "message"), [
    (lambda r: r["value"][0].update(amount="18000"), "value[0].amount",
     "type number needs a finite number"),
    (lambda r: r["value"][0].update(colour="red"), "value[0].colour", "not a declared field"),
    (lambda r: r["value"][0].pop("quote"), "value[0].quote", "each record quotes"),
    (lambda r: r["value"][0].update(quote="PO-9999"), "value[0].quote", "quote not found"),
    (lambda r: r.pop("fields"), "fields", "declares its fields"),
    (lambda r: r["fields"].update(quote="string"), "fields.quote", "not 'source' or 'quote'"),
])
def test_record_problems_name_the_field(kit_root: Path, change: Any, field: str,
                                        message: str) -> None:
    _edit(kit_root, LIMIT, lambda d: change(d["contexts"][2]["facts"]["commitments"]))
    errors = _errors(kit_root)
    prefix = f"{LIMIT}: contexts[2].facts.commitments.{field}: "
    assert any(e.startswith(prefix) and message in e and e.endswith(
        "(scenario cumulative-commitment-limit, context c3)") for e in errors), errors


def test_unknown_record_field_in_expression_suggests(kit_root: Path) -> None:
    _edit(kit_root, LIMIT, lambda d: d.update(expression=d["expression"].replace(
        "c.status", "c.statsu")))
    errors = _errors(kit_root)
    assert any("'statsu' is not a field of the records 'commitments'" in e
               and "did you mean 'status'?" in e for e in errors), errors


def test_unknown_fact_name_suggests(kit_root: Path) -> None:
    _edit(kit_root, LIMIT, lambda d: d.update(expression=d["expression"].replace(
        "delegation.ceiling", "delegation.cieling")))
    errors = _errors(kit_root)
    assert any("name 'delegation.cieling' is not a fact" in e
               and "did you mean 'delegation.ceiling'?" in e for e in errors), errors


def test_syntax_error_in_a_scenario_teaches(kit_root: Path) -> None:
    _edit(kit_root, LIMIT, lambda d: d.update(
        expression="delegation.holder = request.arguments.on_behalf_of"))
    error = next(e for e in _errors(kit_root) if "syntax error" in e)
    assert error.startswith(f"{LIMIT}: expression: syntax error at line 1, column 19: "
                            "unexpected '='")
    assert "  delegation.holder = request.arguments.on_behalf_of\n" \
           "                    ^" in error
    assert "expected one of:" in error and "did you mean '=='?" in error


def test_cli_custom_root_commands(tmp_path: Path) -> None:
    result = runner.invoke(app, ["data", "check", "--root", str(KIT)])
    assert result.exit_code == 0, result.output
    assert "Domains" not in result.output
    result = runner.invoke(app, ["data", "check", "--root", str(KIT), "--distribution"])
    assert result.exit_code == 1
    out = tmp_path / "kit.jsonl"
    result = runner.invoke(app, ["data", "build-language", "--root", str(KIT), "--name",
                                 "hidden-kit", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["name"] == "hidden-kit"
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["source"]["dataset"] == "hidden-kit"
    assert first["source"]["path"] in (QUORUM, LIMIT, CHAIN)
    result = runner.invoke(app, ["data", "effects-check", "--root", str(KIT)])
    assert result.exit_code == 0, result.output
    assert "all 24 records passed their audit" in result.output


def test_default_name_is_the_folder(kit_root: Path) -> None:
    assert load_language_dataset(root=kit_root).name == "kit"
    assert load_language_dataset().name == "language"


def test_effects_check_reports_bad_folder(kit_root: Path) -> None:
    _edit(kit_root, LIMIT, lambda d: d.update(expression="nothing.here"))
    result = runner.invoke(app, ["data", "effects-check", "--root", str(kit_root)])
    assert result.exit_code == 1
