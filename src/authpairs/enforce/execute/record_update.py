"""Executor: record update (set one field, bump its revision)."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_params import RecordUpdate
from authpairs.enforce.execute.context import ExecContext, ExecutionError


def execute_record_update(p: RecordUpdate, ctx: ExecContext) -> dict[str, Any]:
    """Set ``p.field`` of ``p.record_id`` to ``p.value`` (parameterized SQL)."""
    with ctx.db:
        cur = ctx.db.execute("UPDATE records SET value = ?, rev = rev + 1 "
                             "WHERE scope = ? AND record_id = ? AND field = ?",
                             (p.value, ctx.scope, p.record_id, p.field))
        if cur.rowcount != 1:
            raise ExecutionError(f"record {p.record_id} has no field {p.field!r}")
    return {"record_id": p.record_id, "field": p.field}
