"""Shared helpers for the language-track tests: fixture scenario files and YAML mutation."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "good"
REFUND = GOOD / "payments" / "fixture-refund-ceiling.yaml"
HANDOFF = GOOD / "clinical" / "fixture-unresolved-handoff.yaml"

Mutator = Callable[[dict[str, Any]], None]


@pytest.fixture
def good_root(tmp_path: Path) -> Path:
    """A writable copy of the good fixture scenarios."""
    root = tmp_path / "scenarios"
    shutil.copytree(GOOD, root)
    return root


@pytest.fixture
def mutate(good_root: Path) -> Callable[[Mutator], Path]:
    """Apply a mutation to the refund fixture's YAML data; return the rewritten file."""

    def apply(change: Mutator) -> Path:
        path = good_root / "payments" / "fixture-refund-ceiling.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
        return path

    return apply
