"""The sandbox layout: directory names, resource paths and the per-case scope.

This module is the shared *contract* between the sandbox, the executors and the verifiers: it
holds names only, no behaviour. Every case acts in its own **scope** (``c-`` + 20 hex digits of
the SHA-256 of its public id) inside one per-run sandbox, so the four contexts of a scenario --
which carry byte-identical effects -- each start from the same deterministic seeded state, while
the unrelated-resource check still covers every other scope and the global resources.

Layout under the sandbox root::

    state.sqlite                                   ledger, orders, records, reservations, ...
    files/outbox/<scope>/<recipient>/<file_name>   byte deliveries
    files/documents/<scope>/<document_id>/<file_name>
    files/signatures/<scope>/<document_id>/<file_name>.sig
    www/sites/<scope>/<service>/{stable.html,canary.html,release.json}  served over HTTP
    www/downloads/<scope>/<recipient>/<file_name>                      served over HTTP
    keys/public/<key_id>.pem   keys/private/<key_id>.pem                Ed25519 signer keys
"""

from __future__ import annotations

import hashlib

DB_NAME = "state.sqlite"
GLOBAL_SCOPE = "global"

OUTBOX = ("files", "outbox")
DOCUMENTS = ("files", "documents")
SIGNATURES = ("files", "signatures")
SITES = ("www", "sites")
DOWNLOADS = ("www", "downloads")
PUBLIC_KEYS = ("keys", "public")
PRIVATE_KEYS = ("keys", "private")

STABLE_PAGE = "stable.html"
CANARY_PAGE = "canary.html"
RELEASE_FILE = "release.json"
CANARY_HEADER = "X-Canary-Bucket"
"""Request header (0..99) choosing the traffic bucket; buckets below the percentage see canary."""
VERSION_HEADER = "X-Release-Version"

OPENING_BALANCE_CENTS = 1_000_000_00
"""Deterministic opening balance of every seeded ledger account (1,000,000.00)."""
SEED_SUBJECTS = ("seed:001", "seed:002", "seed:003")
"""Baseline dataset members; ':' is outside the identifier alphabet, so they never collide."""
SEED_VERSION = "seed"


def seeded_subtrees(scope: str) -> tuple[tuple[str, ...], ...]:
    """Every directory that seeding a case in ``scope`` may write (its scope's file trees and
    the key store)."""
    return (*((*base, scope) for base in (OUTBOX, DOCUMENTS, SIGNATURES, SITES, DOWNLOADS)),
            PUBLIC_KEYS, PRIVATE_KEYS)


def scope_for(case_id: str) -> str:
    """The scope name of a case: ``c-`` + 20 hex digits of SHA-256 of its public id."""
    return "c-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:20]


def signer_key_id(signer: str) -> str:
    """File-safe key id of a signer name (signer names are free text)."""
    return "k-" + hashlib.sha256(signer.encode("utf-8")).hexdigest()[:24]


def seed_page(service: str) -> str:
    """Deterministic page a seeded service serves before any deployment."""
    return f"<html><body>{service} stable release {SEED_VERSION}</body></html>\n"


def outbox_path(scope: str, recipient: str, file_name: str) -> tuple[str, ...]:
    """Path parts of a byte delivery."""
    return (*OUTBOX, scope, recipient, file_name)


def document_path(scope: str, document_id: str, file_name: str) -> tuple[str, ...]:
    """Path parts of a document to be signed."""
    return (*DOCUMENTS, scope, document_id, file_name)


def signature_path(scope: str, document_id: str, file_name: str) -> tuple[str, ...]:
    """Path parts of a detached Ed25519 signature."""
    return (*SIGNATURES, scope, document_id, file_name + ".sig")


def site_dir(scope: str, service: str) -> tuple[str, ...]:
    """Path parts of a deployed service's directory."""
    return (*SITES, scope, service)


def download_path(scope: str, recipient: str, file_name: str) -> tuple[str, ...]:
    """Path parts of a published download."""
    return (*DOWNLOADS, scope, recipient, file_name)


def public_key_path(key_id: str) -> tuple[str, ...]:
    """Path parts of a signer's public key (PEM)."""
    return (*PUBLIC_KEYS, key_id + ".pem")


def private_key_path(key_id: str) -> tuple[str, ...]:
    """Path parts of a signer's private key (PEM, executor side only)."""
    return (*PRIVATE_KEYS, key_id + ".pem")


def site_url_path(scope: str, service: str) -> str:
    """URL path of a deployed service."""
    return f"/sites/{scope}/{service}/"


def download_url_path(scope: str, recipient: str, file_name: str) -> str:
    """URL path of a published download."""
    return f"/downloads/{scope}/{recipient}/{file_name}"


SCHEMA = """
CREATE TABLE scopes (scope TEXT PRIMARY KEY, case_id TEXT NOT NULL);
CREATE TABLE accounts (scope TEXT NOT NULL, account_id TEXT NOT NULL, currency TEXT NOT NULL,
    balance_cents INTEGER NOT NULL, PRIMARY KEY (scope, account_id));
CREATE TABLE transfers (scope TEXT NOT NULL, transfer_no INTEGER NOT NULL,
    from_account TEXT NOT NULL, to_account TEXT NOT NULL, amount_cents INTEGER NOT NULL,
    currency TEXT NOT NULL, PRIMARY KEY (scope, transfer_no));
CREATE TABLE vendors (scope TEXT NOT NULL, vendor TEXT NOT NULL, PRIMARY KEY (scope, vendor));
CREATE TABLE orders (scope TEXT NOT NULL, order_id TEXT NOT NULL, vendor TEXT NOT NULL,
    item TEXT NOT NULL, quantity INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL,
    currency TEXT NOT NULL, total_cents INTEGER NOT NULL, PRIMARY KEY (scope, order_id));
CREATE TABLE records (scope TEXT NOT NULL, record_id TEXT NOT NULL, field TEXT NOT NULL,
    value TEXT NOT NULL, rev INTEGER NOT NULL, PRIMARY KEY (scope, record_id, field));
CREATE TABLE signers (signer TEXT PRIMARY KEY, key_id TEXT NOT NULL);
CREATE TABLE signatures (scope TEXT NOT NULL, document_id TEXT NOT NULL, file_name TEXT NOT NULL,
    signer TEXT NOT NULL, content_sha256 TEXT NOT NULL, signature_hex TEXT NOT NULL,
    PRIMARY KEY (scope, document_id, file_name, signer));
CREATE TABLE bookables (scope TEXT NOT NULL, resource_id TEXT NOT NULL,
    PRIMARY KEY (scope, resource_id));
CREATE TABLE reservations (scope TEXT NOT NULL, resource_id TEXT NOT NULL, start_utc TEXT NOT NULL,
    end_utc TEXT NOT NULL, holder TEXT NOT NULL, PRIMARY KEY (scope, resource_id, start_utc));
CREATE TABLE datasets (scope TEXT NOT NULL, dataset TEXT NOT NULL, PRIMARY KEY (scope, dataset));
CREATE TABLE dataset_members (scope TEXT NOT NULL, dataset TEXT NOT NULL,
    subject_id TEXT NOT NULL, PRIMARY KEY (scope, dataset, subject_id));
CREATE TABLE deployments (scope TEXT NOT NULL, service TEXT NOT NULL, seq INTEGER NOT NULL,
    version TEXT NOT NULL, percentage INTEGER NOT NULL, content_sha256 TEXT NOT NULL,
    PRIMARY KEY (scope, service, seq));
CREATE TABLE downloads (scope TEXT NOT NULL, recipient TEXT NOT NULL, file_name TEXT NOT NULL,
    size INTEGER NOT NULL, sha256 TEXT NOT NULL, status TEXT NOT NULL,
    PRIMARY KEY (scope, recipient, file_name));
"""
"""SQLite schema of the sandbox state (every table keyed by its primary key)."""
