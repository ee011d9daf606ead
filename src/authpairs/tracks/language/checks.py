"""The language-track data check: format, quotes, both evaluators, distribution, giveaways.

:func:`check_language` never raises on bad data; it returns a :class:`CheckReport` whose
``errors`` name the file and field of every problem. ``authpairs data check`` prints it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from authpairs.cases.models import Label
from authpairs.tracks.language import spec
from authpairs.tracks.language.evaluate import ContextEvaluation, evaluate_scenario
from authpairs.tracks.language.loader import Issue, collect_scenarios, scenarios_root
from authpairs.tracks.language.models import LoadedScenario, Scenario
from authpairs.tracks.language.quote_values import quoted_value_problems

DATASET = "(dataset)"


@dataclass(frozen=True)
class UnresolvedContext:
    """A context both evaluators leave unresolved, kept in the data and reported."""

    path: str
    context_id: str
    label: str
    reason: str
    detail: str


@dataclass
class CheckReport:
    """Everything ``authpairs data check`` found."""

    n_files: int = 0
    n_valid: int = 0
    errors: list[Issue] = field(default_factory=list)
    unresolved: list[UnresolvedContext] = field(default_factory=list)
    evaluated_contexts: int = 0
    determinate_reproduced: int = 0
    different_paths: int = 0
    domain_rows: list[dict[str, object]] = field(default_factory=list)
    family_rows: list[dict[str, object]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is no error at all."""
        return not self.errors

    def to_dict(self) -> dict[str, object]:
        """Plain-JSON form (for CI and tooling)."""
        return {
            "ok": self.ok, "n_files": self.n_files, "n_valid": self.n_valid,
            "evaluated_contexts": self.evaluated_contexts,
            "determinate_reproduced": self.determinate_reproduced,
            "different_paths": self.different_paths,
            "errors": [e.to_dict() for e in self.errors],
            "unresolved": [vars(u) for u in self.unresolved],
            "domains": self.domain_rows, "families": self.family_rows,
        }


def _err(report: CheckReport, file: str, where: str, message: str, scenario: str = "",
         context: str = "") -> None:
    report.errors.append(Issue(file, where, message, scenario, context))


def check_giveaways(scenario: Scenario) -> list[tuple[str, str]]:
    """Giveaway words that appear in forbidden contexts but in no lawful context."""
    problems: list[tuple[str, str]] = []
    for word, pattern in spec.GIVEAWAY_WORDS.items():
        regex = re.compile(pattern, re.IGNORECASE)
        hits = {c.id: any(regex.search(f"{d.issuer}\n{d.text}") for d in c.documents)
                for c in scenario.contexts}
        forbidden = [c.id for c in scenario.contexts
                     if c.label is Label.FORBIDDEN and hits[c.id]]
        lawful = [c.id for c in scenario.contexts if c.label is Label.LAWFUL and hits[c.id]]
        if forbidden and not lawful:
            problems.append(("contexts", f"lexical giveaway: '{word}' appears only in forbidden "
                                         f"contexts ({', '.join(forbidden)}); use it in a lawful "
                                         "context too or rephrase"))
    return problems


def _identifiers(value: object) -> set[str]:
    """Every mapping key and string value inside plain JSON data."""
    found: set[str] = set()
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            found.add(str(key))
            found |= _identifiers(item)
    elif isinstance(value, list):
        for item in value:
            found |= _identifiers(item)
    return found


def check_public_leaks(scenario: Scenario) -> list[tuple[str, str]]:
    """Scoring names (family key, slug, path names) used in the public request or effect."""
    problems: list[tuple[str, str]] = []
    secret = {scenario.family: "family", scenario.slug: "slug"}
    secret.update({c.path: f"path of {c.id}" for c in scenario.contexts})
    for where, data in (("request", scenario.request.model_dump(mode="json")),
                        ("effect", scenario.effect.model_dump(mode="json"))):
        for name in sorted(_identifiers(data) & set(secret)):
            problems.append((where, f"public {where} uses the {secret[name]} name {name!r}; "
                                    "rename it (reviewers must not see scoring names)"))
    return problems


def _check_evaluations(report: CheckReport, item: LoadedScenario,
                       evaluations: list[ContextEvaluation]) -> None:
    contexts = {c.id: (i, c) for i, c in enumerate(item.scenario.contexts)}
    for ev in evaluations:
        report.evaluated_contexts += 1
        index, context = contexts[ev.context_id]
        problem = ev.problem()
        if problem:
            _err(report, item.path, f"contexts[{index}] ({ev.context_id})", problem,
                 item.scenario.slug, ev.context_id)
        elif ev.resolved:
            report.determinate_reproduced += 1
        else:
            report.unresolved.append(UnresolvedContext(
                item.path, ev.context_id, str(ev.label), context.unresolved_reason or "",
                ev.interpreter.detail))


def _inputs(scenarios: list[Scenario], split: str) -> int:
    return sum(spec.CONTEXTS_PER_SCENARIO for s in scenarios if s.split == split)


def check_distribution(report: CheckReport, items: list[LoadedScenario]) -> None:
    """Counts per docs/definitions.md: splits, domains, test families, dev-only families, exact
    test titles."""
    scenarios = [i.scenario for i in items]
    for split, wanted in spec.SPLIT_SCENARIOS.items():
        n_split = sum(1 for s in scenarios if s.split == split)
        if n_split != wanted:
            _err(report, DATASET, f"split {split}",
                 f"{n_split} scenarios, the definition requires {wanted}")
    for domain, (n_scen, n_dev, n_test) in spec.DOMAIN_COUNTS.items():
        mine = [s for s in scenarios if s.domain == domain]
        got: tuple[int, int, int] = (len(mine), _inputs(mine, "dev"), _inputs(mine, "test"))
        report.domain_rows.append({"domain": domain, "scenarios": got[0], "dev": got[1],
                                   "test": got[2], "want": f"{n_scen}/{n_dev}/{n_test}"})
        if got != (n_scen, n_dev, n_test):
            _err(report, DATASET, f"domain {domain}",
                 f"scenarios/dev inputs/test inputs {got[0]}/{got[1]}/{got[2]}, the definition "
                 f"requires {n_scen}/{n_dev}/{n_test}")
    for family in spec.FAMILIES:
        mine = [s for s in scenarios if s.family == family]
        n_test, n_dev = _inputs(mine, "test"), _inputs(mine, "dev")
        wanted = spec.TEST_FAMILY_INPUTS.get(family, 0)
        report.family_rows.append({"family": family, "test": n_test, "want": wanted, "dev": n_dev})
        if family in spec.DEV_ONLY_FAMILIES and not n_dev:
            _err(report, DATASET, f"family {family}", "development-only family has no "
                                                       "dev scenario")
        elif family not in spec.DEV_ONLY_FAMILIES and n_test != wanted:
            _err(report, DATASET, f"family {family}",
                 f"{n_test} test inputs, the definition requires {wanted}")
    for item in items:
        s = item.scenario
        if s.split == "test" and s.family in spec.DEV_ONLY_FAMILIES:
            _err(report, item.path, "family", f"{s.family} is a development-only family",
                 s.slug)
        if s.split == "test" and s.title not in spec.TEST_TITLES[s.domain]:
            _err(report, item.path, "title", f"{s.title!r} is not one of the defined test titles "
                                             f"of domain {s.domain}", s.slug)
    for domain, titles in spec.TEST_TITLES.items():
        counts = Counter(s.title for s in scenarios if s.split == "test" and s.domain == domain)
        for title in titles:
            if counts[title] != 1:
                _err(report, DATASET, f"title {title!r}",
                     f"{counts[title]} test scenarios in {domain} carry this title, "
                     "the definition requires exactly 1")


def check_language(root: str | Path | None = None, distribution: bool | None = None
                   ) -> CheckReport:
    """Run every check over the scenario files under ``root`` (default: packaged scenarios).

    ``distribution`` (the defined counts of the packaged dataset) defaults to on for the packaged
    scenarios and off for a custom folder.
    """
    if distribution is None:
        distribution = root is None or Path(root).resolve() == scenarios_root().resolve()
    items, issues = collect_scenarios(root)
    report = CheckReport(errors=list(issues), n_valid=len(items))
    report.n_files = len({i.file for i in issues} | {i.path for i in items})
    for item in items:
        _check_evaluations(report, item, evaluate_scenario(item.scenario))
        for where, message in check_giveaways(item.scenario) + check_public_leaks(item.scenario):
            _err(report, item.path, where, message, item.scenario.slug)
        for where, message, context in quoted_value_problems(item.scenario):
            _err(report, item.path, where, message, item.scenario.slug, context)
        lawful = [c.path for c in item.scenario.contexts if c.label is Label.LAWFUL]
        if len(set(lawful)) == len(lawful) == 2:  # the two lawful contexts use different paths
            report.different_paths += 1
    if distribution:
        if len(items) < report.n_files:
            _err(report, DATASET, "", f"{report.n_files - len(items)} file(s) failed to load; "
                                      "distribution counts cover only the valid ones")
        check_distribution(report, items)
    return report
