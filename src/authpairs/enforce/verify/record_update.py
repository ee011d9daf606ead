"""Verifier: record update -- the field's value and revision via its own SQLite connection."""

from __future__ import annotations

from typing import Any

from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class RecordVerifier:
    """Executed means: the field now holds the value and its revision went up by exactly one."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The one field of the record."""
        return [("sql", "records", scope, p.record_id, p.field)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Value and revision of the field, or None."""
        rows = ch.query("SELECT value, rev FROM records WHERE scope = ? AND record_id = ? "
                        "AND field = ?", (scope, p.record_id, p.field))
        return {"field": list(rows[0]) if rows else None}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Value equals the described value; revision is the old one plus one."""
        if before["field"] is None or after["field"] is None:
            return Judgement(False, f"record {p.record_id} field {p.field!r} does not exist")
        return mismatch(value=(after["field"][0], p.value),
                        revision=(after["field"][1], before["field"][1] + 1))
