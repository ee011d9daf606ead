"""Dataset tracks by name, and the resolution of a configuration's ``dataset`` into cases.

Built-in tracks: ``examples`` (a few bundled cases), ``language`` (the language track),
``native`` (the native-policy track). A plugin adds a track through the ``authpairs.tracks``
entry-point group: a function with no required arguments that returns a
:class:`~authpairs.cases.dataset.Dataset`. Anything else is read as a path: a JSONL file of cases
or a folder written by ``authpairs data export-hf``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from authpairs.cases.dataset import Dataset, DatasetError, load_dataset
from authpairs.cases.hf import load_hf_export
from authpairs.registry import Registry

TrackLoader = Callable[[], Dataset]
"""A track: a function returning the whole dataset (all splits)."""


def _check(raw: object) -> TrackLoader:
    if not callable(raw):
        raise TypeError(f"{raw!r} is not callable")
    return raw


TRACKS: Registry[TrackLoader] = Registry("tracks", _check)
"""Track name -> loader."""
TRACKS.add_lazy("examples", "authpairs.cases.examples:load_examples")
TRACKS.add_lazy("language", "authpairs.tracks.language.cases:load_language_dataset")
TRACKS.add_lazy("native", "authpairs.tracks.native.dataset:load_native_dataset")


def resolve_dataset(name: str) -> Dataset:
    """Load the dataset a configuration names: a registered track or a JSONL file."""
    if name in TRACKS:
        dataset = TRACKS.get(name)()
        if not isinstance(dataset, Dataset):
            raise DatasetError(name, f"track '{name}' did not return a Dataset")
        return dataset
    path = Path(name)
    if path.is_dir():  # a folder written by `authpairs data export-hf`
        return load_hf_export(path)
    if path.suffix == ".jsonl" or path.exists():
        return load_dataset(path)
    known = ", ".join(TRACKS.names())
    raise DatasetError(name, f"unknown dataset: use a track ({known}) or a .jsonl file")
