"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples

REPO_ROOT = Path(__file__).resolve().parents[1]

# The width the CLI's tables are read back at: what a pipe or CI log gets (120 columns), also in
# a pytest-xdist worker, whose output is no terminal either; a test of another width sets its own.
os.environ.setdefault("COLUMNS", "120")


@pytest.fixture
def examples() -> Dataset:
    """The bundled example dataset (8 cases, 2 scenarios)."""
    return load_examples()


@pytest.fixture
def records_path(tmp_path: Path) -> Path:
    """A fresh SQLite records path."""
    return tmp_path / "records.sqlite"
