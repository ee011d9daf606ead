"""Scoring of records, score tables/files, JSONL export and the core CLI commands."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from authpairs.analysis.scoring import score_by, score_records
from authpairs.cli import app
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord, EffectRecord


def _record(case_id: str, label: str, status: OutcomeStatus, decision: Decision | None,
            family: str = "f1", reason: str | None = None,
            effect: EffectRecord | None = None) -> CaseRecord:
    dispatch = Dispatch.ALLOW if (status is OutcomeStatus.DECISION
                                  and decision is Decision.ALLOW) else Dispatch.BLOCK
    return CaseRecord(run_id="r", case_id=case_id, input_sha256="x", status=status,
                      decision=decision, reason_code=reason, dispatch=dispatch, label=label,
                      cluster="s", attributes={"family": family}, input_tokens=10,
                      output_tokens=3, effect=effect)


D, A, U = OutcomeStatus.DECISION, OutcomeStatus.ABSTENTION, OutcomeStatus.UNAVAILABLE
RECORDS = [
    _record("1", "lawful", D, Decision.ALLOW,
            effect=EffectRecord(executed=True, verified=True)),
    _record("2", "lawful", D, Decision.BLOCK, effect=EffectRecord(executed=False)),
    _record("3", "lawful", U, None, reason="not_json", effect=EffectRecord(executed=False)),
    _record("4", "forbidden", D, Decision.ALLOW, family="f2",
            effect=EffectRecord(executed=True, verified=True)),
    _record("5", "forbidden", D, Decision.BLOCK, family="f2", effect=EffectRecord(executed=False)),
    _record("6", "forbidden", A, Decision.UNKNOWN, family="f2",
            effect=EffectRecord(executed=False, audit_ok=False)),
    _record("7", "forbidden", U, None, family="f2", reason="length",
            effect=EffectRecord(executed=False)),
]


def test_score_counts_every_case_in_every_denominator() -> None:
    score = score_records(RECORDS)
    assert (score.n, score.lawful, score.forbidden) == (7, 3, 4)
    assert score.correct == 2  # 1 (ALLOW lawful) + 5 (BLOCK forbidden)
    assert score.incorrect_approvals == 1 and score.false_denials == 1
    assert score.abstentions == 1 and score.unavailable == 2 and score.usable == 4
    assert score.unavailable_by_reason == {"length": 1, "not_json": 1}
    assert score.usable_correctness == 2 / 7
    assert (score.forbidden_effects, score.lawful_completions, score.audit_failures) == (1, 1, 1)
    assert (score.input_tokens, score.output_tokens) == (70, 21)


def test_score_by_attribute() -> None:
    groups = score_by(RECORDS, "family")
    assert list(groups) == ["f1", "f2"]
    assert groups["f1"].n == 3 and groups["f2"].n == 4
    assert score_by(RECORDS, "label")["lawful"].false_denials == 1


def test_cli_run_score_export(tmp_path: Path) -> None:
    runner = CliRunner()
    db = tmp_path / "r.sqlite"
    out = tmp_path / "report"
    result = runner.invoke(app, ["run", "--dataset", "examples", "--split", "all",
                                 "--baseline", "always-block", "--records", str(db),
                                 "--run-id", "block", "--quiet", "--by", "family",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "8 new" in result.output
    rows = json.loads((out / "scores.json").read_text())
    assert rows[0]["n"] == 8 and rows[0]["correct"] == 4 and rows[0]["false_denials"] == 4
    # Enforcement was on: nothing executed under always-block.
    assert rows[0]["enforced"] == 8 and rows[0]["lawful_completions"] == 0
    with (out / "scores_by_family.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 2

    again = runner.invoke(app, ["run", "--dataset", "examples", "--split", "all",
                                "--baseline", "always-block", "--records", str(db),
                                "--run-id", "block", "--quiet"])
    assert again.exit_code == 0 and "8 already recorded, 0 new" in again.output

    listed = runner.invoke(app, ["runs", "--records", str(db)])
    assert "block" in listed.output and "8/8" in listed.output

    export = tmp_path / "run.jsonl"
    exported = runner.invoke(app, ["export", "block", "--records", str(db), "--out",
                                   str(export)])
    assert exported.exit_code == 0, exported.output
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert "run" in lines[0] and len(lines) == 9
    assert all(len(line["attempts"]) == 1 for line in lines[1:])


def test_cli_always_allow_executes_and_verifies_effects(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--dataset", "examples", "--split", "all",
                                      "--baseline", "always-allow", "--quiet",
                                      "--records", str(tmp_path / "r.sqlite"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    row = json.loads((out / "scores.json").read_text())[0]
    assert row["lawful_completions"] == 4 and row["forbidden_effects"] == 4
    assert row["audit_failures"] == 0


def test_bad_config_names_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("reviewer:\n  sampling:\n    temperature: hot\n")
    result = CliRunner().invoke(app, ["run", "--config", str(config)])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "Traceback" not in message
    assert "bad.yaml" in message and "reviewer.sampling.temperature" in message


def test_show_prompt_prints_public_case_only() -> None:
    from authpairs.cases.examples import load_examples

    case = load_examples().cases[0]
    result = CliRunner().invoke(app, ["show-prompt", case.case_id, "--dataset", "examples"])
    assert result.exit_code == 0, result.output
    assert case.public.request.action in result.output
    assert case.attributes["path"] not in result.output
