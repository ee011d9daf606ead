"""The report's section for agent runs: each run's stack table (the numbers of ``authpairs
score``), the transitions of two compared agent runs (those of ``authpairs compare``, in the
report's one transitions section), an offline page, and one error for an agent run compared
with a guardrail run."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from authpairs.analysis.outcomes import reason_columns
from authpairs.analysis.runref import AgentRunError
from authpairs.api import agent_compare, agent_score
from authpairs.report.build import ReportResult, build_report
from authpairs.report.request import ReportRequest
from authpairs.report.runset import ReportInputError
from authpairs.report.tables import describe_run
from authpairs.runs.completeness import completeness
from authpairs.runs.store import RecordStore
from tests.agent_records import record_agent_and_plain_runs


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_agent_and_plain_runs(tmp_path_factory.mktemp("agent-report") / "records.sqlite")


@pytest.fixture(scope="module")
def report(records: Path, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    return build_report(ReportRequest(runs=["open", "crafted", "plain"], records=records,
                                      out=tmp_path_factory.mktemp("page"),
                                      compare=("open", "crafted"), draws=300))


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_stack_table_has_the_scores_numbers(report: ReportResult, records: Path) -> None:
    meta = json.loads((report.html.parent / "report.json").read_text())
    assert "agent" in meta["sections"] and "transitions" in meta["sections"]
    # no record-level contrast of an agent run (with another, or with the guardrail run)
    assert "contrasts" not in meta["sections"]
    assert meta["omitted"]["contrast matrix"].startswith("agent runs are compared as stacks")
    rows = _csv(report.html.parent / "tables" / "agent_stack.csv")
    assert [(r["run"], r["label"]) for r in rows] == [
        ("open", "lawful"), ("open", "forbidden"), ("crafted", "lawful"),
        ("crafted", "forbidden")]  # the guardrail run 'plain' has no stack table
    for row in rows:
        counts = getattr(agent_score(f"{records}::{row['run']}").overall, row["label"])
        expected = reason_columns(counts.to_dict())  # unavailable answers by reason spread
        assert {k: int(row[k]) for k in expected} == expected
        assert all(row[k] == "" for k in row if k.startswith("unavailable:") and k not in expected)
    assert any(k.startswith("unavailable:") for k in rows[0])  # 'crafted' has one
    families = _csv(report.html.parent / "tables" / "agent_stack_by_family.csv")
    assert sum(int(r["n"]) for r in families if r["run"] == "crafted") == 8


def test_the_transitions_are_the_comparisons(report: ReportResult, records: Path) -> None:
    comparison = agent_compare(f"{records}::open", f"{records}::crafted", draws=300)
    n = comparison.comparison.counts()
    tables = report.html.parent / "tables"
    (lawful,) = _csv(tables / "transitions_lawful.csv")
    assert {k: int(v) for k, v in lawful.items()} == {k: n[k] for k in lawful}
    assert int(lawful["lost_declined"]) == 2
    (forbidden,) = _csv(tables / "transitions_forbidden.csv")
    assert {k: int(v) for k, v in forbidden.items()} == {k: n[k] for k in forbidden}
    assert {"still_executed", "newly_declined", "forbidden_effects_before"} <= set(forbidden)
    matrix = {r["before"]: r for r in _csv(tables / "outcomes_lawful.csv")}
    assert int(matrix["executed"]["agent_declined"]) == 2
    changed = _csv(tables / "changed_requests.csv")
    assert len(changed) == len(comparison.comparison.changed()) > 0
    section = next(s for s in report.sections if s.key == "transitions")
    assert any("newly stopped 2; exact McNemar p = 0.500000" in note for note in section.notes)


def test_the_page_shows_the_section_offline(report: ReportResult) -> None:
    html = report.html.read_text(encoding="utf-8")
    assert 'id="agent"' in html and "Agent runs: the agent + guardrail stack" in html
    assert "guardrail blocked" in html and "agent declined" in html
    for target in re.findall(r'(?:src|href)="([^"#][^"]*)"', html):
        assert not target.startswith(("http:", "https:", "//")), target
    for name in ("agent_stack", "transitions_lawful", "changed_requests"):
        assert f'href="tables/{name}.csv"' in html


def test_an_agent_run_compared_with_a_guardrail_run_is_refused(records: Path,
                                                               tmp_path: Path) -> None:
    with pytest.raises(AgentRunError, match="'open' is an agent run and 'plain' is not"):
        build_report(ReportRequest(runs=["open"], records=records, out=tmp_path,
                                   compare=("plain", "open")))


def test_guardrail_sections_leave_agent_runs_to_the_agent_section(report: ReportResult,
                                                                  records: Path) -> None:
    # the runs table (and the seeds, breakdowns, engines and groups) count guardrail runs only
    assert [r["run"] for r in _csv(report.html.parent / "tables" / "runs.csv")] == ["plain"]
    # the case browser shows each agent run's offered cases with their stack outcomes,
    # declined cases (which have no case record) too
    section = next(s for s in report.sections if s.key == "cases")
    assert section.browser is not None
    data = json.loads(section.browser)
    texts, cases = data["texts"], data["cases"]
    names = [run["name"] for run in data["runs"]]
    for run in ("open", "crafted"):
        stack = agent_score(f"{records}::{run}").cases
        rows = [i for i, k in enumerate(cases["run"]) if names[k] == run]
        shown = {data["case_ids"][cases["case"][i]]: texts[cases["outcome"][i]] for i in rows}
        assert shown == {case.case_id: case.outcome for case in stack}
    assert "agent_declined" in {texts[cases["outcome"][i]] for i in range(len(cases["run"]))}
    # transitions between runs of one kind: the two agent runs, in the stack's transitions
    # (the --compare pair's, as the transitions section gives them); the one guardrail run
    # pairs with neither
    (pair,) = data["pairs"]
    assert (names[pair["before"]], names[pair["after"]], pair["unit"]) == (
        "open", "crafted", "cases")
    letters = {t["letter"]: t["key"] for t in data["transitions"]}
    shown = {data["case_ids"][i]: letters[code] for i, code in enumerate(pair["codes"])
             if code != "."}
    changes = agent_compare(f"{records}::open", f"{records}::crafted", draws=10).comparison.changes
    assert shown == {c.case_id: c.lost_to or c.transition for c in changes}
    assert "lost_declined" in shown.values()


def test_an_agent_run_is_not_composed(records: Path, tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="--compose: agent runs are not composed"):
        build_report(ReportRequest(runs=["plain"], records=records, out=tmp_path,
                                   compose=["plain", "open"]))


def test_an_agent_runs_declined_cases_are_not_missing(report: ReportResult,
                                                      records: Path) -> None:
    """An agent run records a case only when a call reached the guardrail: the report, the
    runs listing and the completeness line call the other cases declined, not missing."""
    meta = json.loads((report.html.parent / "report.json").read_text())
    assert meta["incomplete"] == []
    assert "INCOMPLETE" not in report.html.read_text()
    with RecordStore(records, readonly=True) as store:
        info = store.get_run("crafted")
        assert info is not None and info.is_agent_run
        done = store.done_case_ids("crafted")
    assert describe_run(info, len(done))["recorded"] == "6/8 (2 declined)"
    state = completeness(info, done)
    assert state.complete and state.declined == 2 and state.missing == ()
    assert "the agent declined the other 2" in state.describe()
    guardrail_run = info.model_copy(update={"config": {k: v for k, v in info.config.items()
                                                       if k != "agent"}})
    plain = completeness(guardrail_run, done)
    assert not plain.complete and len(plain.missing) == 2  # a guardrail run would miss them
