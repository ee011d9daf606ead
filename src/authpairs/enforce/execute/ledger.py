"""Executor: ledger transfer (debit one account, credit another, append a journal row)."""

from __future__ import annotations

from typing import Any

from authpairs.cases.effect_params import LedgerTransfer, to_cents
from authpairs.enforce.execute.context import ExecContext, ExecutionError


def execute_ledger_transfer(p: LedgerTransfer, ctx: ExecContext) -> dict[str, Any]:
    """Move ``p.amount`` from ``p.from_account`` to ``p.to_account`` in one transaction."""
    cents = to_cents(p.amount)
    with ctx.db:
        rows = dict(ctx.db.execute(
            "SELECT account_id, balance_cents FROM accounts WHERE scope = ? "
            "AND account_id IN (?, ?) AND currency = ?",
            (ctx.scope, p.from_account, p.to_account, p.currency)).fetchall())
        if p.from_account not in rows or p.to_account not in rows:
            raise ExecutionError(f"no {p.currency} account pair {p.from_account} -> {p.to_account}")
        if rows[p.from_account] < cents:
            raise ExecutionError(f"insufficient funds in {p.from_account}")
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents - ? "
                       "WHERE scope = ? AND account_id = ?", (cents, ctx.scope, p.from_account))
        ctx.db.execute("UPDATE accounts SET balance_cents = balance_cents + ? "
                       "WHERE scope = ? AND account_id = ?", (cents, ctx.scope, p.to_account))
        (last,) = ctx.db.execute("SELECT COALESCE(MAX(transfer_no), 0) FROM transfers "
                                 "WHERE scope = ?", (ctx.scope,)).fetchone()
        ctx.db.execute("INSERT INTO transfers (scope, transfer_no, from_account, to_account, "
                       "amount_cents, currency) VALUES (?, ?, ?, ?, ?, ?)",
                       (ctx.scope, last + 1, p.from_account, p.to_account, cents, p.currency))
    return {"transfer_no": last + 1, "amount_cents": cents}
