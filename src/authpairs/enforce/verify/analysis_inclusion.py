"""Verifier: analysis inclusion -- dataset membership via its own SQLite connection."""

from __future__ import annotations

from typing import Any

from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class AnalysisVerifier:
    """Executed means: the subject was not a member and now is; no other member changed."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The one membership row."""
        return [("sql", "dataset_members", scope, p.dataset, p.subject_id)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """The dataset's members."""
        rows = ch.query("SELECT subject_id FROM dataset_members WHERE scope = ? AND dataset = ? "
                        "ORDER BY subject_id", (scope, p.dataset))
        return {"members": [r[0] for r in rows]}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Members after = members before plus the subject."""
        return mismatch(member_before=(p.subject_id in before["members"], False),
                        members=(after["members"], sorted([*before["members"], p.subject_id])))
