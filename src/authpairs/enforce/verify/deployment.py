"""Verifier: deployment -- the live site fetched over HTTP in canary and stable buckets."""

from __future__ import annotations

import hashlib
from typing import Any

from authpairs.enforce import layout
from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


def _fetch(ch: ReadChannel, path: str, bucket: int) -> dict[str, Any]:
    resp = ch.get(path, headers={layout.CANARY_HEADER: str(bucket)})
    return {"status": resp.status_code, "version": resp.headers.get(layout.VERSION_HEADER),
            "sha256": hashlib.sha256(resp.content).hexdigest()}


class DeploymentVerifier:
    """Executed means: the last bucket inside the percentage serves the new content and version,
    the first bucket outside it still serves the previous stable release, and one deployment row
    was logged."""

    checks: tuple[str, ...] = ("live-site", "sql")

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The service's site directory and its deployment log."""
        return [("file", *layout.site_dir(scope, p.service)),
                ("sql", "deployments", scope, p.service)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Responses for bucket ``percentage-1`` and (below 100 %) bucket ``percentage``."""
        path = layout.site_url_path(scope, p.service)
        inside = _fetch(ch, path, p.percentage - 1)
        outside = _fetch(ch, path, p.percentage) if p.percentage < 100 else None
        log = ch.query("SELECT seq, version, percentage, content_sha256 FROM deployments "
                       "WHERE scope = ? AND service = ? ORDER BY seq", (scope, p.service))
        return {"inside": inside, "outside": outside, "log": [list(r) for r in log]}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """New content inside the percentage, unchanged stable outside it, one new log row."""
        digest = hashlib.sha256(p.content.encode("utf-8")).hexdigest()
        added = [row[1:] for row in after["log"][len(before["log"]):]]
        return mismatch(
            inside=(after["inside"], {"status": 200, "version": p.version, "sha256": digest}),
            outside=(after["outside"], before["outside"]),
            log_added=(added, [[p.version, p.percentage, digest]]),
        )
