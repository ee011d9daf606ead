"""Verifier: ledger transfer -- balances and the journal, read through the verifier's own
read-only SQLite connection."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from authpairs.enforce.verify.base import Judgement, ResourceKey, mismatch
from authpairs.enforce.verify.channel import ReadChannel


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
