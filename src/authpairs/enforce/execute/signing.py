"""Executor: document signing (detached Ed25519 signature with the signer's private key)."""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from authpairs.cases.effect_params import DocumentSigning
from authpairs.enforce import layout
from authpairs.enforce.execute.context import ExecContext, ExecutionError
from authpairs.enforce.safepath import read_file, write_file


def execute_document_signing(p: DocumentSigning, ctx: ExecContext) -> dict[str, Any]:
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
