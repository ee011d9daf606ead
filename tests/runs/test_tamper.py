"""Tamper evidence: single-byte flips and single-field edits across the fixture's records are
all detected, each with the record named (``authpairs audit`` / :func:`verify_chain`).

A forger who also recomputes every hash and the chain head is still caught by the audit's
re-derivation: the stored raw output parsed again gives another decision, the verifier's
judgement on the stored observations gives another verdict, or the input hash differs.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.audit import audit_run, verify_chain
from authpairs.runs.chain import GENESIS_KIND, link, seal, text_sha256
from authpairs.runs.records import CaseRecord, stored_json
from authpairs.runs.store import RecordStore, header_sha256
from tests.runs.fixtures.make import RECORDS, RUNS

CASE_FIELDS = ("case_id", "input_sha256", "status", "decision", "dispatch", "label", "seq",
               "content_sha256", "chain_sha256")
ATTEMPT_FIELDS = ("case_id", "attempt_no", "kind", "input_sha256", "seq", "content_sha256",
                  "chain_sha256")
HEADER_FIELDS = ("created_at", "config_json", "config_sha256", "manifest_json",
                 "manifest_sha256", "template_json", "versions_json", "expected_json",
                 "header_sha256", "chain_head", "chain_length", "seal_sha256")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RecordStore]:
    path = tmp_path / "records.sqlite"
    shutil.copy(RECORDS, path)
    with RecordStore(path) as opened:
        yield opened


@contextmanager
def tampered(store: RecordStore, sql: str, args: tuple[object, ...]) -> Iterator[None]:
    conn = store.connection
    conn.execute("BEGIN IMMEDIATE")
    try:
        assert conn.execute(sql, args).rowcount == 1
        yield
    finally:
        conn.execute("ROLLBACK")


def _rows(store: RecordStore) -> list[tuple[str, str, dict[str, object]]]:
    out = []
    for run in RUNS:
        for row in store.chain_rows(run):
            out.append((run, "case_records" if row["entry"] == "case" else "attempts", row))
    return out


def _other(value: object) -> object:
    if isinstance(value, int):
        return value + 1000
    if value is None:
        return "BLOCK"
    text = str(value)
    return text[:-1] + ("0" if text[-1:] != "0" else "1") if text else "x"


def _named(findings: list[str], case_id: object) -> bool:
    return any(f"'{case_id}'" in f for f in findings)


def _key(table: str, row: dict[str, object]) -> tuple[str, tuple[object, ...]]:
    if table == "case_records":
        return "run_id=? AND case_id=?", (row["run_id"], row["case_id"])
    return "id=?", (row["id"],)


def test_every_single_byte_flip_is_detected_and_named(store: RecordStore) -> None:
    rng = random.Random(11)
    flips = detected = 0
    for run, table, row in _rows(store):
        text = str(row["record_json"])
        for at in rng.sample(range(len(text)), 6):
            flipped = text[:at] + chr(ord(text[at]) ^ 1) + text[at + 1:]
            where, key = _key(table, row)
            with tampered(store, f"UPDATE {table} SET record_json=? WHERE {where}",
                          (flipped, *key)):
                findings = [str(f) for f in verify_chain(store, run).findings]
            flips += 1
            detected += _named(findings, row["case_id"])
    assert flips >= 150
    assert detected == flips


def test_every_single_field_edit_is_detected_and_named(store: RecordStore) -> None:
    edits = detected = 0
    for run, table, row in _rows(store):
        for column in CASE_FIELDS if table == "case_records" else ATTEMPT_FIELDS:
            where, key = _key(table, row)
            with tampered(store, f"UPDATE {table} SET {column}=? WHERE {where}",
                          (_other(row[column]), *key)):
                findings = [str(f) for f in verify_chain(store, run).findings]
            edits += 1
            detected += _named(findings, row["case_id"])
        if table == "case_records":  # a field inside the stored record, re-stored canonically
            record = CaseRecord.model_validate_json(str(row["record_json"]))
            for change in ({"latency_s": record.latency_s + 1}, {"resolved": not record.resolved},
                           {"reason_code": "empty"}, {"cluster": record.cluster + "x"}):
                text = stored_json(record.model_copy(update=change))
                where, key = _key(table, row)
                with tampered(store, f"UPDATE {table} SET record_json=? WHERE {where}",
                              (text, *key)):
                    findings = [str(f) for f in verify_chain(store, run).findings]
                edits += 1
                detected += _named(findings, row["case_id"])
    assert edits >= 150
    assert detected == edits


def test_header_edits_and_removed_entries_are_detected(store: RecordStore) -> None:
    run = RUNS[1]
    header = store.run_row(run)
    assert header is not None
    for column in HEADER_FIELDS:
        with tampered(store, f"UPDATE runs SET {column}=? WHERE run_id=?",
                      (_other(header[column]), run)):
            findings = verify_chain(store, run).findings
        assert any(f.record == "run header" for f in findings), column
    last = list(store.chain_rows(run))[-1]
    with tampered(store, "DELETE FROM attempts WHERE id=?", (last["id"],)):
        findings = verify_chain(store, run).findings
    assert any(f.check == "chain-head" for f in findings)


def _forge(store: RecordStore, run: str) -> None:
    """Recompute every hash, link, the head and the header's seal, as a forger with write access
    would."""
    conn = store.connection
    header = store.run_row(run)
    assert header is not None
    genesis = header_sha256(header)
    head = link(genesis, GENESIS_KIND, genesis)
    for n, row in enumerate(list(store.chain_rows(run)), start=1):
        content = text_sha256(str(row["record_json"]))
        head = link(head, str(row["entry"]), content)
        table = "case_records" if row["entry"] == "case" else "attempts"
        where, key = _key(table, row)
        conn.execute(f"UPDATE {table} SET seq=?, content_sha256=?, chain_sha256=? WHERE {where}",
                     (n, content, head, *key))
    conn.execute("UPDATE runs SET header_sha256=?, chain_head=?, chain_length=?, seal_sha256=? "
                 "WHERE run_id=?", (genesis, head, n, seal(genesis, head, n), run))


@pytest.mark.parametrize("run", RUNS)
def test_a_forged_decision_with_recomputed_hashes_fails_the_audit(store: RecordStore,
                                                                   run: str) -> None:
    conn = store.connection
    for row in [r for r in list(store.chain_rows(run)) if r["entry"] == "case"]:
        record = CaseRecord.model_validate_json(str(row["record_json"]))
        flipped = "BLOCK" if record.dispatch.value == "ALLOW" else "ALLOW"
        forged = record.model_copy(update={
            "decision": Decision(flipped), "dispatch": Dispatch(flipped),
            "status": OutcomeStatus.DECISION, "reason_code": None})
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("UPDATE case_records SET record_json=?, decision=?, dispatch=?, "
                         "status='decision' WHERE run_id=? AND case_id=?",
                         (stored_json(forged), flipped, flipped, run, record.case_id))
            _forge(store, run)
            assert verify_chain(store, run).ok  # the chain alone cannot see a forger
            findings = [str(f) for f in audit_run(store, run).findings]
        finally:
            conn.execute("ROLLBACK")
        assert _named(findings, record.case_id), findings


def test_a_forged_observation_fails_the_effect_rejudgement(store: RecordStore) -> None:
    run = RUNS[0]
    conn = store.connection
    row = next(r for r in store.chain_rows(run) if r["entry"] == "case")
    data = json.loads(str(row["record_json"]))
    assert data["effect"]["observation"]["primary_ok"] is True
    data["effect"]["observation"]["after"] = data["effect"]["observation"]["before"]
    text = stored_json(CaseRecord.model_validate(data))
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("UPDATE case_records SET record_json=? WHERE run_id=? AND case_id=?",
                     (text, run, row["case_id"]))
        _forge(store, run)
        findings = audit_run(store, run).findings
    finally:
        conn.execute("ROLLBACK")
    assert any(f.check == "effect-judgement" and str(row["case_id"]) in f.record
               for f in findings)


def test_audit_cli_names_the_record(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from authpairs.cli import app

    path = tmp_path / "r.sqlite"
    shutil.copy(RECORDS, path)
    with sqlite3.connect(path) as conn:
        case_id, text = conn.execute("SELECT case_id, record_json FROM case_records "
                                     "WHERE run_id=? LIMIT 1", (RUNS[1],)).fetchone()
        conn.execute("UPDATE case_records SET record_json=? WHERE case_id=? AND run_id=?",
                     (text.replace('"latency_s":', '"latency_s":1', 1), case_id, RUNS[1]))
    result = CliRunner().invoke(app, ["audit", RUNS[1], "--records", str(path)])
    assert result.exit_code == 1
    assert f"case record '{case_id}'" in result.output and "audit FAILED" in result.output
