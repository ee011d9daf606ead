"""Bring your own: turn a user's store test file(s) or Cedar folder(s) into a labelled track.

The same importers and engines as the benchmark are used; every assertion is labelled by the
engine, and an engine answer that differs from the file's own expectation is an error naming
the file and the assertion. All cases are put in the 'test' split.
"""

from __future__ import annotations

from pathlib import Path

from authpairs.cases.dataset import Dataset
from authpairs.tracks.native.build import cedar_version, fga_version, split_drafts
from authpairs.tracks.native.cases import SourceInfo, cedar_drafts, openfga_drafts
from authpairs.tracks.native.cedar_engine import evaluate_example
from authpairs.tracks.native.cedar_import import find_example_folders, load_cedar_example
from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.openfga_engine import run_suites
from authpairs.tracks.native.openfga_import import find_test_files, load_fga_suite
from authpairs.tracks.native.sources import read_provenance

USER_TRACK = "native-user"


def import_openfga(path: Path | str, name: str | None = None) -> Dataset:
    """Label every Check assertion of a store test file (or of all under a folder)."""
    path = Path(path)
    if not path.exists():
        raise NativeImportError(path, "no such file or folder")
    files = find_test_files(path)
    if not files:
        raise NativeImportError(path, "no *.fga.yaml store test files found")
    base = path if path.is_dir() else path.parent
    suites = [load_fga_suite(f) for f in files]
    if not any(s.checks for s in suites):
        raise NativeImportError(path, "no Check assertions to label")
    runs = run_suites(suites)
    dataset = name or (path.stem.removesuffix(".fga") if path.is_file() else path.name)
    provenance, version = read_provenance(base), fga_version()
    items = []
    for run in runs:
        rel = run.suite.path.relative_to(base).as_posix()
        info = SourceInfo(dataset=dataset, track=USER_TRACK, relpath=rel,
                          group=f"openfga/{run.suite.path.parent.name}", provenance=provenance,
                          provenance_relpath=rel, engine_version=version)
        items.append((run, info))
    return Dataset(name=dataset, cases=split_drafts(openfga_drafts(items), dev_fraction=0.0))


def import_cedar(path: Path | str, name: str | None = None, use_schema: bool = True) -> Dataset:
    """Label every request of a Cedar example folder (or of all example folders under it)."""
    path = Path(path)
    if not path.is_dir():
        raise NativeImportError(path, "a Cedar example must be a folder")
    folders = find_example_folders(path)
    if not folders:
        raise NativeImportError(path, "no folder with *.cedar policies and ALLOW/ or DENY/ "
                                      "requests found")
    dataset = name or path.name
    provenance, version = read_provenance(path), cedar_version()
    items = []
    for folder in folders:
        example = load_cedar_example(folder, path, use_schema=use_schema)
        rel = folder.relative_to(path).as_posix()
        relpath = path.name if rel == "." else f"{path.name}/{rel}"
        info = SourceInfo(dataset=dataset, track=USER_TRACK, relpath=relpath,
                          group=f"cedar/{folder.name}", provenance=provenance,
                          provenance_relpath=rel, engine_version=version)
        items.append((example, evaluate_example(example), info))
    return Dataset(name=dataset, cases=split_drafts(cedar_drafts(items), dev_fraction=0.0))
