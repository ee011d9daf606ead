"""Executor: byte delivery (write the content into the recipient's outbox)."""

from __future__ import annotations

import hashlib
from typing import Any

from authpairs.cases.effect_params import ByteDelivery
from authpairs.enforce import layout
from authpairs.enforce.execute.context import ExecContext
from authpairs.enforce.safepath import write_file


def execute_byte_delivery(p: ByteDelivery, ctx: ExecContext) -> dict[str, Any]:
    """Write ``p.content`` (UTF-8) to ``outbox/<scope>/<recipient>/<file_name>``."""
    data = p.content.encode("utf-8")
    write_file(ctx.root, layout.outbox_path(ctx.scope, p.recipient, p.file_name), data)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
