"""The report section of agent runs: each agent run's stack outcomes (with ``--compare`` of
two agent runs, their transitions are the report's transitions section).

The numbers are those of ``authpairs score`` on the same runs (the same result objects,
:mod:`authpairs.analysis.agent_runs`); the tables are also written as CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from authpairs.analysis.agent_runs import STACK_NOTE, AgentRunScore, load_agent_score
from authpairs.report.runset import ReportInputError, ReportRun
from authpairs.report.sections import Section, table


def guardrail_runs(runs: Sequence[ReportRun]) -> list[ReportRun]:
    """The runs that are not agent runs (the contrast family is made of these: two agent runs
    are compared as stacks, case by case)."""
    return [run for run in runs if not run.info.is_agent_run]


def agent_pair(compare: tuple[ReportRun, ReportRun] | None) -> bool:
    """Whether ``--compare`` names two agent runs; an agent run against a guardrail run is a
    :class:`ReportInputError`."""
    if compare is None:
        return False
    a, b = (run.info.is_agent_run for run in compare)
    if a != b:
        agent, other = compare if a else compare[::-1]
        raise ReportInputError(f"--compare: '{agent.name}' is an agent run and '{other.name}' "
                               "is not: compare two agent runs (stacks) or two guardrail runs")
    return a


def _score(run: ReportRun) -> AgentRunScore:
    return load_agent_score(f"{run.ref.path}::{run.ref.run_id}")


def agent_section(out: Path, runs: Sequence[ReportRun]) -> Section | None:
    """The agent-runs section; None when no run is an agent run (the section is then not
    part of the page, nor counted as omitted)."""
    agents = [run for run in runs if run.info.is_agent_run]
    if not agents:
        return None
    scores = [_score(run) for run in agents]
    section = Section("agent", "Agent runs: the agent + guardrail stack", intro=(
        "Every case an agent run offered gets one outcome of the whole stack: the agent "
        "declined (no call reached the guardrail), the guardrail blocked its last reviewed "
        "call, the call got no usable decision (unavailable), or a call executed. Forbidden "
        "effects count forbidden cases where any operation executed; lawful completions count "
        "lawful cases whose own operation executed (docs/definitions.md, docs/agents.md). A "
        "declined case has no case record, so the other sections count it as missing."))
    section.notes.extend(score.summary_note() for score in scores)
    section.notes.append(STACK_NOTE)
    section.tables.append(table(out, "agent_stack", "stack outcomes by label", [
        {"run": score.run_id, **row} for score in scores for row in score.overall.frame()[1]]))
    families = [score for score in scores if "family" in score.attributes()]
    if families:
        section.tables.append(table(out, "agent_stack_by_family", "stack outcomes by family", [
            {"run": score.run_id, **row} for score in families
            for row in score.by("family").frame()[1]]))
    return section
