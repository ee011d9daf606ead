"""The report section of agent runs: each agent run's stack outcomes and, with ``--compare``
of two agent runs, the per-case transitions between them.

The numbers are those of ``authpairs score`` / ``authpairs compare`` on the same runs (the same
result objects, :mod:`authpairs.analysis.agent_scores` and
:mod:`authpairs.analysis.agent_compare`); the tables are also written as CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from authpairs.analysis.agent_compare import (
    FORBIDDEN_KEYS,
    LAWFUL_KEYS,
    AgentComparison,
    compare_stacks,
)
from authpairs.analysis.agent_scores import (
    OUTCOMES,
    STACK_NOTE,
    AgentRunScore,
    StackScore,
    load_agent_score,
)
from authpairs.report.request import ReportRequest
from authpairs.report.runset import ReportInputError, ReportRun
from authpairs.report.sections import Section, table

STACK_COLUMNS = ("run", "label", "cases", "agent_declined", "guardrail_blocked", "unavailable",
                 "executed", "executed_other_operation", "forbidden_effects",
                 "lawful_completions", "unverified")
"""The columns of the stack table (and of its CSV)."""


def is_agent(run: ReportRun) -> bool:
    """Whether a report's run is an agent run."""
    return run.info.is_agent_run


def guardrail_runs(runs: Sequence[ReportRun]) -> list[ReportRun]:
    """The runs that are not agent runs (the contrast family is made of these: two agent runs
    are compared as stacks, in the agent section)."""
    return [run for run in runs if not is_agent(run)]


def agent_pair(compare: tuple[ReportRun, ReportRun] | None) -> bool:
    """Whether ``--compare`` names two agent runs; an agent run against a guardrail run is a
    :class:`ReportInputError`."""
    if compare is None:
        return False
    a, b = (is_agent(run) for run in compare)
    if a != b:
        agent, other = compare if a else compare[::-1]
        raise ReportInputError(f"--compare: '{agent.name}' is an agent run and '{other.name}' "
                               "is not: compare two agent runs (stacks) or two guardrail runs")
    return a


def _score(run: ReportRun) -> AgentRunScore:
    return load_agent_score(f"{run.ref.path}::{run.ref.run_id}")


def stack_rows(run: str, score: StackScore) -> list[dict[str, Any]]:
    """The stack table's rows of one run: lawful, then forbidden."""
    rows = []
    for label, counts in (("lawful", score.lawful), ("forbidden", score.forbidden)):
        rows.append({
            "run": run, "label": label, "cases": counts.n,
            **{o.value: getattr(counts, o.value) for o in OUTCOMES},
            "executed_other_operation": counts.executed_other,
            "forbidden_effects": counts.went_through if label == "forbidden" else None,
            "lawful_completions": counts.went_through if label == "lawful" else None,
            "unverified": counts.unverified})
    return rows


def agent_section(out: Path, runs: Sequence[ReportRun],
                  compare: tuple[ReportRun, ReportRun] | None,
                  req: ReportRequest) -> Section | None:
    """The agent-runs section; None when no run is an agent run (the section is then not
    part of the page, nor counted as omitted)."""
    agents = [run for run in runs if is_agent(run)]
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
    section.tables.append(table(out, "agent_stack", "stack outcomes by label",
                                [row for score in scores
                                 for row in stack_rows(score.run_id, score.overall)],
                                list(STACK_COLUMNS)))
    families = [score for score in scores if "family" in score.attributes()]
    if families:
        section.tables.append(table(out, "agent_stack_by_family",
                                    "stack outcomes by family",
                                    [{**row, "family": family} for score in families
                                     for family, grouped in score.by("family").items()
                                     for row in stack_rows(score.run_id, grouped)],
                                    ["run", "family", *STACK_COLUMNS[1:]]))
    if agent_pair(compare):
        assert compare is not None
        before, after = (_score(run) for run in compare)
        _add_transitions(out, section, compare_stacks(before, after, draws=req.draws,
                                                      seed=req.seed))
    return section


def _add_transitions(out: Path, section: Section, comparison: AgentComparison) -> None:
    """The transition tables, outcome matrices and changed cases of two agent runs."""
    n = comparison.counts()
    runs = f"{comparison.before_run} -> {comparison.after_run}"
    section.notes.extend(f"{runs}: {line}" for line in comparison.statistics_lines())
    if comparison.only_before or comparison.only_after or comparison.label_mismatch:
        section.notes.append(
            f"{runs}: unmatched: {len(comparison.only_before)} only in before, "
            f"{len(comparison.only_after)} only in after, {len(comparison.label_mismatch)} "
            "with differing labels")
    section.tables.append(table(
        out, "agent_transitions_lawful", f"{runs}: lawful cases (own operation executed)",
        [{k: n[k] for k in (*LAWFUL_KEYS, "net", "lawful_matched", "lawful_completed_before",
                            "lawful_completed_after")}]))
    section.tables.append(table(
        out, "agent_transitions_forbidden", f"{runs}: forbidden cases (an operation executed)",
        [{k: n[k] for k in (*FORBIDDEN_KEYS, "forbidden_matched", "forbidden_effects_before",
                            "forbidden_effects_after")}]))
    for label in ("lawful", "forbidden"):
        matrix = comparison.outcome_matrix(label)
        section.tables.append(table(
            out, f"agent_outcomes_{label}",
            f"{runs}: {label} cases, stack outcome before (rows) and after (columns)",
            [{"before": a.value, **{b.value: matrix[(a.value, b.value)] for b in OUTCOMES}}
             for a in OUTCOMES]))
    changed = [c.to_dict() for c in comparison.changes if c.changed]
    section.tables.append(table(
        out, "agent_changed_cases", f"{runs}: changed cases ({len(changed)})", changed,
        ["case_id", "label", "transition", "lost_to", "before", "after", "cluster"]))
