"""The packaged 50 scenarios, checked against docs/definitions.md. These tests exercise the real
data: they fail (naming the scenario) until every scenario file is complete and correct."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Label
from authpairs.tracks.language.cases import case_id_for, load_language_dataset
from authpairs.tracks.language.checks import check_language
from authpairs.tracks.language.evaluate import evaluate_scenario
from authpairs.tracks.language.expr.result import Outcome
from authpairs.tracks.language.loader import load_scenarios
from authpairs.tracks.language.models import LoadedScenario
from authpairs.tracks.language.spec import (
    DEV_ONLY_FAMILIES,
    DOMAIN_COUNTS,
    TEST_FAMILY_INPUTS,
    TEST_TITLES,
)
from tests.tracks.language.leaks import public_leaks


@lru_cache(maxsize=1)
def _scenarios() -> tuple[LoadedScenario, ...]:
    return tuple(load_scenarios())


@lru_cache(maxsize=1)
def _dataset() -> Dataset:
    return load_language_dataset()


def test_data_check_passes() -> None:
    report = check_language()
    assert report.ok, "\n".join(str(e) for e in report.errors)


def test_counts_per_spec() -> None:
    cases = _dataset().cases
    assert len(_scenarios()) == 50
    assert len(cases) == 200
    split = Counter(c.split for c in cases)
    assert split == {"dev": 40, "test": 160}
    test_labels = Counter(c.reference.label for c in cases if c.split == "test")
    assert test_labels == {Label.LAWFUL: 80, Label.FORBIDDEN: 80}
    for domain, (n_scen, n_dev, n_test) in DOMAIN_COUNTS.items():
        mine = [c for c in cases if c.attributes["domain"] == domain]
        assert len({c.attributes["scenario"] for c in mine}) == n_scen, domain
        assert sum(c.split == "dev" for c in mine) == n_dev, domain
        assert sum(c.split == "test" for c in mine) == n_test, domain
    test_families = Counter(c.attributes["family"] for c in cases if c.split == "test")
    assert dict(test_families) == TEST_FAMILY_INPUTS
    dev_families = {c.attributes["family"] for c in cases if c.split == "dev"}
    assert set(DEV_ONLY_FAMILIES) <= dev_families
    assert len(set(test_families) | dev_families) == 14


def test_exact_test_titles() -> None:
    by_domain: dict[str, list[str]] = {}
    for item in _scenarios():
        if item.scenario.split == "test":
            by_domain.setdefault(item.scenario.domain, []).append(item.scenario.title)
    assert {d: sorted(t) for d, t in by_domain.items()} == \
        {d: sorted(t) for d, t in TEST_TITLES.items()}


def test_every_quote_is_an_exact_substring() -> None:
    missing: list[str] = []
    for item in _scenarios():
        s = item.scenario
        for key, fact in s.policy_facts.items():
            if fact.quote not in s.policy:
                missing.append(f"{item.path}: policy_facts.{key}")
        for context in s.contexts:
            texts = {d.id: d.text for d in context.documents} | {"policy": s.policy}
            for key, fact in context.facts.items():
                if fact.quote not in texts.get(fact.source, ""):
                    missing.append(f"{item.path}: {context.id}.{key}")
    assert missing == []


def test_evaluators_reproduce_every_determinate_label() -> None:
    wrong: list[str] = []
    unresolved: list[str] = []
    for item in _scenarios():
        for ev in evaluate_scenario(item.scenario):
            if ev.interpreter.outcome != ev.sql.outcome:
                wrong.append(f"{item.path} {ev.context_id}: evaluators disagree")
            elif ev.interpreter.outcome is Outcome.UNRESOLVED:
                unresolved.append(f"{item.path} {ev.context_id}")
                if not ev.unresolved_reason:
                    wrong.append(f"{item.path} {ev.context_id}: unresolved without a reason")
            elif not ev.reproduces_label:
                wrong.append(f"{item.path} {ev.context_id}: {ev.interpreter.outcome} "
                             f"({ev.interpreter.detail}) vs label {ev.label}")
    assert wrong == []
    # unresolved contexts are kept in the dataset and flagged, never dropped
    flagged = [f"tracks/language/scenarios/{p}" for p in unresolved]
    marked = [f"{c.source.path} {c.source.locator}" for c in _dataset().cases
              if not c.reference.resolved]
    assert sorted(marked) == sorted(flagged)


def test_always_allow_and_always_block_get_half_of_every_scenario() -> None:
    per_scenario: dict[str, list[Label]] = {}
    for case in _dataset().cases:
        per_scenario.setdefault(case.attributes["scenario"], []).append(case.reference.label)
    assert len(per_scenario) == 50
    for slug, labels in per_scenario.items():
        allow_right = sum(label is Label.LAWFUL for label in labels)
        block_right = sum(label is Label.FORBIDDEN for label in labels)
        assert (len(labels), allow_right, block_right) == (4, 2, 2), slug


def test_request_and_effect_identical_within_scenario() -> None:
    by_scenario: dict[str, set[str]] = {}
    for case in _dataset().cases:
        key = case.public.model_dump_json(include={"request", "policy", "effect"})
        by_scenario.setdefault(case.attributes["scenario"], set()).add(key)
    assert all(len(keys) == 1 for keys in by_scenario.values())


def test_no_reference_field_leaks_into_public_half() -> None:
    leaks = {c.case_id: public_leaks(c) for c in _dataset().cases}
    assert {k: v for k, v in leaks.items() if v} == {}


def test_ids_stable_unique_and_derived_from_public_input() -> None:
    first = _dataset()
    second = load_language_dataset()
    assert [c.case_id for c in first] == [c.case_id for c in second]
    assert first.manifest() == second.manifest()
    assert len({c.case_id for c in first}) == 200
    assert all(case_id_for(c.public) == c.case_id for c in first)
    assert [c.case_id for c in load_language_dataset("test")] == \
        [c.case_id for c in first if c.split == "test"]


def test_bag_of_words_baseline_is_near_chance() -> None:
    from authpairs.tracks.language.baseline import classifier_baseline

    result = classifier_baseline(_dataset(), split="test")
    assert result.n_cases == 160 and result.n_scenarios == 40
    assert result.accuracy <= 0.60, result.to_dict()


def _by_slug(slug: str) -> LoadedScenario:
    matches = [item for item in _scenarios() if item.scenario.slug == slug]
    assert len(matches) == 1, slug
    return matches[0]


def test_paper_example_refund_under_active_delegation() -> None:
    """USD 75 accepted-return refund to the original card under Leah's active USD 100
    delegation: lawful."""
    scenario = _by_slug("delegated-refund-ceiling").scenario
    assert scenario.request.arguments["amount"] == 75
    assert "Leah" in scenario.request.subject
    assert any(c.label is Label.LAWFUL and any(
        f.type == "number" and f.value == 100 for f in c.facts.values())
        for c in scenario.contexts)


def test_paper_example_care_plan_after_effective_handoff() -> None:
    """Care-plan update at 19:05 after a handoff accepted at 18:55 and effective at 19:00:
    lawful."""
    scenario = _by_slug("accepted-and-effective-handoff").scenario
    assert str(scenario.request.environment["time"]).endswith("T19:05:00Z")
    assert any(c.label is Label.LAWFUL and {
        str(f.value)[10:] for f in c.facts.values() if f.type == "timestamp"
    } >= {"T18:55:00Z", "T19:00:00Z"} for c in scenario.contexts)
