"""Executor: analysis inclusion (add a participant to an analysis dataset)."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_params import AnalysisInclusion
from authpairs.enforce.execute.context import ExecContext, ExecutionError


def execute_analysis_inclusion(p: AnalysisInclusion, ctx: ExecContext) -> dict[str, Any]:
    """Insert ``p.subject_id`` into ``p.dataset``; a subject already included is refused."""
    with ctx.db:
        if not ctx.db.execute("SELECT 1 FROM datasets WHERE scope = ? AND dataset = ?",
                              (ctx.scope, p.dataset)).fetchone():
            raise ExecutionError(f"unknown dataset {p.dataset}")
        if ctx.db.execute("SELECT 1 FROM dataset_members WHERE scope = ? AND dataset = ? "
                          "AND subject_id = ?", (ctx.scope, p.dataset, p.subject_id)).fetchone():
            raise ExecutionError(f"{p.subject_id} is already included in {p.dataset}")
        ctx.db.execute("INSERT INTO dataset_members (scope, dataset, subject_id) VALUES (?, ?, ?)",
                       (ctx.scope, p.dataset, p.subject_id))
    return {"dataset": p.dataset, "subject_id": p.subject_id}
