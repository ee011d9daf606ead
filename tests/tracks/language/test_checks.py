"""The data check on fixture scenarios: labels, unresolved contexts, giveaways, distribution,
evaluator disagreement, and the CLI commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.tracks.language import evaluate as evaluate_module
from authpairs.tracks.language.checks import check_giveaways, check_language
from authpairs.tracks.language.expr.result import EvalResult, Outcome
from authpairs.tracks.language.loader import load_scenario_file
from tests.tracks.language.conftest import GOOD, REFUND, Mutator

FILE = "payments/fixture-refund-ceiling.yaml"
SCENARIO = "(scenario fixture-refund-ceiling"


def _messages(root: Path, distribution: bool = False) -> list[str]:
    return [str(issue) for issue in check_language(root, distribution=distribution).errors]


def test_good_fixtures_pass() -> None:
    report = check_language(GOOD, distribution=False)
    assert report.ok, report.errors
    assert (report.n_files, report.n_valid, report.evaluated_contexts) == (2, 2, 8)
    assert report.determinate_reproduced == 7
    assert report.different_paths == 2
    assert [(u.path, u.context_id) for u in report.unresolved] == [
        ("clinical/fixture-unresolved-handoff.yaml", "c2")]
    assert "no effective time" in report.unresolved[0].reason
    assert "handoff.effective" in report.unresolved[0].detail


def test_wrong_label_is_reported(mutate: Callable[[Mutator], Path], good_root: Path) -> None:
    def swap(data: dict[str, Any]) -> None:
        data["contexts"][0]["label"] = "forbidden"
        data["contexts"][2]["label"] = "lawful"
    mutate(swap)
    messages = _messages(good_root)
    assert (f"{FILE}: contexts[0] (c1): label forbidden but the expression evaluates to true "
            f"{SCENARIO}, context c1)") in messages
    assert (f"{FILE}: contexts[2] (c3): label lawful but the expression evaluates to false "
            f"{SCENARIO}, context c3)") in messages


def test_unresolved_without_reason(mutate: Callable[[Mutator], Path], good_root: Path) -> None:
    mutate(lambda d: d["contexts"][0]["facts"].pop("grant.ceiling"))
    messages = _messages(good_root)
    assert any(m.startswith(f"{FILE}: contexts[0] (c1): unresolved (missing: ")
               and "grant.ceiling" in m and "but the context has no unresolved_reason" in m
               for m in messages), messages


def test_reason_on_a_determinate_context(mutate: Callable[[Mutator], Path],
                                         good_root: Path) -> None:
    mutate(lambda d: d["contexts"][3].update(unresolved_reason="unclear"))
    assert (f"{FILE}: contexts[3] (c4): has unresolved_reason but evaluates to false "
            f"{SCENARIO}, context c4)") in _messages(good_root)


def test_expression_error_is_reported(mutate: Callable[[Mutator], Path],
                                      good_root: Path) -> None:
    mutate(lambda d: d.update(expression='grant.holder < "Z" or role.name == "Refund Lead"'))
    messages = _messages(good_root)
    assert any(m.startswith(f"{FILE}: contexts[0] (c1): expression error") for m in messages)


def test_evaluator_disagreement_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def always_true(*_: Any) -> EvalResult:
        return EvalResult(Outcome.TRUE)
    monkeypatch.setattr(evaluate_module, "evaluate_sql", always_true)
    messages = _messages(GOOD)
    assert any(m.startswith(f"{FILE}: contexts[2] (c3): evaluators disagree: interpreter false")
               for m in messages)


def test_giveaway_word_only_in_forbidden(mutate: Callable[[Mutator], Path],
                                         good_root: Path) -> None:
    def add_word(data: dict[str, Any]) -> None:
        doc = data["contexts"][3]["documents"][0]
        doc["text"] += "The desk was suspended for an audit.\n"
    mutate(add_word)
    assert (f"{FILE}: contexts: lexical giveaway: 'suspended' appears only in forbidden "
            f"contexts (c4); use it in a lawful context too or rephrase {SCENARIO})") \
        in _messages(good_root)


def test_giveaway_word_also_in_lawful_is_fine() -> None:
    scenario = load_scenario_file(REFUND).scenario
    # 'revoked' and 'expired' occur in forbidden contexts and in lawful ones
    assert check_giveaways(scenario) == []


def test_scoring_name_in_public_request(mutate: Callable[[Mutator], Path],
                                        good_root: Path) -> None:
    mutate(lambda d: d["request"]["arguments"].update(amount_interval="within"))
    assert (f"{FILE}: request: public request uses the family name 'amount_interval'; rename "
            f"it (reviewers must not see scoring names) {SCENARIO})") in _messages(good_root)


def test_distribution_counts_on_fixtures() -> None:
    messages = _messages(GOOD, distribution=True)
    assert "(dataset): split dev: 1 scenarios, the definition requires 10" in messages
    assert "(dataset): split test: 1 scenarios, the definition requires 40" in messages
    assert ("(dataset): domain payments: scenarios/dev inputs/test inputs 1/0/4, the definition "
            "requires 11/4/40") in messages
    assert ("(dataset): family amount_interval: 4 test inputs, the definition requires 16"
            in messages)
    assert "(dataset): family ownership: development-only family has no dev scenario" in messages
    assert (f"{FILE}: title: 'Fixture refund ceiling' is not one of the defined test titles of "
            f"domain payments {SCENARIO})") in messages
    assert ("(dataset): title 'Delegated refund ceiling': 0 test scenarios in payments carry "
            "this title, the definition requires exactly 1") in messages


def test_dev_only_family_in_test_split(mutate: Callable[[Mutator], Path],
                                       good_root: Path) -> None:
    mutate(lambda d: d.update(family="break_glass"))
    assert f"{FILE}: family: break_glass is a development-only family {SCENARIO})" in \
        _messages(good_root, distribution=True)


runner = CliRunner()


def test_cli_check_ok() -> None:
    result = runner.invoke(app, ["data", "check", "--root", str(GOOD), "--no-distribution"],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "OK" in result.output
    assert "unresolved" in result.output
    assert "[missing: handoff.effective]" in " ".join(result.output.split())  # not markup


def test_cli_check_json(mutate: Callable[[Mutator], Path], good_root: Path) -> None:
    mutate(lambda d: d["contexts"][1]["facts"]["role.name"].update(quote="Refund Boss"))
    result = runner.invoke(app, ["data", "check", "--root", str(good_root), "--no-distribution",
                                 "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["ok"] is False
    assert report["errors"] == [{"file": FILE, "scenario": "fixture-refund-ceiling",
                                 "context": "c2", "field": "contexts[1].facts.role.name.quote",
                                 "message": "quote not found in document d1: 'Refund Boss'"}]
    assert report["unresolved"][0]["context_id"] == "c2"


def test_cli_check_fails_with_file_and_field(mutate: Callable[[Mutator], Path],
                                             good_root: Path) -> None:
    mutate(lambda d: d["contexts"][1]["facts"]["role.name"].update(quote="Refund Boss"))
    result = runner.invoke(app, ["data", "check", "--root", str(good_root),
                                 "--no-distribution"], terminal_width=200)
    assert result.exit_code == 1
    assert f"{FILE}: contexts[1].facts.role.name.quote: quote not found in document d1" in \
        " ".join(result.output.split())


def test_cli_build_language(tmp_path: Path) -> None:
    out = tmp_path / "lang.jsonl"
    result = runner.invoke(app, ["data", "build-language", "--out", str(out), "--split", "test",
                                 "--root", str(GOOD)])
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.output)
    assert manifest["n_cases"] == 4 and manifest["name"] == "good:test"
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert json.loads(lines[0])["public"]["source_id"].startswith("AC-")


def test_cli_build_language_rejects_bad_split(tmp_path: Path) -> None:
    result = runner.invoke(app, ["data", "build-language", "--out", str(tmp_path / "x"),
                                 "--split", "train", "--root", str(GOOD)])
    assert result.exit_code != 0


def test_cli_build_language_reports_bad_data(mutate: Callable[[Mutator], Path],
                                             good_root: Path, tmp_path: Path) -> None:
    mutate(lambda d: d.update(slug="wrong"))
    result = runner.invoke(app, ["data", "build-language", "--out", str(tmp_path / "x"),
                                 "--root", str(good_root)])
    assert result.exit_code == 1
    assert f"{FILE}: slug: must equal the file name stem" in result.output


def test_cli_language_stats() -> None:
    result = runner.invoke(app, ["data", "language-stats", "--root", str(GOOD)])
    assert result.exit_code == 0, result.output
    assert "| payments | 1 | 0 | 4 |" in result.output
    assert "| clinical | 1 | 4 | 0 |" in result.output
    assert "Unresolved contexts: 1." in result.output
