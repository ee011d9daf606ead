"""Executor: download delivery (publish a complete file on the local HTTP server)."""

from __future__ import annotations

import hashlib
from typing import Any

from authpairs.cases.effect_params import DownloadDelivery
from authpairs.enforce import layout
from authpairs.enforce.execute.context import ExecContext
from authpairs.enforce.safepath import write_file


def execute_download_delivery(p: DownloadDelivery, ctx: ExecContext) -> dict[str, Any]:
    """Publish ``p.content`` at ``/downloads/<scope>/<recipient>/<file_name>`` and log it."""
    data = p.content.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    write_file(ctx.root, layout.download_path(ctx.scope, p.recipient, p.file_name), data)
    with ctx.db:
        ctx.db.execute("INSERT OR REPLACE INTO downloads (scope, recipient, file_name, size, "
                       "sha256, status) VALUES (?, ?, ?, ?, ?, 'complete')",
                       (ctx.scope, p.recipient, p.file_name, len(data), digest))
    return {"bytes": len(data), "sha256": digest,
            "url_path": layout.download_url_path(ctx.scope, p.recipient, p.file_name)}
