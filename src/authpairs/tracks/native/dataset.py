"""The native-policy track as a dataset: from a cached JSONL build, or built from the sources."""

from __future__ import annotations

import os
from pathlib import Path

from authpairs.cases.dataset import Dataset, load_dataset

CACHE_ENV = "AUTHPAIRS_NATIVE_CASES"


def load_native_dataset(sources: Path | None = None, split: str | None = None,
                        cache: Path | None = None) -> Dataset:
    """The native-policy track, optionally one split ('dev' / 'test'; None or 'all' = both).

    With ``cache`` (or ``$AUTHPAIRS_NATIVE_CASES``) pointing at a JSONL file written by
    ``authpairs data build-native``, the cases are read from it and no engine runs; otherwise the
    track is built from ``sources`` (default: ``$AUTHPAIRS_SOURCES``, ``../shared/sources`` when
    it exists, else where ``authpairs data fetch-sources`` puts them).
    """
    cache_path = cache if cache is not None else os.environ.get(CACHE_ENV)
    if cache_path and sources is None:
        dataset = load_dataset(Path(cache_path), name="native")
    else:
        from authpairs.tracks.native.build import build_native

        dataset = Dataset(name="native", cases=build_native(sources).cases)
    return dataset.select(split)

