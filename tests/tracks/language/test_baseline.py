"""The bag-of-words baseline API on fixture scenarios."""

from __future__ import annotations

import sys

import pytest

from authpairs.errors import MissingDependencyError
from authpairs.tracks.language.baseline import (
    classifier_baseline,
    public_text,
    run_baseline,
)
from authpairs.tracks.language.cases import load_language_dataset
from tests.tracks.language.conftest import GOOD


def test_public_text_contains_only_public_fields() -> None:
    case = next(c for c in load_language_dataset("test", root=GOOD)
                if c.attributes["context"] == "c3")
    text = public_text(case.public)
    assert "Brindle Goods refund rule R-2" in text
    assert "USD 50 each" in text
    assert '"action": "refund"' in text
    assert "ledger_transfer" in text
    assert "forbidden" not in text and "scope" not in text
    assert case.reference.expression is not None
    assert case.reference.expression.strip() not in text


def test_grouped_cross_validation_on_fixtures() -> None:
    cases = list(load_language_dataset(root=GOOD))
    result = run_baseline(cases, n_folds=5, split="all")
    assert result.n_folds == 2  # capped at the number of scenarios
    assert result.n_cases == 8 and result.n_scenarios == 2
    assert len(result.fold_accuracies) == 2
    assert 0 <= result.correct <= 8
    assert result.accuracy == pytest.approx(result.correct / 8)
    assert result.to_dict()["target_max"] == 0.60


def test_needs_two_scenarios() -> None:
    with pytest.raises(ValueError, match="two scenarios"):
        classifier_baseline(load_language_dataset(root=GOOD), split="test")


def test_missing_scikit_learn_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.feature_extraction.text", None)
    with pytest.raises(MissingDependencyError, match="scikit-learn"):
        run_baseline(list(load_language_dataset(root=GOOD)))
