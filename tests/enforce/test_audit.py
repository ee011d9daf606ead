"""The audit catches executors that do the wrong thing and BLOCKs that change something."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from authpairs.cases.effect_params import to_cents
from authpairs.enforce import layout
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.enforce.execute.context import ExecContext
from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS as REGISTRY
from authpairs.enforce.safepath import write_file
from authpairs.enforce.verify.channel import ReadChannel
from authpairs.review.outcome import Dispatch
from authpairs.runs.records import EffectRecord

from .helpers import sample


def _run(effect_type: str) -> Any:
    """The registered executor of ``effect_type``."""
    return REGISTRY.get(effect_type).load_executor()


def _wrong_amount(p: Any, ctx: ExecContext) -> dict[str, Any]:
    cents = to_cents(p.amount) + 1  # one cent too much
    with ctx.db:
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents - ? WHERE scope = ? "
                       "AND account_id = ?", (cents, ctx.scope, p.from_account))
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents + ? WHERE scope = ? "
                       "AND account_id = ?", (cents, ctx.scope, p.to_account))
        ctx.db.execute("INSERT INTO transfers VALUES (?, 1, ?, ?, ?, ?)",
                       (ctx.scope, p.from_account, p.to_account, cents, p.currency))
    return {"amount_cents": cents}


def _touches_treasury(p: Any, ctx: ExecContext) -> dict[str, Any]:
    result = _run("ledger_transfer")(p, ctx)
    with ctx.db:
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents - 1 "
                       "WHERE scope = 'global' AND account_id = 'treasury'")
    return result


def _claims_but_does_nothing(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return {"ok": True}


def _wrong_bytes(p: Any, ctx: ExecContext) -> dict[str, Any]:
    write_file(ctx.root, layout.outbox_path(ctx.scope, p.recipient, p.file_name),
               (p.content + " ").encode())
    return {}


def _extra_file(p: Any, ctx: ExecContext) -> dict[str, Any]:
    result = _run("byte_delivery")(p, ctx)
    write_file(ctx.root, layout.outbox_path(ctx.scope, p.recipient, "copy-" + p.file_name),
               p.content.encode())
    return result


def _full_rollout(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return _run("deployment")(p.model_copy(update={"percentage": 100}), ctx)


def _neighbour_field(p: Any, ctx: ExecContext) -> dict[str, Any]:
    result = _run("record_update")(p, ctx)
    with ctx.db:
        ctx.db.execute("UPDATE records SET value = 'x' WHERE scope = ? AND record_id = ? "
                       "AND field = 'owner'", (ctx.scope, p.record_id))
    return result


def _other_scope(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return _run("analysis_inclusion")(p.model_copy(update={"dataset": "cohort-a"}),
                                           ExecContext(ctx.db, ctx.root, "global"))


def _tampered_signature(p: Any, ctx: ExecContext) -> dict[str, Any]:
    result = _run("document_signing")(p, ctx)
    path = layout.signature_path(ctx.scope, p.document_id, p.file_name)
    sig = bytearray(bytes.fromhex(result["signature_hex"]))
    sig[0] ^= 1
    write_file(ctx.root, path, bytes(sig))
    return result


def _partial_download(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return _run("download_delivery")(
        p.model_copy(update={"content": p.content[: len(p.content) // 2]}), ctx)


def _wrong_interval(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return _run("reservation")(p.model_copy(update={"end": "2026-03-04T11:00:00Z"}), ctx)


def _wrong_quantity(p: Any, ctx: ExecContext) -> dict[str, Any]:
    return _run("order_creation")(p.model_copy(update={"quantity": p.quantity + 1}), ctx)


FAULTS = [
    ("ledger_transfer", _wrong_amount, "from_balance"),
    ("ledger_transfer", _touches_treasury, None),
    ("ledger_transfer", _claims_but_does_nothing, "journal_added"),
    ("byte_delivery", _wrong_bytes, "file"),
    ("byte_delivery", _extra_file, None),
    ("deployment", _full_rollout, "outside"),
    ("record_update", _neighbour_field, None),
    ("analysis_inclusion", _other_scope, "members"),
    ("document_signing", _tampered_signature, "valid_for_document"),
    ("download_delivery", _partial_download, "http"),
    ("reservation", _wrong_interval, "reservations"),
    ("order_creation", _wrong_quantity, "order"),
]


@pytest.mark.parametrize("warm", [False, True], ids=["first-case", "after-other-cases"])
@pytest.mark.parametrize(("effect_type", "fault", "detail"), FAULTS,
                         ids=[f[1].__name__.strip("_") for f in FAULTS])
def test_faulty_executor_is_caught(tmp_path: Path, effect_type: str, fault: Any,
                                   detail: str | None, warm: bool) -> None:
    with LocalEnforcer(tmp_path, executors={effect_type: fault}) as enf:
        if warm:  # later cases compare against a digest refreshed from the previous case
            for i, other in enumerate(("byte_delivery", "deployment", "ledger_transfer")):
                if other != effect_type:
                    assert enf.enforce(f"AC-warm-{i}", sample(other), Dispatch.ALLOW).audit_ok
        rec = enf.enforce("AC-1", sample(effect_type), Dispatch.ALLOW)
    assert rec.executed  # the faulty executor "succeeded" ...
    assert not rec.verified  # ... but the verifier does not confirm it
    assert not rec.audit_ok
    if detail is None:  # primary effect right, collateral change elsewhere
        assert rec.observation["primary_ok"]
        assert not rec.observation["unrelated_unchanged"]
        assert rec.observation["unrelated_changed"]
    else:
        assert not rec.observation["primary_ok"]
        assert detail in rec.observation["judgement"]


def test_touching_another_account_is_named(tmp_path: Path) -> None:
    with LocalEnforcer(tmp_path, executors={"ledger_transfer": _touches_treasury}) as enf:
        rec = enf.enforce("AC-1", sample("ledger_transfer"), Dispatch.ALLOW)
    assert rec.observation["unrelated_changed"] == ["sql/accounts/global/treasury"]


class _TamperingVerifier:
    """Wraps the real verifier; between 'before' and 'after' an outside writer changes a row."""

    checks: tuple[str, ...] = ("sql",)

    def __init__(self, effect_type: str, db_path: list[Path]) -> None:
        self._inner = REGISTRY.get(effect_type).load_verifier()
        self._calls = 0
        self._db_path = db_path

    def targets(self, p: Any, scope: str) -> list[tuple[str, ...]]:
        return self._inner.targets(p, scope)

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        self._calls += 1
        if self._calls == 2:
            with sqlite3.connect(self._db_path[0]) as db:
                db.execute("UPDATE records SET value = 'tampered' WHERE scope = 'global' "
                           "AND field = 'status'")
        return self._inner.observe(p, scope, ch)

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Any:
        return self._inner.judge(p, before, after)


def _tampered_run(tmp_path: Path, dispatch: Dispatch) -> EffectRecord:
    db_path: list[Path] = []
    enf = LocalEnforcer(tmp_path, verifiers={"reservation": _TamperingVerifier("reservation",
                                                                               db_path)})
    with enf:
        db_path.append(enf.sandbox.db_path)
        return enf.enforce("AC-1", sample("reservation"), dispatch)


def test_block_that_changed_something_fails_the_audit(tmp_path: Path) -> None:
    rec = _tampered_run(tmp_path, Dispatch.BLOCK)
    assert not rec.executed and not rec.audit_ok
    assert rec.observation["unrelated_changed"] == ["sql/records/global/REC-0001/status"]


def test_allow_with_collateral_change_fails_the_audit(tmp_path: Path) -> None:
    rec = _tampered_run(tmp_path, Dispatch.ALLOW)
    assert rec.executed and rec.observation["primary_ok"]
    assert not rec.verified and not rec.audit_ok


def test_block_changing_the_target_fails_the_audit(tmp_path: Path) -> None:
    """A BLOCK whose target changes (here: written behind the enforcer's back) is flagged."""

    class _WritesTarget(_TamperingVerifier):
        def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
            self._calls += 1
            if self._calls == 2:
                with sqlite3.connect(self._db_path[0]) as db:
                    db.execute("INSERT INTO reservations VALUES (?, ?, ?, ?, ?)",
                               (scope, p.resource_id, p.start, p.end, p.holder))
            return self._inner.observe(p, scope, ch)

    db_path: list[Path] = []
    with LocalEnforcer(tmp_path, verifiers={"reservation": _WritesTarget("reservation",
                                                                         db_path)}) as enf:
        db_path.append(enf.sandbox.db_path)
        rec = enf.enforce("AC-1", sample("reservation"), Dispatch.BLOCK)
    assert not rec.executed and not rec.audit_ok
    assert rec.observation["target_changed"] and rec.observation["primary_ok"]


def test_executor_refusal_is_an_allow_that_did_not_take_effect(enforcer: LocalEnforcer) -> None:
    big = sample("ledger_transfer", amount="1000000.01")  # more than the opening balance
    rec = enforcer.enforce("AC-1", big, Dispatch.ALLOW)
    assert not rec.executed and not rec.verified and not rec.audit_ok
    assert rec.error is not None and "insufficient funds" in rec.error
    assert rec.observation["changed_total"] == 0
