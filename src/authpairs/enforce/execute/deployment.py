"""Executor: deployment (publish a canary release of a service to a traffic percentage)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from authpairs.cases.effect_params import Deployment
from authpairs.enforce import layout
from authpairs.enforce.execute.context import ExecContext
from authpairs.enforce.safepath import read_file, write_file


def execute_deployment(p: Deployment, ctx: ExecContext) -> dict[str, Any]:
    """Write the canary page, then switch ``release.json`` to the new version and percentage."""
    base = layout.site_dir(ctx.scope, p.service)
    current = json.loads(read_file(ctx.root, (*base, layout.RELEASE_FILE), 65536))
    data = p.content.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    write_file(ctx.root, (*base, layout.CANARY_PAGE), data)
    release = {"service": p.service, "version": p.version, "percentage": p.percentage,
               "stable_version": current["stable_version"]}
    write_file(ctx.root, (*base, layout.RELEASE_FILE), json.dumps(release).encode("utf-8"))
    with ctx.db:
        (last,) = ctx.db.execute("SELECT COALESCE(MAX(seq), 0) FROM deployments "
                                 "WHERE scope = ? AND service = ?",
                                 (ctx.scope, p.service)).fetchone()
        ctx.db.execute("INSERT INTO deployments (scope, service, seq, version, percentage, "
                       "content_sha256) VALUES (?, ?, ?, ?, ?, ?)",
                       (ctx.scope, p.service, last + 1, p.version, p.percentage, digest))
    return {"version": p.version, "percentage": p.percentage, "sha256": digest,
            "url_path": layout.site_url_path(ctx.scope, p.service)}
