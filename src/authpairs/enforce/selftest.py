"""Effects check: run descriptors through a throwaway sandbox as ALLOW and as BLOCK and audit.

Used by ``authpairs data effects-check``: every ALLOW must be executed and verified, every BLOCK
must leave the sandbox unchanged, and every record must pass its audit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
