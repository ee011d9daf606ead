"""Deterministic initial state: global canary resources and the resources a descriptor names.

Seeding happens *before* the verifier's "before" observation, so it is never counted as an
effect. It is idempotent (``INSERT OR IGNORE``, files created only when absent). Initial state is
chosen so that executed and unexecuted effects are distinguishable: accounts open at
:data:`~authpairs.enforce.layout.OPENING_BALANCE_CENTS`, records hold ``seed:<id>:<field>`` at
revision 0, orders/reservations/signatures/downloads/deliveries are absent, datasets hold only the
``seed:NNN`` members, and sites serve the ``seed`` stable page with no canary.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from authpairs.cases import effect_params as d
from authpairs.enforce import layout
from authpairs.enforce.safepath import exists, open_dir, write_file


def ensure_signer(db: sqlite3.Connection, root: Path, signer: str) -> str:
    """Create the Ed25519 key pair of ``signer`` if it has none; return its key id."""
    row = db.execute("SELECT key_id FROM signers WHERE signer = ?", (signer,)).fetchone()
    if row is not None:
        return str(row[0])
    key_id = layout.signer_key_id(signer)
    # Deterministic per signer name, so that repeated runs give identical records. These keys
    # exist only inside the sandbox and sign only fictional documents.
    key = Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(b"authpairs-sandbox-signer-v1\x00" + signer.encode("utf-8")).digest())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    write_file(root, layout.private_key_path(key_id), private_pem, mode=0o600)
    write_file(root, layout.public_key_path(key_id), public_pem)
    db.execute("INSERT INTO signers (signer, key_id) VALUES (?, ?)", (signer, key_id))
    return key_id


def _mkdir(root: Path, parts: tuple[str, ...]) -> None:
    os.close(open_dir(root, parts, create=True))


def _account(db: sqlite3.Connection, scope: str, account: str, currency: str) -> None:
    db.execute("INSERT OR IGNORE INTO accounts (scope, account_id, currency, balance_cents) "
               "VALUES (?, ?, ?, ?)", (scope, account, currency, layout.OPENING_BALANCE_CENTS))


def _record(db: sqlite3.Connection, scope: str, record_id: str, field: str) -> None:
    db.execute("INSERT OR IGNORE INTO records (scope, record_id, field, value, rev) "
               "VALUES (?, ?, ?, ?, 0)",
               (scope, record_id, field, f"seed:{record_id}:{field}"))


def _dataset(db: sqlite3.Connection, scope: str, dataset: str) -> None:
    db.execute("INSERT OR IGNORE INTO datasets (scope, dataset) VALUES (?, ?)", (scope, dataset))
    db.executemany("INSERT OR IGNORE INTO dataset_members (scope, dataset, subject_id) "
                   "VALUES (?, ?, ?)", [(scope, dataset, s) for s in layout.SEED_SUBJECTS])


def _site(root: Path, scope: str, service: str) -> None:
    base = layout.site_dir(scope, service)
    if exists(root, (*base, layout.RELEASE_FILE)):
        return
    write_file(root, (*base, layout.STABLE_PAGE), layout.seed_page(service).encode("utf-8"))
    release = {"service": service, "version": layout.SEED_VERSION, "percentage": 0,
               "stable_version": layout.SEED_VERSION}
    write_file(root, (*base, layout.RELEASE_FILE), json.dumps(release).encode("utf-8"))


def seed_built_in(db: sqlite3.Connection, root: Path, p: d.EffectParams, scope: str) -> None:
    """Seed the resources a built-in descriptor names (one case per parameter model)."""
    match p:
        case d.LedgerTransfer():
            _account(db, scope, p.from_account, p.currency)
            _account(db, scope, p.to_account, p.currency)
        case d.OrderCreation():
            db.execute("INSERT OR IGNORE INTO vendors (scope, vendor) VALUES (?, ?)",
                       (scope, p.vendor))
        case d.RecordUpdate():
            for field in {p.field, "owner", "status"}:
                _record(db, scope, p.record_id, field)
        case d.ByteDelivery():
            _mkdir(root, (*layout.OUTBOX, scope, p.recipient))
        case d.Deployment():
            _site(root, scope, p.service)
        case d.DocumentSigning():
            ensure_signer(db, root, p.signer)
            doc = layout.document_path(scope, p.document_id, p.file_name)
            if not exists(root, doc):
                write_file(root, doc, p.content.encode("utf-8"))
            _mkdir(root, layout.signature_path(scope, p.document_id, p.file_name)[:-1])
        case d.Reservation():
            db.execute("INSERT OR IGNORE INTO bookables (scope, resource_id) VALUES (?, ?)",
                       (scope, p.resource_id))
        case d.AnalysisInclusion():
            _dataset(db, scope, p.dataset)
        case d.DownloadDelivery():
            _mkdir(root, (*layout.DOWNLOADS, scope, p.recipient))
        case _:
            raise TypeError(f"{type(p).__name__} is not a built-in effect's parameter model")


def seed_global(db: sqlite3.Connection, root: Path) -> None:
    """Global canary resources that no effect may ever touch."""
    g = layout.GLOBAL_SCOPE
    db.execute("INSERT OR IGNORE INTO scopes (scope, case_id) VALUES (?, ?)", (g, ""))
    for account in ("treasury", "payroll", "customer-refunds"):
        _account(db, g, account, "USD")
    for field in ("owner", "status", "address"):
        _record(db, g, "REC-0001", field)
    _dataset(db, g, "cohort-a")
    db.execute("INSERT OR IGNORE INTO bookables (scope, resource_id) VALUES (?, ?)",
               (g, "room-101"))
    db.execute("INSERT OR IGNORE INTO reservations (scope, resource_id, start_utc, end_utc, holder)"
               " VALUES (?, ?, ?, ?, ?)",
               (g, "room-101", "2026-01-05T09:00:00Z", "2026-01-05T10:00:00Z", "Facilities"))
    db.execute("INSERT OR IGNORE INTO orders (scope, order_id, vendor, item, quantity, "
               "unit_price_cents, currency, total_cents) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (g, "PO-0001", "Northwind Supplies", "paper", 10, 500, "USD", 5000))
    ensure_signer(db, root, "Sandbox Notary")
    write_file(root, layout.outbox_path(g, "archive", "manifest.txt"), b"global archive\n")
    write_file(root, layout.document_path(g, "DOC-0001", "charter.txt"), b"sandbox charter\n")
    write_file(root, layout.download_path(g, "public", "readme.txt"), b"public readme\n")
    _site(root, g, "status")
    db.commit()
