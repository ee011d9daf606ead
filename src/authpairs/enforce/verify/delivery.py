"""Verifier: byte delivery -- the delivered file's bytes and SHA-256, read from disk."""

from __future__ import annotations

import hashlib
from typing import Any

from authpairs.enforce import layout
from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


class DeliveryVerifier:
    """Executed means: the outbox file was absent and now holds exactly the content bytes."""

    checks: tuple[str, ...] = ("byte",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The delivered file."""
        return [("file", *layout.outbox_path(scope, p.recipient, p.file_name))]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Existence, size and SHA-256 of the outbox file."""
        return {"file": ch.file_state(layout.outbox_path(scope, p.recipient, p.file_name))}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Newly present with the content's size and SHA-256."""
        data = p.content.encode("utf-8")
        return mismatch(
            existed_before=(before["file"]["exists"], False),
            file=(after["file"], {"exists": True, "size": len(data),
                                  "sha256": hashlib.sha256(data).hexdigest()}),
        )
