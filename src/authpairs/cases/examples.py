"""The bundled example set: a few hand-written cases for smoke runs and tests."""

from __future__ import annotations

from importlib import resources

from authpairs.cases.dataset import Dataset, load_dataset

EXAMPLES_FILE = "examples.jsonl"


def load_examples() -> Dataset:
    """The bundled example set (a few hand-written cases, for smoke runs and tests)."""
    path = resources.files("authpairs.cases") / "data" / EXAMPLES_FILE
    with resources.as_file(path) as real:
        return load_dataset(real, name="examples")
