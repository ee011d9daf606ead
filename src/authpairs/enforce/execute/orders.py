"""Executor: order creation (insert one purchase order row)."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_params import OrderCreation, to_cents
from authpairs.enforce.execute.context import ExecContext, ExecutionError


def execute_order_creation(p: OrderCreation, ctx: ExecContext) -> dict[str, Any]:
    """Create order ``p.order_id``; an existing order id is refused."""
    unit = to_cents(p.unit_price)
    total = unit * p.quantity
    with ctx.db:
        if ctx.db.execute("SELECT 1 FROM orders WHERE scope = ? AND order_id = ?",
                          (ctx.scope, p.order_id)).fetchone():
            raise ExecutionError(f"order {p.order_id} already exists")
        ctx.db.execute("INSERT INTO orders (scope, order_id, vendor, item, quantity, "
                       "unit_price_cents, currency, total_cents) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (ctx.scope, p.order_id, p.vendor, p.item, p.quantity, unit, p.currency,
                        total))
    return {"order_id": p.order_id, "total_cents": total}
