"""Effects check: run descriptors through a throwaway sandbox as ALLOW and as BLOCK and audit.

Used by ``authpairs data effects-check``: every ALLOW must be executed and verified, every BLOCK
must leave the sandbox unchanged, and every record must pass its audit. The descriptors are the
language dataset's, or :func:`generated_descriptors` (for the benchmark, and the check when the
language dataset is not available): deterministic, the nine types in turn, fictional names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.models import EffectDescriptor
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.review.outcome import Dispatch


@dataclass
class EffectsAudit:
    """Outcome of :func:`audit_effects`."""

    checked: Counter[str] = field(default_factory=Counter)
    """Records per effect type (two per descriptor)."""
    failures: list[str] = field(default_factory=list)
    """``case id / dispatch: reason`` for every record that failed."""

    @property
    def ok(self) -> bool:
        """True when every record passed."""
        return not self.failures


def audit_effects(pairs: Sequence[tuple[str, EffectDescriptor]],
                  parent: Path | None = None) -> EffectsAudit:
    """Enforce every ``(case id, descriptor)`` once as ALLOW and once as BLOCK (own scopes)."""
    result = EffectsAudit()
    with LocalEnforcer(parent) as enf:
        for case_id, effect in pairs:
            for dispatch in (Dispatch.ALLOW, Dispatch.BLOCK):
                rec = enf.enforce(f"{case_id}/{dispatch.value}", effect, dispatch)
                result.checked[effect.type] += 1
                expected = dispatch is Dispatch.ALLOW
                if not rec.audit_ok or rec.verified is not expected or rec.executed is not expected:
                    reason = rec.error or str(rec.observation.get("judgement", ""))
                    if rec.observation.get("unrelated_changed"):
                        reason += f"; unrelated changes: {rec.observation['unrelated_changed']}"
                    result.failures.append(f"{case_id} / {dispatch.value}: {reason}")
    return result


def generated_descriptors(n: int = 200) -> list[tuple[str, EffectDescriptor]]:
    """``n`` deterministic descriptors, the nine types in turn, with realistic parameters."""
    out: list[tuple[str, EffectDescriptor]] = []
    for i in range(n):
        t = EFFECT_TYPES[i % len(EFFECT_TYPES)]
        k = 1000 + i
        choices: dict[str, dict[str, Any]] = {
            "ledger_transfer": {"from_account": f"merchant-ops-{k}",
                                "to_account": f"card-ending-{k}", "amount": f"{75 + i}.50",
                                "currency": "USD"},
            "order_creation": {"order_id": f"PO-{k}", "vendor": "Aldous Scientific",
                               "item": f"benchtop centrifuge C{i}", "quantity": 1 + i % 7,
                               "unit_price": "2640.00", "currency": "EUR"},
            "record_update": {"record_id": f"careplan-HPG-{k}", "field": "care_plan",
                              "value": f"mobilise twice daily; review on day {i % 9 + 1}"},
            "byte_delivery": {"recipient": f"auditor-{k}", "file_name": f"ledger-{k}.csv",
                              "content": "date,amount\n" + "2026-03-01,75.00\n" * (1 + i % 40)},
            "deployment": {"service": f"checkout-{k}", "version": f"2.{i}.1",
                           "content": f"<html><body>release 2.{i}.1</body></html>" * 10,
                           "percentage": 1 + (i * 7) % 100},
            "document_signing": {"document_id": f"DOC-{k}", "file_name": f"agreement-{k}.txt",
                                 "content": f"Supply agreement {k}.\n" * 30,
                                 "signer": f"Signer {i % 12}"},
            "reservation": {"resource_id": f"lab-{i % 5}", "holder": f"Researcher {i}",
                            "start": f"2026-03-{1 + i % 28:02d}T09:00:00Z",
                            "end": f"2026-03-{1 + i % 28:02d}T17:00:00Z"},
            "analysis_inclusion": {"dataset": f"cohort-{i % 4}", "subject_id": f"P-{k}"},
            "download_delivery": {"recipient": f"client-{k}", "file_name": f"export-{k}.zip",
                                  "content": "export row\n" * (10 + i % 200)},
        }
        params = choices[t]
        out.append((f"AC-bench-{i:03d}", EffectDescriptor(type=t, params=params)))
    return out
