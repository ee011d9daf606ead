"""The executors of the built-in effect types: one function per type, each performing the real
local operation (parameterized SQL, files through :mod:`authpairs.enforce.safepath`, signatures)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from authpairs.cases import effect_params
from authpairs.enforce import layout
from authpairs.enforce.execute.context import ExecContext, ExecutionError
from authpairs.enforce.safepath import read_file, write_file


def execute_ledger_transfer(p: effect_params.LedgerTransfer, ctx: ExecContext) -> dict[str, Any]:
    """Move ``p.amount`` from ``p.from_account`` to ``p.to_account`` in one transaction."""
    cents = effect_params.to_cents(p.amount)
    with ctx.db:
        rows = dict(ctx.db.execute(
            "SELECT account_id, balance_cents FROM accounts WHERE scope = ? "
            "AND account_id IN (?, ?) AND currency = ?",
            (ctx.scope, p.from_account, p.to_account, p.currency)).fetchall())
        if p.from_account not in rows or p.to_account not in rows:
            raise ExecutionError(f"no {p.currency} account pair {p.from_account} -> {p.to_account}")
        if rows[p.from_account] < cents:
            raise ExecutionError(f"insufficient funds in {p.from_account}")
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents - ? "
                       "WHERE scope = ? AND account_id = ?", (cents, ctx.scope, p.from_account))
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents + ? "
                       "WHERE scope = ? AND account_id = ?", (cents, ctx.scope, p.to_account))
        (last,) = ctx.db.execute("SELECT COALESCE(MAX(transfer_no), 0) FROM transfers "
                                 "WHERE scope = ?", (ctx.scope,)).fetchone()
        ctx.db.execute("INSERT INTO transfers (scope, transfer_no, from_account, to_account, "
                       "amount_cents, currency) VALUES (?, ?, ?, ?, ?, ?)",
                       (ctx.scope, last + 1, p.from_account, p.to_account, cents, p.currency))
    return {"transfer_no": last + 1, "amount_cents": cents}


def execute_order_creation(p: effect_params.OrderCreation, ctx: ExecContext) -> dict[str, Any]:
    """Create order ``p.order_id``; an existing order id is refused."""
    unit = effect_params.to_cents(p.unit_price)
    total = unit * p.quantity
    with ctx.db:
        if ctx.db.execute("SELECT 1 FROM orders WHERE scope = ? AND order_id = ?",
                          (ctx.scope, p.order_id)).fetchone():
            raise ExecutionError(f"order {p.order_id} already exists")
        ctx.db.execute("INSERT INTO orders (scope, order_id, vendor, item, quantity, "
                       "unit_price_cents, currency, total_cents) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (ctx.scope, p.order_id, p.vendor, p.item, p.quantity, unit, p.currency,
                        total))
    return {"order_id": p.order_id, "total_cents": total}


def execute_record_update(p: effect_params.RecordUpdate, ctx: ExecContext) -> dict[str, Any]:
    """Set ``p.field`` of ``p.record_id`` to ``p.value`` (parameterized SQL)."""
    with ctx.db:
        cur = ctx.db.execute("UPDATE records SET value = ?, rev = rev + 1 "
                             "WHERE scope = ? AND record_id = ? AND field = ?",
                             (p.value, ctx.scope, p.record_id, p.field))
        if cur.rowcount != 1:
            raise ExecutionError(f"record {p.record_id} has no field {p.field!r}")
    return {"record_id": p.record_id, "field": p.field}


def execute_byte_delivery(p: effect_params.ByteDelivery, ctx: ExecContext) -> dict[str, Any]:
    """Write ``p.content`` (UTF-8) to ``outbox/<scope>/<recipient>/<file_name>``."""
    data = p.content.encode("utf-8")
    write_file(ctx.root, layout.outbox_path(ctx.scope, p.recipient, p.file_name), data)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def execute_deployment(p: effect_params.Deployment, ctx: ExecContext) -> dict[str, Any]:
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


def execute_document_signing(p: effect_params.DocumentSigning, ctx: ExecContext) -> dict[str, Any]:
    """Sign the stored document bytes as ``p.signer``; refuse if they differ from ``p.content``."""
    doc = read_file(ctx.root, layout.document_path(ctx.scope, p.document_id, p.file_name),
                    1 << 22)
    if doc != p.content.encode("utf-8"):
        raise ExecutionError(f"document {p.document_id}/{p.file_name} does not hold the content"
                             " to be signed")
    row = ctx.db.execute("SELECT key_id FROM signers WHERE signer = ?", (p.signer,)).fetchone()
    if row is None:
        raise ExecutionError(f"no signing key for {p.signer!r}")
    pem = read_file(ctx.root, layout.private_key_path(row[0]), 65536)
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ExecutionError("signer key is not Ed25519")
    signature = key.sign(doc)
    write_file(ctx.root, layout.signature_path(ctx.scope, p.document_id, p.file_name), signature)
    digest = hashlib.sha256(doc).hexdigest()
    with ctx.db:
        ctx.db.execute("INSERT OR REPLACE INTO signatures (scope, document_id, file_name, signer, "
                       "content_sha256, signature_hex) VALUES (?, ?, ?, ?, ?, ?)",
                       (ctx.scope, p.document_id, p.file_name, p.signer, digest,
                        signature.hex()))
    return {"key_id": row[0], "content_sha256": digest, "signature_hex": signature.hex()}


def execute_reservation(p: effect_params.Reservation, ctx: ExecContext) -> dict[str, Any]:
    """Reserve ``p.resource_id`` for ``p.holder`` over ``[p.start, p.end)``."""
    with ctx.db:
        if not ctx.db.execute("SELECT 1 FROM bookables WHERE scope = ? AND resource_id = ?",
                              (ctx.scope, p.resource_id)).fetchone():
            raise ExecutionError(f"unknown resource {p.resource_id}")
        clash = ctx.db.execute("SELECT holder FROM reservations WHERE scope = ? AND resource_id = ?"
                               " AND start_utc < ? AND end_utc > ?",
                               (ctx.scope, p.resource_id, p.end, p.start)).fetchone()
        if clash:
            raise ExecutionError(f"{p.resource_id} is already reserved in that interval")
        ctx.db.execute("INSERT INTO reservations (scope, resource_id, start_utc, end_utc, holder)"
                       " VALUES (?, ?, ?, ?, ?)",
                       (ctx.scope, p.resource_id, p.start, p.end, p.holder))
    return {"resource_id": p.resource_id, "start": p.start, "end": p.end}


def execute_analysis_inclusion(p: effect_params.AnalysisInclusion,
                               ctx: ExecContext) -> dict[str, Any]:
    """Insert ``p.subject_id`` into ``p.dataset``; a subject already included is refused."""
    with ctx.db:
        if not ctx.db.execute("SELECT 1 FROM datasets WHERE scope = ? AND dataset = ?",
                              (ctx.scope, p.dataset)).fetchone():
            raise ExecutionError(f"unknown dataset {p.dataset}")
        if ctx.db.execute("SELECT 1 FROM dataset_members WHERE scope = ? AND dataset = ? "
                          "AND subject_id = ?", (ctx.scope, p.dataset, p.subject_id)).fetchone():
            raise ExecutionError(f"{p.subject_id} is already included in {p.dataset}")
        ctx.db.execute("INSERT INTO dataset_members (scope, dataset, subject_id) VALUES (?, ?, ?)",
                       (ctx.scope, p.dataset, p.subject_id))
    return {"dataset": p.dataset, "subject_id": p.subject_id}


def execute_download_delivery(p: effect_params.DownloadDelivery,
                              ctx: ExecContext) -> dict[str, Any]:
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
