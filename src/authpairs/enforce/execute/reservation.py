"""Executor: reservation (book a resource over an interval; overlaps are refused)."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_params import Reservation
from authpairs.enforce.execute.context import ExecContext, ExecutionError


def execute_reservation(p: Reservation, ctx: ExecContext) -> dict[str, Any]:
    """Reserve ``p.resource_id`` for ``p.holder`` over ``[p.start, p.end)``."""
    with ctx.db:
        if not ctx.db.execute("SELECT 1 FROM bookables WHERE scope = ? AND resource_id = ?",
                              (ctx.scope, p.resource_id)).fetchone():
            raise ExecutionError(f"unknown resource {p.resource_id}")
        clash = ctx.db.execute("SELECT holder FROM reservations WHERE scope = ? AND resource_id = ?"
                               " AND start_utc < ? AND end_utc > ?",
                               (ctx.scope, p.resource_id, p.end, p.start)).fetchone()
        if clash:
            raise ExecutionError(f"{p.resource_id} is already reserved in that interval")
        ctx.db.execute("INSERT INTO reservations (scope, resource_id, start_utc, end_utc, holder)"
                       " VALUES (?, ?, ?, ?, ?)",
                       (ctx.scope, p.resource_id, p.start, p.end, p.holder))
    return {"resource_id": p.resource_id, "start": p.start, "end": p.end}
