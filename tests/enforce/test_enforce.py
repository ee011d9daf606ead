"""ALLOW executes and verifies; BLOCK leaves everything untouched; only public inputs are taken."""

from __future__ import annotations

import hashlib
import inspect
import sqlite3
import typing
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.models import (
    Case,
    EffectDescriptor,
    Evidence,
    Label,
    Policy,
    PublicCase,
    Reference,
    Request,
    Source,
)
from authpairs.enforce import layout
from authpairs.enforce.base import Enforcer
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.review.outcome import Dispatch
from authpairs.runs.records import EffectRecord

from .helpers import SAMPLES, sample


@pytest.mark.parametrize("effect_type", EFFECT_TYPES)
def test_allow_executes_and_verifies(enforcer: LocalEnforcer, effect_type: str) -> None:
    rec = enforcer.enforce("AC-1", sample(effect_type), Dispatch.ALLOW)
    assert rec.error is None
    assert rec.effect_type == effect_type
    assert (rec.executed, rec.verified, rec.audit_ok) == (True, True, True)
    obs = rec.observation
    assert obs["primary_ok"] and obs["target_changed"] and obs["unrelated_unchanged"]
    assert obs["before"] != obs["after"]
    assert obs["resources_checked"] > 20
    assert rec.effect["scope"] == layout.scope_for("AC-1")


@pytest.mark.parametrize("effect_type", EFFECT_TYPES)
def test_block_leaves_everything_unexecuted(enforcer: LocalEnforcer, effect_type: str) -> None:
    rec = enforcer.enforce("AC-1", sample(effect_type), Dispatch.BLOCK)
    assert (rec.executed, rec.verified, rec.audit_ok) == (False, False, True)
    obs = rec.observation
    assert obs["before"] == obs["after"]
    assert not obs["primary_ok"]
    assert obs["changed_total"] == 0
    assert rec.error is None


def test_none_effect_is_decision_only(enforcer: LocalEnforcer) -> None:
    for dispatch in Dispatch:
        rec = enforcer.enforce("OFGA-1", None, dispatch)
        assert rec.effect_type is None and not rec.executed and not rec.verified
        assert rec.audit_ok and rec.observation == {"decision_only": True,
                                                    "dispatch": dispatch.value}


def test_readback_of_executed_effects(enforcer: LocalEnforcer) -> None:
    """Test-side read-back (a third channel) agrees with what the verifier confirmed."""
    for effect_type in EFFECT_TYPES:
        assert enforcer.enforce("AC-9", sample(effect_type), Dispatch.ALLOW).verified
    sb = enforcer.sandbox
    scope = layout.scope_for("AC-9")
    with sqlite3.connect(sb.db_path) as db:
        balances = dict(db.execute("SELECT account_id, balance_cents FROM accounts WHERE scope=?",
                                   (scope,)).fetchall())
        assert balances == {"merchant-ops": layout.OPENING_BALANCE_CENTS - 7500,
                            "card-ending-4471": layout.OPENING_BALANCE_CENTS + 7500}
        assert db.execute("SELECT total_cents FROM orders WHERE scope=?",
                          (scope,)).fetchone() == (528000,)
        assert db.execute("SELECT value, rev FROM records WHERE scope=? AND field='care_plan'",
                          (scope,)).fetchone() == ("mobilise twice daily", 1)
    delivered = sb.root.joinpath(*layout.outbox_path(scope, "auditor-7", "q1-ledger.csv"))
    assert delivered.read_bytes() == SAMPLES["byte_delivery"]["content"].encode()
    sig = sb.root.joinpath(*layout.signature_path(scope, "DOC-551", "supply-agreement.txt"))
    pem = sb.root.joinpath(*layout.public_key_path(layout.signer_key_id("Dana Park")))
    key = load_pem_public_key(pem.read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(sig.read_bytes(), SAMPLES["document_signing"]["content"].encode())
    site = f"{sb.base_url}{layout.site_url_path(scope, 'checkout')}"
    canary = httpx.get(site, headers={layout.CANARY_HEADER: "9"})
    stable = httpx.get(site, headers={layout.CANARY_HEADER: "10"})
    assert canary.text == SAMPLES["deployment"]["content"]
    assert canary.headers[layout.VERSION_HEADER] == "2.4.1"
    assert stable.text == layout.seed_page("checkout")
    download = httpx.get(sb.base_url + layout.download_url_path(scope, "lina.okafor",
                                                                "export-2026-03.zip"))
    assert hashlib.sha256(download.content).hexdigest() == hashlib.sha256(
        SAMPLES["download_delivery"]["content"].encode()).hexdigest()


def test_identical_effects_of_four_contexts_each_execute(enforcer: LocalEnforcer) -> None:
    """Contexts of a scenario carry the same effect; each case acts in its own scope."""
    effect = sample("order_creation")
    records = [enforcer.enforce(f"AC-{i}", effect, d)
               for i, d in enumerate([Dispatch.ALLOW, Dispatch.BLOCK, Dispatch.ALLOW,
                                      Dispatch.ALLOW])]
    assert [r.verified for r in records] == [True, False, True, True]
    assert all(r.audit_ok for r in records)
    with sqlite3.connect(enforcer.sandbox.db_path) as db:
        (n,) = db.execute("SELECT COUNT(*) FROM orders WHERE order_id='PO-77120'").fetchone()
    assert n == 3


def _case(label: Label, effect: EffectDescriptor) -> Case:
    request = Request(subject="agent", action="refund", resource="order ORD-4471")
    public = PublicCase(source_id="AC-x", request=request, policy=Policy(text="p"),
                        evidence=Evidence(), effect=effect)
    return Case(case_id="AC-x", public=public, reference=Reference(label=label),
                source=Source(track="language", dataset="t"))


def test_only_public_inputs_are_accepted(enforcer: LocalEnforcer) -> None:
    effect = sample("ledger_transfer")
    case = _case(Label.FORBIDDEN, effect)
    bad_effects: list[object] = [case, case.public, case.reference, effect.model_dump(),
                                 "forbidden"]
    for bad in bad_effects:
        with pytest.raises(TypeError, match="EffectDescriptor"):
            enforcer.enforce("AC-x", bad, Dispatch.ALLOW)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="case_id"):
        enforcer.enforce(case, effect, Dispatch.ALLOW)  # type: ignore[arg-type]
    for bad_dispatch in ("ALLOW", Label.LAWFUL, case.reference, True):
        with pytest.raises(TypeError, match="dispatch"):
            enforcer.enforce("AC-x", effect, bad_dispatch)  # type: ignore[arg-type]


def test_signature_exposes_no_label() -> None:
    hints = typing.get_type_hints(LocalEnforcer.enforce)
    assert hints == {"case_id": str, "effect": EffectDescriptor | None,
                     "dispatch": Dispatch, "return": hints["return"]}
    assert list(inspect.signature(Enforcer.enforce).parameters) == [
        "self", "case_id", "effect", "dispatch"]
    assert set(EffectDescriptor.model_fields) == {"type", "params"}


def test_records_do_not_depend_on_the_label(tmp_path: Path) -> None:
    """Lawful and forbidden cases with the same effects and dispatches give identical records
    (two fresh runs; keys are deterministic, so records are reproducible run to run)."""
    results = []
    for label in (Label.LAWFUL, Label.FORBIDDEN):
        with LocalEnforcer(tmp_path) as enf:
            run = []
            for effect_type in EFFECT_TYPES:
                case = _case(label, sample(effect_type))
                run += [enf.enforce(f"{case.case_id}-{effect_type}-{d}", case.public.effect, d
                                    ).model_dump() for d in (Dispatch.ALLOW, Dispatch.BLOCK)]
            results.append(run)
    assert results[0] == results[1]
    assert all(r["verified"] for r in results[0][::2])
    assert not any(r["executed"] for r in results[0][1::2])


def test_broken_executor_is_recorded_not_raised(tmp_path: Path) -> None:
    def broken(p: object, ctx: object) -> dict[str, object]:
        raise KeyError("bug")

    with LocalEnforcer(tmp_path, executors={"reservation": broken}) as enf:
        rec = enf.enforce("AC-1", sample("reservation"), Dispatch.ALLOW)
    assert not rec.executed and not rec.audit_ok
    assert rec.error == "executor refused: KeyError: 'bug'"


def test_concurrent_callers_are_serialized(enforcer: LocalEnforcer) -> None:
    """The orchestrator may call from several threads; every record stays exact."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(f"AC-t{i}", sample(t), Dispatch.ALLOW if i % 2 else Dispatch.BLOCK)
            for i, t in enumerate(EFFECT_TYPES * 3)]
    with ThreadPoolExecutor(4) as pool:
        records = list(pool.map(lambda j: enforcer.enforce(*j), jobs))
    assert all(r.audit_ok for r in records)
    assert [r.verified for r in records] == [j[2] is Dispatch.ALLOW for j in jobs]


@pytest.mark.parametrize("dispatch", list(Dispatch))
def test_records_round_trip_as_json(enforcer: LocalEnforcer, dispatch: Dispatch) -> None:
    for effect_type in EFFECT_TYPES:
        rec = enforcer.enforce(f"AC-json-{dispatch}", sample(effect_type), dispatch)
        assert EffectRecord.model_validate_json(rec.model_dump_json()) == rec


def test_effects_check_passes_on_generated_descriptors(tmp_path: Path) -> None:
    from authpairs.enforce.selftest import audit_effects, generated_descriptors

    pairs = generated_descriptors(27)
    assert {e.type for _, e in pairs} == set(EFFECT_TYPES)
    result = audit_effects(pairs, tmp_path)
    assert result.ok, result.failures
    assert sum(result.checked.values()) == 54


def test_effects_check_reports_a_failing_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS as REGISTRY
    from authpairs.enforce.selftest import audit_effects, generated_descriptors

    spec = REGISTRY.get("record_update")
    monkeypatch.setattr(REGISTRY, "_loaded", {**REGISTRY._loaded, "record_update": type(spec)(
        seeder=spec.seeder, executor="tests.enforce.test_enforce:_do_nothing",
        verifier=spec.verifier)})
    result = audit_effects(generated_descriptors(9), tmp_path)
    assert not result.ok
    assert len(result.failures) == 1 and "/ ALLOW: value: observed" in result.failures[0]


def _do_nothing(params: object, ctx: object) -> dict[str, object]:
    """A faulty executor (reports success, changes nothing) for the effects-check test."""
    return {}
