"""Counts tables of the language dataset, as markdown (used for the dataset card)."""

from __future__ import annotations

from collections import Counter, defaultdict

from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Label
from authpairs.tracks.language.spec import DEV_ONLY_FAMILIES, DOMAINS, TEST_FAMILY_INPUTS


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def counts_markdown(dataset: Dataset) -> str:
    """Markdown tables: per domain, per family, per split, with lawful/forbidden counts."""
    scen: dict[str, set[str]] = defaultdict(set)
    inputs: Counter[tuple[str, str]] = Counter()
    labels: Counter[tuple[str, str]] = Counter()
    families: Counter[tuple[str, str]] = Counter()
    unresolved = 0
    chars: dict[str, list[int]] = defaultdict(list)
    lawful_paths: dict[str, set[str]] = defaultdict(set)
    for case in dataset:
        a = case.attributes
        scen[a["domain"]].add(a["scenario"])
        scen[case.split].add(a["scenario"])
        inputs[(a["domain"], case.split)] += 1
        labels[(case.split, case.reference.label.value)] += 1
        families[(a["family"], case.split)] += 1
        unresolved += 0 if case.reference.resolved else 1
        chars[case.reference.label.value].append(
            sum(len(d.text) for d in case.public.evidence.documents))
        if case.reference.label is Label.LAWFUL:
            lawful_paths[a["scenario"]].add(a["path"])
    domain_rows: list[list[object]] = [
        [d, len(scen[d]), inputs[(d, "dev")], inputs[(d, "test")]] for d in DOMAINS]
    domain_rows.append(["**total**", sum(len(scen[d]) for d in DOMAINS),
                        sum(inputs[(d, "dev")] for d in DOMAINS),
                        sum(inputs[(d, "test")] for d in DOMAINS)])
    family_rows: list[list[object]] = [
        [f, families[(f, "dev")], families[(f, "test")], TEST_FAMILY_INPUTS.get(f, 0)]
        for f in (*TEST_FAMILY_INPUTS, *DEV_ONLY_FAMILIES)]
    split_rows: list[list[object]] = [
        [s, len(scen[s]), labels[(s, "lawful")] + labels[(s, "forbidden")],
         labels[(s, "lawful")], labels[(s, "forbidden")]] for s in ("dev", "test")]
    different = sum(1 for paths in lawful_paths.values() if len(paths) == 2)
    mean = {k: round(sum(v) / len(v)) if v else 0 for k, v in chars.items()}
    return "\n\n".join([
        "Per domain (scenarios, dev inputs, test inputs):",
        _table(["domain", "scenarios", "dev inputs", "test inputs"], domain_rows),
        "Per split:",
        _table(["split", "scenarios", "inputs", "lawful", "forbidden"], split_rows),
        "Per family (inputs):",
        _table(["family", "dev inputs", "test inputs", "defined test inputs"], family_rows),
        f"Unresolved contexts: {unresolved}. Scenarios whose two lawful contexts use different "
        f"authorization paths: {different} of {len(lawful_paths)}. Mean evidence length "
        f"(characters): lawful {mean.get('lawful', 0)}, forbidden {mean.get('forbidden', 0)}.",
    ])
