"""Run both evaluators on every context of a scenario and compare them with the author's label."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from authpairs.cases.models import Label
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.expr.result import EvalResult, Outcome, TypedFact
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql
from authpairs.tracks.language.models import ContextSpec, Scenario

_EXPECTED = {Label.LAWFUL: Outcome.TRUE, Label.FORBIDDEN: Outcome.FALSE}


@dataclass(frozen=True)
class ContextEvaluation:
    """Both evaluators' readings of one context, next to the author's label."""

    slug: str
    context_id: str
    label: Label
    interpreter: EvalResult
    sql: EvalResult
    unresolved_reason: str | None

    @property
    def agree(self) -> bool:
        """Both evaluators reach the same outcome."""
        return self.interpreter.outcome == self.sql.outcome

    @property
    def resolved(self) -> bool:
        """Both evaluators give a determinate (true/false) reading."""
        return self.agree and self.interpreter.outcome in (Outcome.TRUE, Outcome.FALSE)

    @property
    def reproduces_label(self) -> bool:
        """Both evaluators give exactly the author's label."""
        return self.agree and self.interpreter.outcome == _EXPECTED[self.label]

    def problem(self) -> str | None:
        """Why this context fails the label check (None when it passes)."""
        i, s = self.interpreter, self.sql
        if not self.agree:
            return (f"evaluators disagree: interpreter {i.outcome} ({i.detail}), "
                    f"SQLite {s.outcome} ({s.detail})")
        if i.outcome is Outcome.ERROR:
            return f"expression error: {i.detail}"
        if i.outcome is Outcome.UNRESOLVED:
            if not self.unresolved_reason:
                return (f"unresolved ({i.detail}) but the context has no unresolved_reason; "
                        "add the missing fact or explain")
            return None
        if self.unresolved_reason:
            return f"has unresolved_reason but evaluates to {i.outcome}"
        if not self.reproduces_label:
            return f"label {self.label} but the expression evaluates to {i.outcome}"
        return None


def context_facts(scenario: Scenario, context: ContextSpec) -> dict[str, TypedFact]:
    """The typed facts visible in one context: policy facts plus the context's own facts."""
    merged = {**scenario.policy_facts, **context.facts}
    return {key: TypedFact(fact.type, fact.evaluated_value(), fact.fields)
            for key, fact in merged.items()}


def request_data(scenario: Scenario) -> dict[str, Any]:
    """The request as plain data, the way both evaluators read ``request.*`` names."""
    return scenario.request.model_dump(mode="json")


def evaluate_scenario(scenario: Scenario) -> list[ContextEvaluation]:
    """Evaluate the scenario's expression in each of its contexts with both evaluators."""
    tree = parse_expression(scenario.expression)
    request = request_data(scenario)
    results: list[ContextEvaluation] = []
    for context in scenario.contexts:
        facts = context_facts(scenario, context)
        results.append(ContextEvaluation(
            slug=scenario.slug, context_id=context.id, label=context.label,
            interpreter=interpret(tree, facts, request), sql=evaluate_sql(tree, facts, request),
            unresolved_reason=context.unresolved_reason))
    return results
