"""``authpairs audit`` re-parses with the reviewer that ran and proves completeness.

One untampered run of each reviewer kind passes the audit with nothing skipped: a baseline, a
native interface with interface options over a scripted backend (llama-guard, version 3 without
the blank line), a native guardrail interface whose options change what it accepts
(policyguard, card labels), the README's Python guardrail (``examples.guard:review``), a callable
answering labels read by a named parser, and the HTTP guardrail against a local service. Each of
them fails the audit the way it used to (the default interface) when it is told to, so the test
can tell the two apart.

A truncated run (the last case removed and the chain head moved back) fails: the header's seal
no longer covers the head, and the removed case is a missing-case finding even when the seal is
recomputed too; ``--allow-incomplete`` lists it without failing. Records of schema version 2
are audited under their own rule (no seal) and migrated when opened for writing.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from authpairs.backends.base import ChatRequest
from authpairs.cli import app
from authpairs.runs import audit as audit_module
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run, verify_chain
from authpairs.runs.chain import seal
from authpairs.runs.config import config_from_dict
from authpairs.runs.store import RecordStore
from tests.loopback import json_service
from tests.review.guardrails.chat_stub import ChatStub, last_message
from tests.runs.fixtures.make import RUNS

runner = CliRunner()
V2_RECORDS = Path(__file__).parent / "fixtures" / "records-v2.sqlite"


def llama_answer(request: ChatRequest) -> str:
    """Meta's answer grammar: 'safe', or 'unsafe' and the category code."""
    return "unsafe\nS1" if request.sha256()[0] in "01234567" else "safe"


def policyguard_card_answer(request: ChatRequest) -> str:
    """The model card's spellings, which only ``labels: card`` accepts."""
    return "no violation" if request.sha256()[0] in "02468ace" else "violation"


def _verdict(path: str, body: bytes) -> tuple[int, object]:
    return 200, {"result": {"label": "unsafe" if b"refund" in body else "safe"}}


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    with json_service(_verdict) as url:
        yield f"{url}/verdict"


def _scripted(interface: str, options: dict[str, Any], script: str) -> dict[str, Any]:
    return {"interface": interface, "interface_options": options,
            "backend": {"kind": "scripted", "script": f"tests.runs.test_audit_reviewers:{script}"}}


def reviewers(url: str, chat_url: str) -> dict[str, dict[str, Any]]:
    """One reviewer configuration of each kind (``chat_url``: the model NeMo's action calls)."""
    return {
        "baseline": {"baseline": "always-block"},
        "interface-options": _scripted("llama-guard", {"assistant_blank_line": False},
                                       "llama_answer"),
        "guardrail-interface-options": _scripted("policyguard", {"labels": "card"},
                                                 "policyguard_card_answer"),
        "callable": {"guardrail": "examples.guard:review"},
        "callable-parser": {"guardrail": "examples.guard:review_labels",
                            "guardrail_options": {"parser": "policyguard"}},
        "http": {"guardrail": "http", "guardrail_options": {
            "url": url, "field": "result.label", "values": {"safe": "ALLOW", "unsafe": "BLOCK"}}},
        "nemo": {"guardrail": "nemo-self-check",
                 "backend": {"kind": "openai", "base_urls": [chat_url], "model": "stub-model"}},
    }


KINDS = ("baseline", "interface-options", "guardrail-interface-options", "callable",
         "callable-parser", "http", "nemo")


def _self_check(body: dict[str, Any]) -> tuple[str, str]:
    """NeMo's self-check question answered Yes (block) for refunds, No otherwise."""
    return ("Yes" if "refund" in last_message(body) else "No"), "stop"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory, service: str) -> Path:
    path = tmp_path_factory.mktemp("audit-reviewers") / "records.sqlite"
    with ChatStub(_self_check) as chat:
        for kind, reviewer in reviewers(service, chat.base_url).items():
            asyncio.run(run_async(config_from_dict({
                "dataset": "examples", "split": "all", "enforce": False, "records": str(path),
                "run_id": kind, "reviewer": reviewer}), progress=False))
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_an_untampered_run_of_every_reviewer_kind_passes(records: Path, kind: str) -> None:
    with RecordStore(records, readonly=True) as store:
        report = audit_run(store, kind)
        decisions = [r.decision for r in store.case_records(kind)]
    assert report.ok, [str(f) for f in report.findings]
    assert not report.skipped and not report.missing
    assert report.checked["decisions re-parsed"] == 8
    assert report.checked["inputs re-rendered"] == 8
    assert report.checked["header seal"] == 1
    assert None not in decisions  # every answer was a decision: the parser mattered
    result = runner.invoke(app, ["audit", kind, "--records", str(records)])
    assert result.exit_code == 0, result.output
    assert "audit passed" in result.output


@pytest.mark.parametrize("kind", ["interface-options", "guardrail-interface-options",
                                  "callable", "callable-parser", "http"])
def test_the_default_interface_would_not_pass_them(records: Path, kind: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit as it was (the configured interface name, no options, no guardrail) finds
    differences on every one of these runs."""
    from authpairs.review.interfaces import get_interface
    from authpairs.runs.config import ReviewerConfig

    def default_interface(config: ReviewerConfig) -> Any:
        return get_interface(config.interface)

    monkeypatch.setattr(audit_module, "rebuilt_reviewer", default_interface)
    with RecordStore(records, readonly=True) as store:
        report = audit_run(store, kind)
    assert {f.check for f in report.findings} & {"re-parse", "input-hash", "template-hash"}


def _truncate(path: Path, run_id: str, *, reseal: bool) -> str:
    """Delete the run's last case (with its attempts) and move the chain head back to the
    entry before it; with ``reseal`` also recompute the header's seal. Returns the case id."""
    with sqlite3.connect(path) as conn:
        case_id, seq = conn.execute("SELECT case_id, seq FROM case_records WHERE run_id=? "
                                    "ORDER BY seq DESC LIMIT 1", (run_id,)).fetchone()
        conn.execute("DELETE FROM attempts WHERE run_id=? AND seq>?", (run_id, seq))
        conn.execute("DELETE FROM case_records WHERE run_id=? AND case_id=?", (run_id, case_id))
        head = conn.execute(
            "SELECT chain_sha256 FROM (SELECT seq, chain_sha256 FROM case_records WHERE run_id=? "
            "UNION ALL SELECT seq, chain_sha256 FROM attempts WHERE run_id=?) ORDER BY seq DESC "
            "LIMIT 1", (run_id, run_id)).fetchone()[0]
        conn.execute("UPDATE runs SET chain_head=?, chain_length=? WHERE run_id=?",
                     (head, seq - 1, run_id))
        if reseal:
            (header,) = conn.execute("SELECT header_sha256 FROM runs WHERE run_id=?",
                                     (run_id,)).fetchone()
            conn.execute("UPDATE runs SET seal_sha256=? WHERE run_id=?",
                         (seal(header, head, seq - 1), run_id))
    return str(case_id)


@pytest.mark.parametrize("reseal", [False, True])
def test_a_truncated_run_fails_the_audit(records: Path, tmp_path: Path, reseal: bool) -> None:
    path = tmp_path / "truncated.sqlite"
    shutil.copyfile(records, path)
    removed = _truncate(path, "callable", reseal=reseal)
    with RecordStore(path, readonly=True) as store:
        chain = verify_chain(store, "callable")
        report = audit_run(store, "callable")
    assert {f.check for f in chain.findings} == (set() if reseal else {"header-seal"})
    assert report.missing == [removed]
    assert any(f.check == "missing-case" and f"'{removed}'" in f.record
               for f in report.findings)
    result = runner.invoke(app, ["audit", "callable", "--records", str(path)])
    assert result.exit_code == 1, result.output
    assert "7 recorded of 8 expected" in result.output and "audit FAILED" in result.output
    allowed = runner.invoke(app, ["audit", "callable", "--records", str(path),
                                  "--allow-incomplete"])
    assert allowed.exit_code == (0 if reseal else 1), allowed.output
    assert "1 missing case(s) allowed by --allow-incomplete" in allowed.output


def test_version_2_records_are_audited_under_their_rule_and_migrated(tmp_path: Path) -> None:
    with RecordStore(V2_RECORDS, readonly=True) as store:
        assert store.schema_version == 2
        for run in RUNS:
            report = audit_run(store, run)
            assert report.ok and not report.skipped, [str(f) for f in report.findings]
            assert report.schema_version == 2 and "header seal" not in report.checked
    result = runner.invoke(app, ["audit", RUNS[1], "--records", str(V2_RECORDS)])
    assert result.exit_code == 0 and "records schema version 2" in result.output
    copy = tmp_path / "v2.sqlite"
    shutil.copyfile(V2_RECORDS, copy)
    with RecordStore(copy) as store:  # opened for writing: migrated, the seal added
        assert store.schema_version >= 3
    with RecordStore(copy, readonly=True) as store:
        assert store.schema_version >= 3
        for run in RUNS:
            report = audit_run(store, run)
            assert report.ok, [str(f) for f in report.findings]
            assert report.checked["header seal"] == 1
