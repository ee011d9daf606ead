"""Verifier: order creation -- the order row, read back with its own SQLite connection."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class OrderVerifier:
    """Executed means: the order did not exist and now exists with exactly the described line."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The order row."""
        return [("sql", "orders", scope, p.order_id)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """The order row, or None."""
        rows = ch.query("SELECT vendor, item, quantity, unit_price_cents, currency, total_cents "
                        "FROM orders WHERE scope = ? AND order_id = ?", (scope, p.order_id))
        return {"order": list(rows[0]) if rows else None}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """A new order with vendor, item, quantity, unit price, currency and total as described."""
        unit = int(Decimal(p.unit_price) * 100)
        return mismatch(
            existed_before=(before["order"] is not None, False),
            order=(after["order"], [p.vendor, p.item, p.quantity, unit, p.currency,
                                    unit * p.quantity]),
        )
