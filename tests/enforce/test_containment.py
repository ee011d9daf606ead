"""Hostile arguments are rejected or handled safely; nothing is written outside the sandbox."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from authpairs.cases.effect_params import MAX_CONTENT_BYTES
from authpairs.enforce import layout
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.review.outcome import Dispatch

from .helpers import sample

CASE = "AC-hostile"


def _tree(path: Path) -> dict[str, str]:
    out = {}
    for p in sorted(path.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(path))] = "link:" + os.readlink(p)
        elif p.is_file():
            out[str(p.relative_to(path))] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p.relative_to(path))] = "dir"
    return out


@pytest.fixture
def canary(tmp_path: Path) -> Iterator[Path]:
    """A directory outside the sandbox holding one file; it must never change."""
    c = tmp_path / "canary"
    c.mkdir()
    (c / "secret.txt").write_text("canary secret\n")
    before = _tree(c)
    yield c
    assert _tree(c) == before, "something was written outside the sandbox"


@pytest.fixture
def hostile_enforcer(tmp_path: Path) -> Iterator[LocalEnforcer]:
    """An enforcer whose sandbox is a sibling of the canary directory."""
    parent = tmp_path / "sandboxes"
    parent.mkdir()
    with LocalEnforcer(parent) as enf:
        yield enf


def _sandbox_state(enf: LocalEnforcer) -> dict[str, str]:
    return _tree(enf.sandbox.root)


TRAVERSALS = [
    ("byte_delivery", "file_name", "../../../canary/secret.txt"),
    ("byte_delivery", "recipient", ".."),
    ("byte_delivery", "file_name", "/tmp/absolute.txt"),
    ("download_delivery", "recipient", "../../canary"),
    ("document_signing", "document_id", "../../../../canary"),
    ("document_signing", "file_name", "..\\..\\canary\\secret.txt"),
    ("deployment", "service", "../../canary"),
    ("analysis_inclusion", "dataset", "x'; DROP TABLE dataset_members; --"),
    ("ledger_transfer", "from_account", "a\" OR 1=1 --"),
    ("byte_delivery", "content", "x" * (MAX_CONTENT_BYTES + 1)),
    ("deployment", "content", "é" * (MAX_CONTENT_BYTES // 2 + 1)),
    ("record_update", "value", "v" * (64 * 1024)),
]


@pytest.mark.parametrize(("effect_type", "field", "value"), TRAVERSALS,
                         ids=[f"{t}-{f}-{i}" for i, (t, f, _) in enumerate(TRAVERSALS)])
def test_hostile_descriptor_is_rejected(hostile_enforcer: LocalEnforcer, canary: Path,
                                        effect_type: str, field: str, value: str) -> None:
    before = _sandbox_state(hostile_enforcer)
    rec = hostile_enforcer.enforce(CASE, sample(effect_type, **{field: value}), Dispatch.ALLOW)
    assert not rec.executed and not rec.verified and not rec.audit_ok
    assert rec.error is not None
    assert rec.error.startswith(f"invalid descriptor: effect '{effect_type}', param '{field}'")
    assert _sandbox_state(hostile_enforcer) == before


def test_hostile_descriptor_under_block_is_recorded_without_effect(
        hostile_enforcer: LocalEnforcer, canary: Path) -> None:
    rec = hostile_enforcer.enforce(CASE, sample("byte_delivery", file_name="../x"),
                                   Dispatch.BLOCK)
    assert not rec.executed and rec.audit_ok and rec.error is not None


def _plant_dir_link(enf: LocalEnforcer, parts: tuple[str, ...], target: Path) -> None:
    link = enf.sandbox.root.joinpath(*parts)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)


SCOPE = layout.scope_for(CASE)
PLANTED_DIRS = [
    ("byte_delivery", (*layout.OUTBOX, SCOPE)),
    ("byte_delivery", (*layout.OUTBOX, SCOPE, "auditor-7")),
    ("download_delivery", (*layout.DOWNLOADS, SCOPE, "lina.okafor")),
    ("document_signing", (*layout.DOCUMENTS, SCOPE, "DOC-551")),
    ("document_signing", (*layout.SIGNATURES, SCOPE)),
    ("deployment", layout.site_dir(SCOPE, "checkout")),
    ("document_signing", layout.PUBLIC_KEYS),
]


@pytest.mark.parametrize(("effect_type", "parts"), PLANTED_DIRS,
                         ids=["/".join(p[1][:3]) + f"-{i}" for i, p in enumerate(PLANTED_DIRS)])
def test_planted_directory_symlink_is_refused(hostile_enforcer: LocalEnforcer, canary: Path,
                                              effect_type: str, parts: tuple[str, ...]) -> None:
    if parts == layout.PUBLIC_KEYS:  # replace the real key directory with a link
        real = hostile_enforcer.sandbox.root.joinpath(*parts)
        for f in real.iterdir():
            f.unlink()
        real.rmdir()
    _plant_dir_link(hostile_enforcer, parts, canary)
    for dispatch in (Dispatch.ALLOW, Dispatch.BLOCK):
        rec = hostile_enforcer.enforce(CASE, sample(effect_type), dispatch)
        assert not rec.executed and not rec.verified
        assert rec.error is not None and "symbolic link" in rec.error
        assert rec.audit_ok is (dispatch is Dispatch.BLOCK)


def test_planted_file_symlink_at_destination_is_refused(hostile_enforcer: LocalEnforcer,
                                                        canary: Path) -> None:
    dest = hostile_enforcer.sandbox.root.joinpath(*layout.outbox_path(SCOPE, "auditor-7",
                                                                      "q1-ledger.csv"))
    dest.parent.mkdir(parents=True)
    dest.symlink_to(canary / "secret.txt")
    rec = hostile_enforcer.enforce(CASE, sample("byte_delivery"), Dispatch.ALLOW)
    assert not rec.executed and not rec.audit_ok
    assert rec.error is not None and "symbolic link" in rec.error
    assert dest.is_symlink()


def test_planted_hard_link_is_not_written_through(hostile_enforcer: LocalEnforcer,
                                                  canary: Path) -> None:
    dest = hostile_enforcer.sandbox.root.joinpath(*layout.outbox_path(SCOPE, "auditor-7",
                                                                      "q1-ledger.csv"))
    dest.parent.mkdir(parents=True)
    try:
        os.link(canary / "secret.txt", dest)
    except OSError as exc:  # pragma: no cover - depends on the file system
        pytest.fail(f"cannot create a hard link in the test file system: {exc}")
    rec = hostile_enforcer.enforce(CASE, sample("byte_delivery"), Dispatch.ALLOW)
    assert rec.executed  # the delivery replaced the directory entry ...
    assert not rec.verified and "existed_before" in rec.observation["judgement"]
    assert dest.read_text() == sample("byte_delivery").params["content"]
    assert (canary / "secret.txt").read_text() == "canary secret\n"  # ... not the canary inode


def test_http_server_does_not_follow_links_or_traverse(hostile_enforcer: LocalEnforcer,
                                                       canary: Path) -> None:
    _plant_dir_link(hostile_enforcer, (*layout.DOWNLOADS, SCOPE, "mallory"), canary)
    port = hostile_enforcer.sandbox.http.port if hostile_enforcer.sandbox.http else -1
    for path in (f"/downloads/{SCOPE}/mallory/secret.txt", "/downloads/../../canary/secret.txt",
                 "/downloads/%2e%2e/%2e%2e/canary/secret.txt", "/sites/../keys/private/",
                 f"//{canary}/secret.txt"):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            response = b""
            while chunk := s.recv(65536):
                response += chunk
        status = int(response.split(b" ", 2)[1])
        assert status in (403, 404), (path, status)
        assert b"canary secret" not in response


def test_sql_metacharacters_in_free_text_are_stored_literally(
        hostile_enforcer: LocalEnforcer, canary: Path) -> None:
    vendor = "Robert'); DROP TABLE orders; --"
    value = "x' WHERE 1=1; UPDATE accounts SET balance_cents = 0; --"
    holder = "\"; DELETE FROM reservations; --"
    for i, effect in enumerate([sample("order_creation", vendor=vendor),
                                sample("record_update", field="note'; --", value=value),
                                sample("reservation", holder=holder)]):
        rec = hostile_enforcer.enforce(f"{CASE}-{i}", effect, Dispatch.ALLOW)
        assert rec.verified and rec.audit_ok, rec.observation.get("judgement")
    with sqlite3.connect(hostile_enforcer.sandbox.db_path) as db:
        assert db.execute("SELECT vendor FROM orders WHERE vendor = ?", (vendor,)).fetchone()
        assert db.execute("SELECT value FROM records WHERE field = ?",
                          ("note'; --",)).fetchone() == (value,)
        assert db.execute("SELECT COUNT(*) FROM accounts WHERE balance_cents = 0").fetchone() \
            == (0,)
        assert db.execute("SELECT holder FROM reservations WHERE holder = ?",
                          (holder,)).fetchone()
        assert db.execute("SELECT COUNT(*) FROM reservations WHERE scope = 'global'"
                          ).fetchone() == (1,)


def test_case_id_with_path_characters_cannot_escape(hostile_enforcer: LocalEnforcer,
                                                   canary: Path) -> None:
    rec = hostile_enforcer.enforce("../../canary", sample("byte_delivery"), Dispatch.ALLOW)
    assert rec.verified and rec.effect["scope"].startswith("c-")
