"""The enforcement point: dispatch decision + public effect descriptor in, EffectRecord out.

:class:`LocalEnforcer` implements :class:`~authpairs.enforce.base.Enforcer`. For each case it

1. checks its inputs: a ``str`` case id, an :class:`EffectDescriptor` (or None) and a
   :class:`Dispatch` -- nothing else, so a Case, its reference half or a label cannot be passed;
2. validates the descriptor (hostile arguments are rejected here with a clear error);
3. seeds the named resources in the case's scope (deterministic initial state);
4. digests the whole sandbox and observes the targeted resources (verifier channel);
5. on ALLOW runs the executor; on BLOCK does nothing;
6. observes again, judges the before/after pair against the descriptor, and checks that nothing
   outside the targets changed (for BLOCK: that nothing changed at all).

``verified`` is True only when the operation was executed, the verifier confirmed the target
changed exactly as described, and no unrelated resource changed. ``audit_ok`` is True when the
observation matches the dispatch: ALLOW -> verified; BLOCK -> nothing changed anywhere.
Calls are serialized (one lock), so concurrent callers never see each other's changes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from authpairs.cases.effect_params import DescriptorError
from authpairs.cases.effect_types import parse_params
from authpairs.cases.models import EffectDescriptor
from authpairs.enforce import layout
from authpairs.enforce.effect_record import EffectRecord
from authpairs.enforce.execute.context import ExecContext, ExecuteFn, ExecutionError
from authpairs.enforce.implementations import implementation
from authpairs.enforce.safepath import ContainmentError
from authpairs.enforce.sandbox import Sandbox
from authpairs.enforce.verify.base import Verifier
from authpairs.enforce.verify.channel import ObservationError, ReadChannel
from authpairs.enforce.verify.digest import Digester, Snapshot, changed, changed_outside
from authpairs.review.outcome import Dispatch

MAX_LISTED_CHANGES = 20


def _describe(exc: BaseException) -> str:
    """Refusals (containment, business rules, observation) by message; anything else by type."""
    if isinstance(exc, (ContainmentError, ExecutionError, ObservationError)):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def check_inputs(case_id: object, effect: object, dispatch: object) -> None:
    """Refuse anything but ``(str, EffectDescriptor | None, Dispatch)``.

    This is what keeps the reference label out of the enforcement point: a Case, a PublicCase,
    a Reference, a label string or a dict is a TypeError.
    """
    if not isinstance(case_id, str):
        raise TypeError(f"case_id must be a str, got {type(case_id).__name__}")
    if effect is not None and type(effect) is not EffectDescriptor:
        raise TypeError("effect must be an EffectDescriptor or None (the public descriptor "
                        f"only), got {type(effect).__name__}")
    if not isinstance(dispatch, Dispatch):
        raise TypeError(f"dispatch must be a Dispatch, got {type(dispatch).__name__}")


def decision_only(dispatch: Dispatch) -> EffectRecord:
    """The record of a case without an effect (native track): nothing executed or verified."""
    return EffectRecord(executed=False,
                        observation={"decision_only": True, "dispatch": dispatch.value})


class LocalEnforcer:
    """Enforcer over a per-run :class:`Sandbox`. Use as ``with LocalEnforcer() as enf: ...``.

    ``executors`` / ``verifiers`` override entries of the registries (tests inject faulty
    executors this way); ``parent`` and ``keep`` are passed to the sandbox.
    """

    def __init__(self, parent: Path | None = None, *, keep: bool = False,
                 executors: Mapping[str, ExecuteFn] | None = None,
                 verifiers: Mapping[str, Verifier] | None = None) -> None:
        self.sandbox = Sandbox(parent, keep=keep)
        self._executors: dict[str, ExecuteFn] = dict(executors or {})
        self._verifiers: dict[str, Verifier] = dict(verifiers or {})
        self._channel: ReadChannel | None = None
        self._digester: Digester | None = None
        self._last: Snapshot | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> LocalEnforcer:
        self.sandbox.start()
        try:
            self._channel = ReadChannel(self.sandbox.root, self.sandbox.db_path,
                                        self.sandbox.base_url)
            self._digester = Digester(self._channel)
        except BaseException:
            self.sandbox.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._digester = None
        self.sandbox.stop()

    def enforce(self, case_id: str, effect: EffectDescriptor | None,
                dispatch: Dispatch) -> EffectRecord:
        """Execute on ALLOW, leave unexecuted on BLOCK, verify independently, audit."""
        check_inputs(case_id, effect, dispatch)
        if effect is None:
            return decision_only(dispatch)
        if self._channel is None or self._digester is None:
            raise RuntimeError("LocalEnforcer is not running; use it as a context manager")
        with self._lock:
            previous, self._last = self._last, None
            return self._enforce(case_id, effect, dispatch, self._channel, self._digester,
                                 previous)

    # -- internals -------------------------------------------------------------------------
    def _executor(self, effect_type: str) -> ExecuteFn:
        if effect_type not in self._executors:
            self._executors[effect_type] = implementation(effect_type).load_executor()
        return self._executors[effect_type]

    def _verifier(self, effect_type: str) -> Verifier:
        if effect_type not in self._verifiers:
            self._verifiers[effect_type] = implementation(effect_type).load_verifier()
        return self._verifiers[effect_type]

    def _refused(self, effect: EffectDescriptor, dispatch: Dispatch, error: str) -> EffectRecord:
        # Nothing was executed: that matches a BLOCK, and is a failed ALLOW.
        return EffectRecord(executed=False, effect_type=effect.type,
                            observation={"dispatch": dispatch.value}, verified=False,
                            audit_ok=dispatch is Dispatch.BLOCK, error=error)

    def _enforce(self, case_id: str, effect: EffectDescriptor, dispatch: Dispatch,
                 ch: ReadChannel, digester: Digester, previous: Snapshot | None
                 ) -> EffectRecord:
        try:
            params = parse_params(effect)
        except DescriptorError as exc:
            return self._refused(effect, dispatch, f"invalid descriptor: {exc}")
        sb = self.sandbox
        try:
            scope = sb.open_scope(case_id)
            sb.seed(effect.type, params, scope)
        except Exception as exc:  # containment refusals, and anything unexpected: still a record
            sb.db.rollback()
            return self._refused(effect, dispatch,
                                 f"sandbox refused to prepare resources: {_describe(exc)}")
        verifier = self._verifier(effect.type)
        targets = verifier.targets(params, scope)
        try:
            # The "before" digest: the previous case's "after" digest with the subtrees this
            # case's seeding may have written re-walked (see Digester.refresh), or a full walk.
            snap_before = (digester.snapshot() if previous is None else
                           digester.refresh(previous, layout.seeded_subtrees(scope)))
            before = verifier.observe(params, scope, ch)
        except Exception as exc:
            return self._refused(effect, dispatch,
                                 f"verifier could not observe: {_describe(exc)}")

        executed, result, error = False, {}, None
        if dispatch is Dispatch.ALLOW:
            try:
                result = self._executor(effect.type)(params, ExecContext(sb.db, sb.root, scope))
                if not isinstance(result, dict):
                    raise TypeError(f"executor returned {type(result).__name__}, not a dict")
                if sb.db.in_transaction:
                    sb.db.commit()
                executed = True
            except Exception as exc:  # a refusal, or a broken executor: recorded, never raised
                sb.db.rollback()
                error = f"executor refused: {_describe(exc)}"

        observation: dict[str, Any] = {"dispatch": dispatch.value, "before": before}
        try:
            after = verifier.observe(params, scope, ch)
            snap_after = digester.snapshot()
            self._last = snap_after
            judgement = verifier.judge(params, before, after)
        except Exception as exc:
            return EffectRecord(executed=executed, effect_type=effect.type,
                                effect={"scope": scope, "result": result},
                                observation=observation, verified=False, audit_ok=False,
                                error=f"verifier could not observe: {_describe(exc)}")
        allow = dispatch is Dispatch.ALLOW
        outside = changed_outside(snap_before, snap_after, targets if allow else [])
        target_changed = before != after
        observation |= {
            "after": after,
            "checks": [*verifier.checks, "unrelated-resource"],
            "primary_ok": judgement.ok,
            "judgement": judgement.detail,
            "target_changed": target_changed,
            "unrelated_unchanged": not outside,
            "unrelated_changed": ["/".join(k) for k in outside[:MAX_LISTED_CHANGES]],
            "changed_total": len(changed(snap_before, snap_after)),
            "resources_checked": len(snap_after),
        }
        verified = allow and executed and judgement.ok and not outside
        audit_ok = verified if allow else not target_changed and not outside
        return EffectRecord(executed=executed, effect_type=effect.type,
                            effect={"scope": scope, "result": result}, observation=observation,
                            verified=verified, audit_ok=audit_ok, error=error)


class DecisionOnlyEnforcer:
    """Enforcer for runs with ``enforce: false``: records decisions, executes nothing."""

    def __enter__(self) -> DecisionOnlyEnforcer:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def enforce(self, case_id: str, effect: EffectDescriptor | None,
                dispatch: Dispatch) -> EffectRecord:
        """A decision-only record for every case."""
        check_inputs(case_id, effect, dispatch)
        return decision_only(dispatch)
