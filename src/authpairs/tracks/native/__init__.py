"""The native-policy track: public OpenFGA sample stores and Cedar examples, labelled by engines.

Entry points:

* :func:`load_native_dataset` -- the track as a :class:`~authpairs.cases.dataset.Dataset`, built
  from the staged sources (or read from a cached JSONL build).
* :func:`~authpairs.tracks.native.build.build_native` -- build with engine answers and timings.
* :func:`~authpairs.tracks.native.verify.verify_native` -- replay every upstream assertion.
* :func:`~authpairs.tracks.native.byo.import_openfga` / ``import_cedar`` -- a user's own files.
"""

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
    track is built from ``sources`` (default: ``$AUTHPAIRS_SOURCES`` or ``../shared/sources``).
    """
    cache_path = cache if cache is not None else os.environ.get(CACHE_ENV)
    if cache_path and sources is None:
        dataset = load_dataset(Path(cache_path), name="native")
    else:
        from authpairs.tracks.native.build import build_native

        dataset = Dataset(name="native", cases=build_native(sources).cases)
    return dataset.select(split)


__all__ = ["CACHE_ENV", "load_native_dataset"]
