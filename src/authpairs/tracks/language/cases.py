"""Build authpairs :class:`~authpairs.cases.models.Case` objects from scenarios.

Each context becomes one case. The public half holds only request, policy (text), evidence
documents (issuer, time, text) and the effect descriptor; label, expression, facts, resolution,
family, variant and path stay in the reference half, the source and the attributes.
Case ids are ``AC-`` + the first 16 hex digits of the SHA-256 of the canonical public input
(request, policy, evidence, effect; not the id itself), so they change exactly when a reviewer
would see something different.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from authpairs.cases.canonical import sha256_hex
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import (
    Case,
    EffectDescriptor,
    Evidence,
    EvidenceDocument,
    Policy,
    PublicCase,
    Reference,
    Source,
)
from authpairs.tracks.language.evaluate import ContextEvaluation, evaluate_scenario
from authpairs.tracks.language.loader import load_scenarios, scenarios_root
from authpairs.tracks.language.models import ContextSpec, LoadedScenario, Scenario
from authpairs.tracks.language.spec import DATASET_NAME, DATASET_VERSION

PACKAGE_PREFIX = "tracks/language/scenarios/"


@dataclass(frozen=True)
class Provenance:
    """Where built cases say they come from: dataset name, path prefix, revision, licence."""

    dataset: str = DATASET_NAME
    prefix: str = PACKAGE_PREFIX
    revision: str = DATASET_VERSION
    licence: str = "Apache-2.0 (synthetic)"


PACKAGED = Provenance()


def case_id_for(public: PublicCase) -> str:
    """Stable id from the canonical public input, excluding the id field itself."""
    payload = public.model_dump(mode="json", exclude={"source_id"})
    return "AC-" + sha256_hex(payload)[:16]


def _public(scenario: Scenario, context: ContextSpec, source_id: str) -> PublicCase:
    return PublicCase(
        source_id=source_id,
        request=scenario.request,
        policy=Policy(format="text", text=scenario.policy),
        evidence=Evidence(documents=[
            EvidenceDocument(doc_id=d.id, issuer=d.issuer, time=d.time, text=d.text)
            for d in context.documents]),
        effect=EffectDescriptor(type=scenario.effect.type, params=dict(scenario.effect.params)),
    )


def _facts(scenario: Scenario, context: ContextSpec) -> dict[str, object]:
    merged = {**scenario.policy_facts, **context.facts}
    return {key: fact.model_dump(mode="json", exclude_defaults=True)
            for key, fact in merged.items()}


def build_case(loaded: LoadedScenario, context: ContextSpec,
               evaluation: ContextEvaluation, provenance: Provenance = PACKAGED) -> Case:
    """One case for one context of a validated scenario."""
    scenario = loaded.scenario
    draft = _public(scenario, context, "")
    case_id = case_id_for(draft)
    notes = ""
    if not evaluation.resolved:
        notes = f"unresolved: {context.unresolved_reason or evaluation.interpreter.detail}"
    return Case(
        case_id=case_id,
        split=scenario.split,
        public=draft.model_copy(update={"source_id": case_id}),
        reference=Reference(label=context.label, expression=scenario.expression,
                            facts=_facts(scenario, context), notes=notes,
                            resolved=evaluation.resolved),
        source=Source(track="language", dataset=provenance.dataset,
                      path=provenance.prefix + loaded.path, revision=provenance.revision,
                      licence=provenance.licence, locator=context.id),
        attributes={
            "domain": scenario.domain, "family": scenario.family, "scenario": scenario.slug,
            "title": scenario.title, "context": context.id, "variant": context.variant,
            "path": context.path, "split": scenario.split,
        },
    )


def build_cases(scenarios: list[LoadedScenario], provenance: Provenance = PACKAGED
                ) -> list[Case]:
    """Cases for all contexts, ordered by split (dev, test), domain, slug and then case id.

    Within a scenario the order follows the (hash) case id, not the context id: authors write
    the lawful contexts first, so file order must not mirror the labels.
    """
    cases: list[Case] = []
    order = sorted(scenarios, key=lambda s: (s.scenario.split, s.scenario.domain,
                                             s.scenario.slug))
    for loaded in order:
        evaluations = {e.context_id: e for e in evaluate_scenario(loaded.scenario)}
        built = [build_case(loaded, context, evaluations[context.id], provenance)
                 for context in loaded.scenario.contexts]
        cases.extend(sorted(built, key=lambda case: case.case_id))
    return cases


def load_language_dataset(split: str | None = None, root: str | Path | None = None,
                          name: str | None = None) -> Dataset:
    """The language-track dataset (all splits, or 'dev'/'test'), in a stable order.

    ``root`` reads a custom scenario folder instead of the packaged one; its dataset (and
    manifest) is named ``name``, by default after the folder.

    Raises :class:`~authpairs.tracks.language.loader.ScenarioError` if any scenario file is
    malformed (run ``authpairs data check`` for the full report).
    """
    if split not in (None, "all", "dev", "test"):
        raise ValueError(f"unknown split {split!r} (dev, test or all)")
    provenance = PACKAGED
    if root is not None or name is not None:  # a custom folder or name: no package provenance
        folder = Path(root or scenarios_root()).resolve()
        provenance = Provenance(dataset=name or folder.name, prefix="", revision="", licence="")
    dataset = Dataset(name=provenance.dataset,
                      cases=build_cases(load_scenarios(root), provenance))
    return dataset if split in (None, "all") else dataset.select(split)
