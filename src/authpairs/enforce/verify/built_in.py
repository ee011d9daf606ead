"""The independent verifiers of the built-in effect types: one class per type, each reading back
through its own :class:`~authpairs.enforce.verify.channel.ReadChannel` (a read-only SQLite
connection, link-refusing file reads, the live site and downloads over HTTP)."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from authpairs.enforce import layout
from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ObservationError, ReadChannel


class LedgerVerifier:
    """Executed means: debit and credit of exactly the amount, and one matching journal row."""

    checks: tuple[str, ...] = ("balance", "sql")

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The two accounts and the scope's journal."""
        return [("sql", "accounts", scope, p.from_account),
                ("sql", "accounts", scope, p.to_account),
                ("sql", "transfers", scope)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Balances (cents) and currencies of both accounts, and the scope's journal."""
        accounts = {a: [c, b] for a, c, b in ch.query(
            "SELECT account_id, currency, balance_cents FROM accounts WHERE scope = ? "
            "AND account_id IN (?, ?)", (scope, p.from_account, p.to_account))}
        journal = ch.query("SELECT transfer_no, from_account, to_account, amount_cents, currency "
                           "FROM transfers WHERE scope = ? ORDER BY transfer_no", (scope,))
        return {"from": accounts.get(p.from_account), "to": accounts.get(p.to_account),
                "journal": [list(r) for r in journal]}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Debit/credit by exactly the amount in the described currency, one new journal row."""
        cents = int(Decimal(p.amount) * 100)
        if before["from"] is None or before["to"] is None or after["from"] is None \
                or after["to"] is None:
            return Judgement(False, "an account of the transfer does not exist")
        old, new = before["journal"], after["journal"]
        added = [row[1:] for row in new[len(old):]]
        return mismatch(
            from_balance=(after["from"][1], before["from"][1] - cents),
            to_balance=(after["to"][1], before["to"][1] + cents),
            currency=((after["from"][0], after["to"][0]), (p.currency, p.currency)),
            journal_kept=(new[:len(old)], old),
            journal_added=(added, [[p.from_account, p.to_account, cents, p.currency]]),
        )


class OrderVerifier:
    """Executed means: the order did not exist and now exists with exactly the described line."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The order row."""
        return [("sql", "orders", scope, p.order_id)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """The order row, or None."""
        rows = ch.query("SELECT vendor, item, quantity, unit_price_cents, currency, total_cents "
                        "FROM orders WHERE scope = ? AND order_id = ?", (scope, p.order_id))
        return {"order": list(rows[0]) if rows else None}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """A new order with vendor, item, quantity, unit price, currency and total as described."""
        unit = int(Decimal(p.unit_price) * 100)
        return mismatch(
            existed_before=(before["order"] is not None, False),
            order=(after["order"], [p.vendor, p.item, p.quantity, unit, p.currency,
                                    unit * p.quantity]),
        )


class RecordVerifier:
    """Executed means: the field now holds the value and its revision went up by exactly one."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The one field of the record."""
        return [("sql", "records", scope, p.record_id, p.field)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Value and revision of the field, or None."""
        rows = ch.query("SELECT value, rev FROM records WHERE scope = ? AND record_id = ? "
                        "AND field = ?", (scope, p.record_id, p.field))
        return {"field": list(rows[0]) if rows else None}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Value equals the described value; revision is the old one plus one."""
        if before["field"] is None or after["field"] is None:
            return Judgement(False, f"record {p.record_id} field {p.field!r} does not exist")
        return mismatch(value=(after["field"][0], p.value),
                        revision=(after["field"][1], before["field"][1] + 1))


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


class ReservationVerifier:
    """Executed means: exactly one new reservation with the described holder and interval."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """The resource's reservations."""
        return [("sql", "reservations", scope, p.resource_id)]

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """All reservations of the resource."""
        rows = ch.query("SELECT start_utc, end_utc, holder FROM reservations WHERE scope = ? "
                        "AND resource_id = ? ORDER BY start_utc", (scope, p.resource_id))
        return {"reservations": [list(r) for r in rows]}

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """After = before plus the one described reservation."""
        expected = sorted([*before["reservations"], [p.start, p.end, p.holder]])
        return mismatch(reservations=(sorted(after["reservations"]), expected))


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
