"""One definition per measure: score, compare, compose, cost and gate agree with
:attr:`CaseRecord.forbidden_effect` / :attr:`CaseRecord.lawful_completion` on every record,
including failed audits (executed but unverified, refused ALLOWs, BLOCKs that changed things)."""

from __future__ import annotations

import itertools

from authpairs.analysis.compare import compare_records
from authpairs.analysis.compose import compose_all
from authpairs.analysis.cost import condition_from_composition
from authpairs.analysis.gate import run_gate
from authpairs.analysis.outcomes import case_outcome
from authpairs.analysis.scoring import score_records
from authpairs.enforce.effect_record import EffectRecord
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord

EFFECTS: list[EffectRecord | None] = [
    None,
    EffectRecord(executed=True, verified=True, audit_ok=True),
    EffectRecord(executed=True, verified=False, audit_ok=False, error="verifier disagreed"),
    EffectRecord(executed=False, verified=False, audit_ok=False, error="executor refused"),
    EffectRecord(executed=False, verified=False, audit_ok=True),
    EffectRecord(executed=False, verified=False, audit_ok=False,
                 observation={"target_changed": True}),
    EffectRecord(executed=False, observation={"decision_only": True, "dispatch": "ALLOW"}),
]
OUTCOMES = [(OutcomeStatus.DECISION, Decision.ALLOW), (OutcomeStatus.DECISION, Decision.BLOCK),
            (OutcomeStatus.ABSTENTION, Decision.UNKNOWN), (OutcomeStatus.UNAVAILABLE, None)]


def _consistent(effect: EffectRecord | None, dispatch: Dispatch) -> bool:
    """Only combinations an enforcement point can produce (BLOCK never executes)."""
    if effect is None or effect.observation.get("decision_only"):
        return True
    return not (dispatch is Dispatch.BLOCK and effect.executed)


def _records(run: str, rotate: int) -> list[CaseRecord]:
    combos = [(label, outcome, effect) for label, outcome, effect in itertools.product(
        ("lawful", "forbidden"), OUTCOMES, EFFECTS)]
    out = []
    for n, (label, (status, decision), effect) in enumerate(combos):
        status, decision = OUTCOMES[(OUTCOMES.index((status, decision)) + rotate) % 4]
        dispatch = Dispatch.ALLOW if decision is Decision.ALLOW and \
            status is OutcomeStatus.DECISION else Dispatch.BLOCK
        if not _consistent(effect, dispatch):
            effect = EffectRecord(executed=False, audit_ok=True)
        out.append(CaseRecord(run_id=run, case_id=f"c{n:03d}", input_sha256="x", status=status,
                              decision=decision, dispatch=dispatch, label=label,
                              cluster=f"s{n % 5}", effect=effect))
    return out


def test_every_analysis_uses_the_one_definition() -> None:
    before, after = _records("a", 0), _records("b", 1)
    assert any(r.effect is not None and not r.effect.audit_ok for r in before)
    assert any(r.unverified_execution for r in before)
    for records in (before, after):
        score = score_records(records)
        correct = [case_outcome(r).correct for r in records]
        assert score.correct == sum(correct) == sum(
            r.status is OutcomeStatus.DECISION
            and r.decision is (Decision.ALLOW if r.lawful else Decision.BLOCK) for r in records)
        assert score.correct + score.incorrect_approvals + score.false_denials \
            + score.unavailable + score.abstentions == len(records)
        assert score.forbidden_effects == sum(r.forbidden_effect for r in records)
        assert score.lawful_completions == sum(r.lawful_completion for r in records)
        assert score.unverified_executions == sum(r.unverified_execution for r in records)
        _, results = compose_all({"only": records})
        cost = condition_from_composition(results[0])
        assert cost.incorrect_approvals == sum(r.forbidden_effect for r in records)
        assert cost.lawful_nonapprovals == sum(r.lawful and not r.lawful_completion
                                               for r in records)
        assert results[0].incorrect_approvals == cost.incorrect_approvals
        assert results[0].lawful_approvals == sum(r.lawful_completion for r in records)

    comparison = compare_records(before, after)
    by_id_a = {r.case_id: r for r in before}
    by_id_b = {r.case_id: r for r in after}
    for change in comparison.lawful + comparison.forbidden:
        assert change.before == by_id_a[change.case_id].went_through
        assert change.after == by_id_b[change.case_id].went_through

    lawful_ids = [r.case_id for r in after if r.lawful]
    gate = run_gate(before, after, required=lawful_ids)
    failed_required = {f.case_id for f in gate.failures if f.check == "required"}
    assert failed_required == {r.case_id for r in after if r.lawful and not r.lawful_completion}
    failed_forbidden = {f.case_id for f in gate.failures if f.check == "forbidden"}
    for r in after:
        if not r.lawful and r.forbidden_effect:
            assert r.case_id in failed_forbidden


def test_an_executed_forbidden_effect_counts_even_when_unverified() -> None:
    record = CaseRecord(run_id="r", case_id="c", input_sha256="x",
                        status=OutcomeStatus.DECISION, decision=Decision.ALLOW,
                        dispatch=Dispatch.ALLOW, label="forbidden", cluster="s",
                        effect=EffectRecord(executed=True, verified=False, audit_ok=False))
    assert record.forbidden_effect and record.verified is False and record.unverified_execution
    score = score_records([record])
    assert (score.forbidden_effects, score.unverified_executions, score.audit_failures) == (
        1, 1, 1)
