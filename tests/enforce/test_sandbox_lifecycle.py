"""The sandbox starts with real resources and leaves nothing running after the run."""

from __future__ import annotations

import socket
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest

from authpairs.cases.models import EffectDescriptor
from authpairs.enforce.base import Enforcer
from authpairs.enforce.enforcer import DecisionOnlyEnforcer, LocalEnforcer
from authpairs.enforce.layout import OPENING_BALANCE_CENTS
from authpairs.enforce.sandbox import Sandbox
from authpairs.review.outcome import Dispatch
from authpairs.runs.api import make_enforcer
from authpairs.runs.config import RunConfig

from .helpers import sample


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_sandbox_resources_and_clean_shutdown(tmp_path: Path) -> None:
    before_threads = set(threading.enumerate())
    with Sandbox(tmp_path) as sb:
        root, port = sb.root, sb.http.port if sb.http else -1
        thread = sb.http.thread if sb.http else None
        assert root.parent == tmp_path.resolve()
        assert _port_open(port)
        assert thread is not None and thread.is_alive()
        assert httpx.get(f"{sb.base_url}/health").text == "ok"
        site = httpx.get(f"{sb.base_url}/sites/global/status/")
        assert site.status_code == 200 and site.headers["X-Release-Version"] == "seed"
        with sqlite3.connect(sb.db_path) as db:
            (balance,) = db.execute("SELECT balance_cents FROM accounts WHERE scope='global' "
                                    "AND account_id='treasury'").fetchone()
        assert balance == OPENING_BALANCE_CENTS
        assert (root / "keys" / "public").is_dir() and any((root / "keys" / "public").iterdir())
    assert not _port_open(port)
    assert not thread.is_alive()
    assert set(threading.enumerate()) <= before_threads
    assert not root.exists()


def test_enforcer_stops_server_even_after_an_exception(tmp_path: Path) -> None:
    enf = LocalEnforcer(tmp_path)
    with pytest.raises(RuntimeError, match="boom"), enf:
        port = enf.sandbox.http.port if enf.sandbox.http else -1
        enf.enforce("c1", sample("download_delivery"), Dispatch.ALLOW)
        raise RuntimeError("boom")
    assert not _port_open(port)
    assert not any(t.name.startswith("authpairs-sandbox-http") for t in threading.enumerate())
    assert list(tmp_path.iterdir()) == []


def test_keep_leaves_the_directory_for_inspection(tmp_path: Path) -> None:
    with Sandbox(tmp_path, keep=True) as sb:
        root = sb.root
    assert (root / "state.sqlite").is_file()


def test_enforce_outside_the_context_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="context manager"):
        LocalEnforcer().enforce("c1", sample("reservation"), Dispatch.ALLOW)


def test_make_enforcer(tmp_path: Path) -> None:
    enf = make_enforcer(parent=tmp_path)
    assert isinstance(enf, LocalEnforcer) and isinstance(enf, Enforcer)
    off = make_enforcer(RunConfig(enforce=False))
    assert isinstance(off, DecisionOnlyEnforcer) and isinstance(off, Enforcer)
    with off:
        rec = off.enforce("c1", EffectDescriptor(type="reservation", params={}), Dispatch.ALLOW)
    assert not rec.executed and rec.observation["decision_only"]
    assert isinstance(make_enforcer(RunConfig(enforce=True), parent=tmp_path), LocalEnforcer)
