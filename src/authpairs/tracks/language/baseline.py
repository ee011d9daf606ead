"""Bag-of-words classifier baseline: can the label be guessed from surface words?

A CountVectorizer (unigrams + bigrams) + LogisticRegression (liblinear) model is trained on the
rendered public text of each context (policy, request, evidence) and scored with
scenario-grouped cross-validation (``GroupKFold``: all four contexts of a scenario are in the
same fold). Accuracy near 50% means the wording carries no label signal; the design target is at
most 60%.

scikit-learn is an optional (dev) dependency and is imported only when the baseline runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case, Label, PublicCase
from authpairs.errors import MissingDependencyError

TARGET_MAX_ACCURACY = 0.60


@dataclass(frozen=True)
class BaselineResult:
    """Cross-validated accuracy of the bag-of-words baseline."""

    split: str
    n_cases: int
    n_scenarios: int
    n_folds: int
    correct: int
    fold_accuracies: list[float]

    @property
    def accuracy(self) -> float:
        """Pooled accuracy over all held-out predictions."""
        return self.correct / self.n_cases if self.n_cases else 0.0

    @property
    def meets_target(self) -> bool:
        """Accuracy at most :data:`TARGET_MAX_ACCURACY`."""
        return self.accuracy <= TARGET_MAX_ACCURACY

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {"split": self.split, "n_cases": self.n_cases, "n_scenarios": self.n_scenarios,
                "n_folds": self.n_folds, "correct": self.correct, "accuracy": self.accuracy,
                "fold_accuracies": self.fold_accuracies, "target_max": TARGET_MAX_ACCURACY}


def public_text(public: PublicCase) -> str:
    """Plain-text rendering of everything a reviewer sees (policy, request, evidence, effect)."""
    parts = [f"POLICY\n{public.policy.text}",
             "REQUEST\n" + json.dumps(public.request.model_dump(mode="json"), sort_keys=True)]
    for doc in public.evidence.documents:
        parts.append(f"EVIDENCE {doc.doc_id} issued by {doc.issuer} at {doc.time}\n{doc.text}")
    if public.effect is not None:
        parts.append("EFFECT\n" + json.dumps(public.effect.model_dump(mode="json"),
                                             sort_keys=True))
    return "\n\n".join(parts)


def run_baseline(cases: list[Case], n_folds: int = 5, split: str = "test") -> BaselineResult:
    """Scenario-grouped cross-validated accuracy of CountVectorizer + LogisticRegression."""
    try:
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
        from sklearn.pipeline import make_pipeline
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("scikit-learn", "dev", "the classifier baseline") from exc
    texts = [public_text(c.public) for c in cases]
    labels = [1 if c.reference.label is Label.LAWFUL else 0 for c in cases]
    groups = [c.cluster for c in cases]
    n_groups = len(set(groups))
    if n_groups < 2:
        raise ValueError("the baseline needs at least two scenarios")
    folds = min(n_folds, n_groups)
    correct = 0
    accuracies: list[float] = []
    for train, held in GroupKFold(n_splits=folds).split(texts, labels, groups):
        model = make_pipeline(CountVectorizer(lowercase=True, ngram_range=(1, 2)),
                              LogisticRegression(solver="liblinear"))
        model.fit([texts[i] for i in train], [labels[i] for i in train])
        predicted = model.predict([texts[i] for i in held])
        hits = sum(int(p == labels[i]) for p, i in zip(predicted, held, strict=True))
        correct += hits
        accuracies.append(hits / len(held))
    return BaselineResult(split=split, n_cases=len(cases), n_scenarios=n_groups, n_folds=folds,
                          correct=correct, fold_accuracies=accuracies)


def classifier_baseline(dataset: Dataset, split: str = "test",
                        n_folds: int = 5) -> BaselineResult:
    """Run the baseline on one split of ``dataset`` ('dev', 'test' or 'all')."""
    chosen = dataset.select(split)
    return run_baseline(list(chosen), n_folds=n_folds, split=split)
