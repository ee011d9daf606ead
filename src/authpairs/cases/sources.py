"""Resolve a dataset name from a run configuration into a :class:`Dataset`.

Names: ``examples`` (a small bundled example set), ``language`` (the language track),
``native`` (the native-policy track, built from the staged upstream sources), or a path to a JSONL
case file (e.g. written by ``authpairs data import-openfga``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from authpairs.cases.dataset import Dataset, DatasetError, load_dataset
from authpairs.cases.hf import load_hf_export

EXAMPLES_FILE = "examples.jsonl"


def load_examples() -> Dataset:
    """The bundled example set (a few hand-written cases, for smoke runs and tests)."""
    path = resources.files("authpairs.cases") / "data" / EXAMPLES_FILE
    with resources.as_file(path) as real:
        return load_dataset(real, name="examples")


def resolve_dataset(name: str) -> Dataset:
    """Load the dataset a configuration names."""
    if name == "examples":
        return load_examples()
    if name == "language":
        from authpairs.tracks.language import load_language_dataset

        return load_language_dataset()
    if name == "native":
        from authpairs.tracks.native import load_native_dataset

        return load_native_dataset()
    path = Path(name)
    if path.is_dir():  # a folder written by `authpairs data export-hf`
        return load_hf_export(path)
    if path.suffix == ".jsonl" or path.exists():
        return load_dataset(path)
    raise DatasetError(name, "unknown dataset: use 'examples', 'language', 'native' or a .jsonl")
