"""``authpairs score`` and ``authpairs compare`` on agent runs: the stack table in the terminal,
JSON and CSV with the same counts as the Python object, the stack comparison, and one error
line for an agent run given with a guardrail run."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from tests.agent_records import record_agent_and_plain_runs
from tests.analysis.agent_fixtures import F_ADDRESS, L_REFUND2
from typer.testing import CliRunner

from authpairs.api import agent_compare, agent_score
from authpairs.cli import app

runner = CliRunner()
COUNTS = ("n", "agent_declined", "guardrail_blocked", "unavailable", "executed",
          "executed_other", "went_through", "unverified")
"""The counts of one label, in the order of the terminal's columns."""


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_agent_and_plain_runs(tmp_path_factory.mktemp("agent-cli") / "records.sqlite")


def _terminal_counts(output: str, key: str = "all") -> dict[str, list[int]]:
    """The counts of the stack table's rows of group ``key``, read from the terminal (a
    table too wide for the console comes in parts that repeat the key columns: their cells
    are joined)."""
    rows: dict[str, list[int]] = {}
    for line in output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == key and words[1] in ("lawful", "forbidden"):
            # a k/n cell (the measure) counts k; the other label's measure cell is empty
            rows.setdefault(words[1], []).extend(int(w.split("/")[0]) for w in words[2:])
    assert all(len(counts) == len(COUNTS) for counts in rows.values()), rows
    return rows


def test_score_terminal_json_csv_and_object_agree(records: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["score", "crafted", "--records", str(records), "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    assert "crafted: agent + guardrail stack" in result.output
    assert "agent declined: no call reached the guardrail" in result.output
    terminal = _terminal_counts(result.output)
    data = json.loads((out / "stack_scores.json").read_text())
    with (out / "stack_scores.csv").open(newline="") as handle:
        table = {row["label"]: [int(row[k]) for k in COUNTS] for row in csv.DictReader(handle)}
    score = agent_score(f"{records}::crafted").overall
    python = {"lawful": [score.lawful.to_dict()[k] for k in COUNTS],
              "forbidden": [score.forbidden.to_dict()[k] for k in COUNTS]}
    from_json = {label: [data["scores"][label][k] for k in COUNTS]
                 for label in ("lawful", "forbidden")}
    assert terminal == from_json == table == python
    assert python["lawful"] == [4, 2, 0, 0, 2, 1, 1, 0]  # the crafted session's own counts
    assert data["scores"]["forbidden_effects"] == score.forbidden_effects == 2
    assert data["proposals"] == {"case_operation": 2, "other_operation": 5, "none": 1}
    with (out / "stack_cases.csv").open(newline="") as handle:
        cases = {row["case_id"]: row for row in csv.DictReader(handle)}
    assert len(cases) == 8
    assert (cases[L_REFUND2]["outcome"], cases[L_REFUND2]["operation"]) == (
        "executed", "other_operation")
    assert cases[F_ADDRESS]["outcome"] == "guardrail_blocked"


def test_score_by_family_and_a_mistyped_attribute(records: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", "crafted", "--records", str(records), "--by",
                                 "family", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    grouped = agent_score(f"{records}::crafted").by("family")
    for family, score in grouped.items():
        rows = _terminal_counts(result.output, family)
        assert rows["lawful"] == [score.lawful.to_dict()[k] for k in COUNTS]
        assert rows["forbidden"] == [score.forbidden.to_dict()[k] for k in COUNTS]
    assert (tmp_path / "stack_scores_by_family.csv").is_file()
    result = runner.invoke(app, ["score", "crafted", "--records", str(records), "--by",
                                 "famly"])
    assert result.exit_code == 2
    assert "no offered case has the attribute 'famly'" in result.output
    assert "Traceback" not in result.output


def test_several_agent_runs_are_scored_one_after_the_other(records: Path,
                                                           tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", f"{records}::open", f"{records}::guarded",
                                 "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "open: agent + guardrail stack" in result.output
    assert "guarded: agent + guardrail stack" in result.output
    for name in ("open", "guarded"):
        data = json.loads((tmp_path / name / "stack_scores.json").read_text())
        assert data["run_id"] == name and data["cases"] == 8


def test_an_agent_run_with_a_guardrail_run_is_one_error_line(records: Path) -> None:
    for args in (["compare", "open", "plain"], ["compare", "plain", "open"]):
        result = runner.invoke(app, [*args, "--records", str(records)])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: 'open' is an agent run and "
                                                       "'plain' is not")
    result = runner.invoke(app, ["score", "open", f"{records}::plain", "--records",
                                 str(records)])
    assert result.exit_code == 2
    assert "agent runs and guardrail runs are scored apart" in result.output
    assert "Traceback" not in result.output


def test_compare_two_agent_runs(records: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", "open", "crafted", "--records", str(records),
                                 "--draws", "300", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    expected = agent_compare(f"{records}::open", f"{records}::crafted", draws=300).comparison
    n = expected.counts()
    assert "open -> crafted: lawful cases (own operation executed)" in result.output
    assert "lawful cases: outcome before (rows) -> after (columns)" in result.output
    assert f"changed cases ({len(expected.changed())})" in result.output
    assert re.search(r"lost 3, gained 0, net -3 of 4 lawful", result.output)
    assert "newly executed 0, newly stopped 2; exact McNemar p = 0.500000" in result.output
    data = json.loads((tmp_path / "comparison.json").read_text())
    assert data["counts"] == n
    with (tmp_path / "requests.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and {r["transition"] for r in rows} >= {"lost", "newly_blocked"}
    quiet = runner.invoke(app, ["compare", "open", "crafted", "--records", str(records),
                                "--draws", "300", "--no-list"])
    assert quiet.exit_code == 0 and "changed cases" not in quiet.output
    assert "exact McNemar" in quiet.output
    by = runner.invoke(app, ["compare", "open", "crafted", "--records", str(records),
                             "--draws", "300", "--by", "family", "--out", str(tmp_path)])
    assert by.exit_code == 0, by.output
    assert "open -> crafted by family" in by.output
    with (tmp_path / "by_family.csv").open(newline="") as handle:
        families = {row["family"]: row for row in csv.DictReader(handle)}
    assert {row["family"]: row for row in expected.breakdown("family")}.keys() == \
        families.keys() == {"amount_interval", "delegated_scope"}
    assert int(families["delegated_scope"]["lost_declined"]) == 2
    assert sum(int(r["lost"]) for r in families.values()) == n["lost"]
