"""Verifier: download delivery -- the download fetched over HTTP and its log row."""

from __future__ import annotations

import hashlib
from typing import Any

from authpairs.enforce import layout
from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class DownloadVerifier:
    """Executed means: the URL was 404 and now serves the complete content, logged as complete."""

    checks: tuple[str, ...] = ("live-site", "byte", "sql")

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The published file and its log row."""
        return [("file", *layout.download_path(scope, p.recipient, p.file_name)),
                ("sql", "downloads", scope, p.recipient, p.file_name)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """HTTP status, length and SHA-256 of the served body; the log row."""
        resp = ch.get(layout.download_url_path(scope, p.recipient, p.file_name))
        http: dict[str, Any] = {"status": resp.status_code}
        if resp.status_code == 200:
            http |= {"content_length": int(resp.headers.get("content-length", -1)),
                     "size": len(resp.content), "sha256": hashlib.sha256(resp.content).hexdigest()}
        rows = ch.query("SELECT size, sha256, status FROM downloads WHERE scope = ? AND "
                        "recipient = ? AND file_name = ?", (scope, p.recipient, p.file_name))
        return {"http": http, "log": list(rows[0]) if rows else None}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Newly served, complete (length and digest of the content) and logged as complete."""
        data = p.content.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        return mismatch(
            status_before=(before["http"]["status"], 404),
            http=(after["http"], {"status": 200, "content_length": len(data), "size": len(data),
                                  "sha256": digest}),
            log=(after["log"], [len(data), digest, "complete"]),
        )
