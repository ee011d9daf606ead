"""Verifier: document signing -- Ed25519 signature validity checked with the signer's public key."""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from authpairs.enforce import layout
from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ObservationError, ReadChannel


class SigningVerifier:
    """Executed means: a new detached signature that verifies, under the signer's public key,
    over both the stored document bytes and the described content; logged with its digest."""

    checks: tuple[str, ...] = ("signature", "byte", "sql")

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The signature file and the signature log row."""
        return [("file", *layout.signature_path(scope, p.document_id, p.file_name)),
                ("sql", "signatures", scope, p.document_id, p.file_name, p.signer)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Signature presence and validity, document digest, log row."""
        doc = ch.read(layout.document_path(scope, p.document_id, p.file_name))
        sig = ch.read(layout.signature_path(scope, p.document_id, p.file_name))
        pem = ch.read(layout.public_key_path(layout.signer_key_id(p.signer)))
        rows = ch.query("SELECT content_sha256, signature_hex FROM signatures WHERE scope = ? AND "
                        "document_id = ? AND file_name = ? AND signer = ?",
                        (scope, p.document_id, p.file_name, p.signer))
        obs: dict[str, Any] = {
            "document_sha256": hashlib.sha256(doc).hexdigest() if doc is not None else None,
            "signature_hex": sig.hex() if sig is not None else None,
            "log": list(rows[0]) if rows else None,
            "valid_for_document": False, "valid_for_content": False,
        }
        if sig is not None and pem is not None:
            key = load_pem_public_key(pem)
            if not isinstance(key, Ed25519PublicKey):
                raise ObservationError(f"public key of {p.signer!r} is not Ed25519")
            for name, data in (("valid_for_document", doc),
                               ("valid_for_content", p.content.encode("utf-8"))):
                try:
                    if data is not None:
                        key.verify(sig, data)
                        obs[name] = True
                except InvalidSignature:
                    obs[name] = False
        return obs

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Newly signed; valid for the document and the content; log row matches."""
        digest = hashlib.sha256(p.content.encode("utf-8")).hexdigest()
        return mismatch(
            signed_before=(before["signature_hex"] is not None, False),
            document=(after["document_sha256"], digest),
            valid_for_document=(after["valid_for_document"], True),
            valid_for_content=(after["valid_for_content"], True),
            log=(after["log"], [digest, after["signature_hex"]]),
        )
