"""Verifier: reservation -- the resource's reservation rows via its own SQLite connection."""

from __future__ import annotations

from typing import Any

from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class ReservationVerifier:
    """Executed means: exactly one new reservation with the described holder and interval."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The resource's reservations."""
        return [("sql", "reservations", scope, p.resource_id)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """All reservations of the resource."""
        rows = ch.query("SELECT start_utc, end_utc, holder FROM reservations WHERE scope = ? "
                        "AND resource_id = ? ORDER BY start_utc", (scope, p.resource_id))
        return {"reservations": [list(r) for r in rows]}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """After = before plus the one described reservation."""
        expected = sorted([*before["reservations"], [p.start, p.end, p.holder]])
        return mismatch(reservations=(sorted(after["reservations"]), expected))
