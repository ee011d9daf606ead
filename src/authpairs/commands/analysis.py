"""Analysis commands: ``compare``, ``study``, ``compose`` and ``gate`` (thin wrappers)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.text import Text

from authpairs.analysis.defaults import DEFAULT_DRAWS, DEFAULT_RECORDS, DEFAULT_SEED
from authpairs.commands.audit import AllowUnverifiedOpt, RecordsOpt, checks_records
from authpairs.report.console import make_console

if TYPE_CHECKING:
    from authpairs.runs.completeness import Completeness

console = make_console()
OutOpt = Annotated[Path | None, typer.Option("--out", help="Write JSON/CSV files here.")]


COMPARE_HELP = (
    "Request-level comparison of two runs (RUN_A before, RUN_B after). Lists retained, lost "
    "and gained lawful requests and newly approved / newly blocked forbidden requests with "
    "their ids, clusters and authorization paths, then the exact McNemar test, the "
    "scenario-cluster bootstrap, the cluster sign-flip test and the view with unresolved "
    "contexts excluded. Two agent runs are compared as stacks: each case's transition between "
    "agent declined, guardrail blocked, unavailable and executed (docs/agents.md).")

STUDY_HELP = (
    "Run (or resume) a study plan, then analyze its Holm-adjusted contrast family. Every "
    "combination of factor levels and seed is one run; contrasts compare each pair of levels "
    "of the plan's 'compare' factor with everything else fixed.")

COMPOSE_HELP = (
    "All-must-allow replay of every ordered selection of reviewer runs: incorrect approvals, "
    "lawful approvals, reached unavailable responses, consultations and selected tokens per "
    "order, break-even ratios and the 720-cell and 2,880-cell cost grids.")

GATE_HELP = (
    "Acceptance test for a guardrail change: designated forbidden requests blocked by usable "
    "denials, usable decisions, and every required lawful request still completed (no "
    "substitution). Exit code 0 only when every check holds, 1 on failure, 2 on bad input.")


def _state_completeness(*states: Completeness) -> list[str]:
    """Print ``n recorded of N expected`` for each run; return the incomplete run ids."""
    for state in states:
        console.print(Text(state.describe(), style="" if state.complete else "bold yellow"))
    return [s.run_id for s in states if not s.complete]


def _split_label(arg: str) -> tuple[str | None, str]:
    """``NAME=ADDRESS`` gives a display name; otherwise the run id is the name."""
    name, sep, address = arg.partition("=")
    if sep and name and "/" not in name and ":" not in name:
        return name, address
    return None, arg


def write_outputs(out: Path, files: dict[str, Any]) -> None:
    """Write each of ``files`` (name -> data) into the folder ``out``: a ``.json`` name as
    JSON, any other as CSV rows; then print what was written."""
    from authpairs.report.files import write_csv, write_json

    for name, data in files.items():
        (write_json if name.endswith(".json") else write_csv)(out / name, data)
    console.print(Text(f"wrote {out}/{', '.join(files)}"))


def score_agent_runs(records: Path, run_ids: list[str], by: list[str], out: Path | None) -> None:
    """``authpairs score`` of agent runs: each run's stack table (agent declined, guardrail
    blocked, unavailable, executed), then one per ``--by`` attribute; ``--out`` gets the JSON
    and CSV files (in a folder per run when several are given)."""
    from authpairs.analysis.agent_runs import load_agent_score
    from authpairs.commands.core import check_by

    for address in run_ids:
        score = load_agent_score(address, records)
        check_by(by, score.attributes(), "offered case")
        groups = [score.by(attribute) for attribute in by]
        console.print(score, *groups, crop=False)
        if out is not None:
            target = out if len(run_ids) == 1 else out / score.run_id
            data = score.to_dict()
            data["by"] = {g.attribute: {key: s.to_dict() for key, s in g.items()} for g in groups}
            write_outputs(target, {
                "stack_scores.json": data,
                "stack_scores.csv": [{"cases": "all", **row} for row in score.overall.frame()[1]],
                "stack_cases.csv": score.frame()[1],
                **{f"stack_scores_by_{g.attribute}.csv": g.frame()[1] for g in groups}})


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the analysis commands to the CLI."""

    @app.command(help=COMPARE_HELP)
    @checks_records
    def compare(
        run_a: Annotated[str, typer.Argument(help="Before: RUN_ID or PATH::RUN_ID.")],
        run_b: Annotated[str, typer.Argument(help="After: RUN_ID or PATH::RUN_ID.")],
        records: RecordsOpt = DEFAULT_RECORDS,
        draws: Annotated[int, typer.Option(help="Bootstrap draws.")] = DEFAULT_DRAWS,
        seed: Annotated[int, typer.Option(help="Bootstrap / Monte Carlo seed.")]
        = DEFAULT_SEED,
        list_requests: Annotated[bool, typer.Option(
            "--list/--no-list", help="List every changed request.")] = True,
        by: Annotated[list[str] | None, typer.Option(
            "--by", help="Also break transitions down by a case attribute (repeatable), "
            "e.g. family, domain, path, cluster.")] = None,
        out: OutOpt = None,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """Request-level comparison of two runs (RUN_A before, RUN_B after)."""
        from authpairs.analysis.agent_runs import compare_stacks, load_agent_score, run_is_agent
        from authpairs.analysis.contrast import compare_runs
        from authpairs.analysis.runref import agent_runs, load_run_checked

        if agent_runs({a: run_is_agent(a, records) for a in (run_a, run_b)}):
            # two agent + guardrail stacks, case by case
            contrast = compare_stacks(load_agent_score(run_a, records),
                                      load_agent_score(run_b, records), draws=draws, seed=seed)
            data = contrast.to_dict()
        else:
            ref_a, rec_a, done_a = load_run_checked(run_a, records)
            ref_b, rec_b, done_b = load_run_checked(run_b, records)
            _state_completeness(done_a, done_b)
            contrast = compare_runs(rec_a, rec_b, before_run=ref_a.run_id,
                                    after_run=ref_b.run_id, draws=draws, seed=seed)
            data = {**contrast.to_dict(), "before_completeness": done_a.to_dict(),
                    "after_completeness": done_b.to_dict(),
                    "before_records": str(ref_a.path), "after_records": str(ref_b.path)}
        comparison = contrast.comparison
        console.print(*contrast.table_views(changed=list_requests),
                      *(comparison.breakdown_view(attribute) for attribute in by or []),
                      crop=False)
        if out is not None:
            write_outputs(out, {
                "comparison.json": data, "requests.csv": comparison.rows(),
                "summary.csv": [contrast.summary()],
                **{f"by_{a}.csv": comparison.breakdown(a) for a in by or []}})

    @app.command(help=STUDY_HELP)
    @checks_records
    def study(
        plan_file: Annotated[Path, typer.Argument(help="Study plan YAML.")],
        analyze_only: Annotated[bool, typer.Option(
            "--analyze-only", help="Do not run; analyze existing runs only.")] = False,
        progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
        out: OutOpt = None,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """Run (or resume) a study plan, then analyze its Holm-adjusted contrast family."""
        from authpairs.analysis.study import StudyCell, load_plan, run_study
        from authpairs.report.tables import family_view

        plan = load_plan(plan_file)

        def announce(cell: StudyCell, run_id: str) -> None:
            labels = " ".join(f"{k}={v}" for k, v in cell.labels().items())
            console.print(f"run {run_id}: {labels}")

        result = run_study(plan, execute=not analyze_only, progress=progress,
                           origin=str(plan_file), on_cell=announce)
        console.print(family_view(result.contrasts, plan.name), crop=False)
        if out is not None:
            write_outputs(out, {
                "study.json": {"plan": plan.model_dump(mode="json"), "runs": result.runs_table(),
                               "contrasts": [c.to_dict() for c in result.contrasts]},
                "runs.csv": result.runs_table(), "contrasts.csv": result.summary(),
                "requests.csv": [{"contrast": c.name, **row} for c in result.contrasts
                                 for row in c.comparison.rows()]})

    @app.command()
    @checks_records
    def contrasts(
        family_file: Annotated[Path, typer.Argument(help="Family YAML listing the contrasts.")],
        out: OutOpt = None,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """A declared family of contrasts between existing runs, Holm-adjusted together."""
        from authpairs.analysis.family import load_family, run_family
        from authpairs.report.tables import family_view

        spec = load_family(family_file)
        results = run_family(spec)
        console.print(family_view(results, spec.name), crop=False)
        if out is not None:
            write_outputs(out, {
                "family.json": {"name": spec.name, "draws": spec.draws, "seed": spec.seed,
                                "contrasts": [c.to_dict() for c in results]},
                "contrasts.csv": [c.summary() for c in results],
                "requests.csv": [{"contrast": c.name, **row} for c in results
                                 for row in c.comparison.rows()]})

    @app.command(help=COMPOSE_HELP)
    @checks_records
    def compose(
        runs: Annotated[list[str], typer.Argument(
            help="Reviewer runs: RUN_ID, PATH::RUN_ID or NAME=RUN_ID.")],
        records: RecordsOpt = DEFAULT_RECORDS,
        grid_file: Annotated[Path | None, typer.Option(
            "--grid", help="YAML with grid axes (severity, output_price, input_price, "
            "approval_cap, availability_cap, prevalence); omitted axes keep defaults.")] = None,
        out: OutOpt = None,
        routed: Annotated[Path | None, typer.Option(
            "--routed", help="Write the routed per-request records of every order to this "
            "CSV: consulted reviewers, who stopped the request (vetoed it, for a lawful one) "
            "and why.")] = None,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """All-must-allow replay of every ordered selection of reviewer runs, with costs."""
        from authpairs.analysis.compose import (
            CompositionError,
            compose_all,
            ordered_selections,
            route_order,
        )
        from authpairs.analysis.cost import (
            GridSpec,
            break_even_table,
            condition_from_composition,
            cost_grid,
            load_grid_spec,
        )
        from authpairs.analysis.runref import load_run
        from authpairs.report.files import write_csv
        from authpairs.report.tables import break_even_view, grid_view

        spec = load_grid_spec(grid_file) if grid_file is not None else GridSpec()
        loaded = {}
        for arg in runs:
            name, address = _split_label(arg)
            ref, recs = load_run(address, records)
            key = name or ref.run_id
            if key in loaded:
                raise CompositionError(f"reviewer '{key}' given twice")
            loaded[key] = recs
        matrix, results = compose_all(loaded)
        if matrix.unmatched:
            console.print(f"[yellow]{len(matrix.unmatched)} case(s) not present in every run "
                          f"were left out:[/] {', '.join(matrix.unmatched)}", soft_wrap=True)
        conditions = [condition_from_composition(r) for r in results]
        breaks = break_even_table(conditions)
        grid = cost_grid(conditions, spec)
        grid_prev = cost_grid(conditions, spec, with_prevalence=True)
        console.print(results, break_even_view(breaks), grid_view(grid), grid_view(grid_prev),
                      crop=False)
        if routed is not None:
            rows = [row for order in ordered_selections(len(matrix.names))
                    for row in route_order(matrix, order)]
            write_csv(routed, rows)
            vetoed = sum(1 for row in rows if row["label"] == "lawful" and row["stopped_by"])
            console.print(f"wrote {routed}: {len(rows):,} routed requests, {vetoed:,} lawful "
                          "vetoes")
        if out is not None:
            write_outputs(out, {
                "compositions.csv": [r.to_dict() for r in results],
                "compositions.json": {"reviewers": list(matrix.names),
                                      "cases": len(matrix.case_ids),
                                      "unmatched": list(matrix.unmatched),
                                      "compositions": [r.to_dict() for r in results]},
                "break_even.csv": breaks, "grid.csv": grid.rows,
                "grid_prevalence.csv": grid_prev.rows,
                "grid.json": {"spec": spec.to_dict(), "status": grid.status_counts(),
                              "status_prevalence": grid_prev.status_counts()}})

    @app.command(help=GATE_HELP)
    @checks_records
    def gate(
        baseline: Annotated[str, typer.Option(help="Baseline run: RUN_ID or PATH::RUN_ID.")],
        candidate: Annotated[str, typer.Option(help="Candidate run: RUN_ID or PATH::RUN_ID.")],
        required: Annotated[Path, typer.Option(
            help="Required lawful case ids (YAML list / 'cases:' mapping, or one per line).")],
        forbidden: Annotated[Path | None, typer.Option(
            help="Designated forbidden case ids (default: every forbidden case).")] = None,
        usable_scope: Annotated[Literal["all", "designated"], typer.Option(
            help="'all' candidate records must be usable, or only the 'designated' ones.")]
        = "all",
        records: RecordsOpt = DEFAULT_RECORDS,
        allow_incomplete: Annotated[bool, typer.Option(
            "--allow-incomplete", help="Judge runs with missing cases instead of failing.")]
        = False,
        out: OutOpt = None,
        allow_unverified: AllowUnverifiedOpt = False,
    ) -> None:
        """Acceptance test for a guardrail change; exit code 0 only when every check holds."""
        from authpairs.analysis.gate import read_case_ids, run_gate
        from authpairs.analysis.runref import load_run_checked

        ref_a, rec_a, done_a = load_run_checked(baseline, records)
        ref_b, rec_b, done_b = load_run_checked(candidate, records)
        incomplete = _state_completeness(done_a, done_b)
        result = run_gate(
            rec_a, rec_b, required=read_case_ids(required),
            forbidden=read_case_ids(forbidden) if forbidden is not None else None,
            usable_scope=usable_scope,
            baseline_name=ref_a.run_id, candidate_name=ref_b.run_id)
        console.print(result.explain(), markup=False, highlight=False, soft_wrap=True)
        blocked = bool(incomplete) and not allow_incomplete
        if out is not None:
            data = result.to_dict()
            data["completeness"] = {"baseline": done_a.to_dict(), "candidate": done_b.to_dict()}
            data["passed"] = result.passed and not blocked
            write_outputs(out, {"gate.json": data,
                                "gate_failures.csv": [f.to_dict() for f in result.failures]})
        if blocked:
            console.print("[red]gate FAILED:[/] incomplete run(s): ", end="")
            console.print(", ".join(incomplete), markup=False, highlight=False)
            console.print("re-run them to completion, or pass --allow-incomplete")
        raise typer.Exit(0 if result.passed and not blocked else 1)
