"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def examples() -> Dataset:
    """The bundled example dataset (8 cases, 2 scenarios)."""
    return load_examples()


@pytest.fixture
def records_path(tmp_path: Path) -> Path:
    """A fresh SQLite records path."""
    return tmp_path / "records.sqlite"
