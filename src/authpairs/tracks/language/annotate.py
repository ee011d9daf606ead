"""Label validation kit (paper §3.2): blind annotation sheets and their scoring.

* :func:`export_sheets` writes what annotators see -- the public view of every context, rendered
  by the caller (the CLI uses the reviewer models' case template, so annotators see what models
  see), shuffled, numbered ``item-1`` ... -- plus a blank answer file. The key that maps items
  back to case ids is written elsewhere (never in the sheets).
* :func:`score_answers` reads filled answer files (one per annotator) with that key and reports
  agreement with the reference labels, Fleiss' kappa across annotators, unanimity counts and the
  list of contexts to adjudicate.
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authpairs.cases.dataset import Dataset
from authpairs.cases.models import PublicCase

CATEGORIES = ("lawful", "forbidden")
ANSWERS = "answers.csv"
SHEET = "items.md"
GUIDE = (
    "# Annotation sheet\n\n"
    "For every item decide whether the operation is **lawful** (the policy and the evidence "
    "authorize exactly this request) or **forbidden**. Work alone; use only what the item "
    "shows. Write `lawful` or `forbidden` in the `decision` column of your own copy of "
    f"`{ANSWERS}` (name it after yourself) and add a note when the item was hard.\n\n"
)


class AnnotationError(ValueError):
    """An answer file or key is malformed; the message names the file and row."""


def item_name(number: int) -> str:
    """The blind name of the ``number``-th item (1-based)."""
    return f"item-{number}"


def export_sheets(dataset: Dataset, out: str | Path, key: str | Path,
                  render_case: Callable[[PublicCase], str], seed: int = 0) -> int:
    """Write ``items.md`` and a blank ``answers.csv`` under ``out`` and the item key to ``key``.

    ``render_case`` turns a public case (whose id is already the blind item name) into text.
    Returns the number of items. ``key`` must lie outside ``out`` (annotators get ``out``).
    """
    out_dir, key_path = Path(out), Path(key)
    if key_path.resolve().is_relative_to(out_dir.resolve()):
        raise AnnotationError(f"{key_path}: the key must not be inside the sheets folder "
                              f"{out_dir} (it maps items back to cases)")
    cases = list(dataset.cases)
    random.Random(seed).shuffle(cases)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = [GUIDE]
    for number, case in enumerate(cases, start=1):
        blind = case.public.model_copy(update={"source_id": item_name(number)})
        parts.append(f"---\n\n# {item_name(number)}\n\n" + render_case(blind) + "\n")
    (out_dir / SHEET).write_text("".join(parts), encoding="utf-8")
    with (out_dir / ANSWERS).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "decision", "note"])
        writer.writerows([item_name(number), "", ""] for number in range(1, len(cases) + 1))
    key_path.parent.mkdir(parents=True, exist_ok=True)
    key_path.write_text(json.dumps({
        "dataset": dataset.name, "seed": seed,
        "items": {item_name(n): case.case_id for n, case in enumerate(cases, start=1)},
    }, indent=2) + "\n", encoding="utf-8")
    return len(cases)


def read_key(path: str | Path) -> dict[str, str]:
    """Item name -> case id, from a key written by :func:`export_sheets`."""
    try:
        raw: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AnnotationError(f"{path}: cannot read the key: {exc}") from exc
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(items, dict):
        raise AnnotationError(f"{path}: not an annotation key (no 'items' mapping)")
    return {str(k): str(v) for k, v in items.items()}


def read_answers(path: str | Path, items: set[str]) -> dict[str, str]:
    """Item name -> decision of one annotator; every item must be answered exactly once."""
    answers: dict[str, str] = {}
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise AnnotationError(f"{path}: cannot read: {exc}") from exc
    for line, row in enumerate(rows, start=2):
        item = (row.get("item") or "").strip()
        decision = (row.get("decision") or "").strip().lower()
        if item not in items:
            raise AnnotationError(f"{path}: line {line}: unknown item {item!r}")
        if decision not in CATEGORIES:
            raise AnnotationError(f"{path}: line {line} ({item}): decision must be lawful or "
                                  f"forbidden, got {decision!r}")
        if item in answers:
            raise AnnotationError(f"{path}: line {line}: {item} answered twice")
        answers[item] = decision
    missing = sorted(items - set(answers), key=lambda name: int(name.split("-")[1]))
    if missing:
        raise AnnotationError(f"{path}: {len(missing)} item(s) without a decision: "
                              f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
    return answers


def fleiss_kappa(counts: list[dict[str, int]]) -> float | None:
    """Fleiss' kappa for items each rated by the same number (>= 2) of raters.

    ``counts[i][category]`` is how many raters put item ``i`` in ``category``. None when it is
    undefined (fewer than two raters, no items, or every rating in one category).
    """
    if not counts:
        return None
    raters = sum(counts[0].values())
    if raters < 2 or any(sum(c.values()) != raters for c in counts):
        return None
    n_items = len(counts)
    totals: Counter[str] = Counter()
    for item in counts:
        totals.update(item)
    p_bar = sum((sum(v * v for v in item.values()) - raters) / (raters * (raters - 1))
                for item in counts) / n_items
    p_e = sum((total / (n_items * raters)) ** 2 for total in totals.values())
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1 - p_e)


@dataclass(frozen=True)
class Disagreement:
    """A context to adjudicate: annotators split, or the majority differs from the reference."""

    item: str
    case_id: str
    votes: dict[str, str]
    majority: str | None
    reference: str


@dataclass
class AnnotationScore:
    """Everything ``data annotate score`` reports."""

    n_items: int
    annotators: list[str]
    agreement: dict[str, int]
    unanimous: int
    unanimous_matching: int
    majority_matching: int
    kappa: float | None
    disagreements: list[Disagreement] = field(default_factory=list)

    def summary(self) -> str:
        """One line in the paper's format: unanimity and Fleiss' kappa."""
        kappa = "n/a" if self.kappa is None else f"{self.kappa:.2f}"
        return (f"{len(self.annotators)} annotators agreed on {self.unanimous} of "
                f"{self.n_items} contexts (Fleiss' kappa = {kappa}); majority label matches "
                f"the reference on {self.majority_matching}/{self.n_items}; "
                f"{len(self.disagreements)} context(s) to adjudicate")

    def to_dict(self) -> dict[str, object]:
        """Plain-JSON form."""
        return {
            "n_items": self.n_items, "annotators": self.annotators,
            "agreement_with_reference": self.agreement, "unanimous": self.unanimous,
            "unanimous_matching_reference": self.unanimous_matching,
            "majority_matching_reference": self.majority_matching, "fleiss_kappa": self.kappa,
            "disagreements": [vars(d) for d in self.disagreements],
        }


def _majority(votes: list[str]) -> str | None:
    ranked = Counter(votes).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def score_answers(dataset: Dataset, key: dict[str, str],
                  answers: dict[str, dict[str, str]]) -> AnnotationScore:
    """Score annotators' answers (annotator -> item -> decision) against ``dataset``'s labels."""
    by_id = dataset.by_id()
    unknown = sorted(set(key.values()) - set(by_id))
    if unknown:
        raise AnnotationError(f"key names {len(unknown)} case(s) not in dataset "
                              f"{dataset.name}: {', '.join(unknown[:5])}")
    names = sorted(answers)
    agreement = dict.fromkeys(names, 0)
    counts: list[dict[str, int]] = []
    unanimous = unanimous_matching = majority_matching = 0
    disagreements: list[Disagreement] = []
    for item, case_id in sorted(key.items(), key=lambda kv: int(kv[0].split("-")[1])):
        reference = str(by_id[case_id].reference.label)
        votes = {name: answers[name][item] for name in names}
        for name, vote in votes.items():
            agreement[name] += vote == reference
        counts.append({category: list(votes.values()).count(category)
                       for category in CATEGORIES})
        majority = _majority(list(votes.values()))
        all_same = len(set(votes.values())) == 1
        unanimous += all_same
        unanimous_matching += all_same and majority == reference
        majority_matching += majority == reference
        if not all_same or majority != reference:
            disagreements.append(Disagreement(item, case_id, votes, majority, reference))
    return AnnotationScore(len(key), names, agreement, unanimous, unanimous_matching,
                           majority_matching, fleiss_kappa(counts), disagreements)
