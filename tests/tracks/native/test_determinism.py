"""The native build is the same in every process: engine outputs that are sets are sorted.

``cedarpy`` returns the determining policies (``diagnostics.reasons``) in an order that changes
from process to process; the stored cases must not.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cedarpy
import pytest

from authpairs.cases.dataset import Dataset
from authpairs.tracks.native.build import NativeBuild
from authpairs.tracks.native.cedar_engine import evaluate_example
from authpairs.tracks.native.cedar_import import load_cedar_example

from .conftest import CEDAR_GOOD

_CEDAR_HASH = """
import sys
from pathlib import Path
from authpairs.cases.dataset import Dataset
from authpairs.tracks.native.build import label_cedar_tree, split_drafts
from authpairs.tracks.native.cases import cedar_drafts
cases = split_drafts(cedar_drafts(label_cedar_tree(Path(sys.argv[1]))))
print(Dataset("native", cases).manifest().full_sha256)
"""

_FULL_HASH = """
import sys
from authpairs.cases.dataset import Dataset
from authpairs.tracks.native.build import build_native
print(Dataset("native", build_native(sys.argv[1]).cases).manifest().full_sha256)
"""


@dataclass
class _Diagnostics:
    reasons: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class _Result:
    decision: Any
    allowed: bool
    diagnostics: _Diagnostics


def test_reasons_and_errors_are_stored_sorted(monkeypatch: pytest.MonkeyPatch) -> None:
    example = load_cedar_example(CEDAR_GOOD / "clinic")

    def unordered(requests: list[Any], *_: Any, **__: Any) -> list[_Result]:
        return [_Result(cedarpy.Decision.Allow if r.expected else cedarpy.Decision.Deny,
                        r.expected, _Diagnostics(["zeta", "alpha", "mid"], ["e2", "e1"]))
                for r in example.requests][:len(requests)]

    monkeypatch.setattr(cedarpy, "is_authorized_batch", unordered)
    answers = evaluate_example(example)
    assert answers and all(a.reasons == ("alpha", "mid", "zeta") for a in answers)
    assert all(a.errors == ("e1", "e2") for a in answers)


def _hash_in_subprocess(script: str, path: Path) -> str:
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, check=True, timeout=900)
    return done.stdout.strip().splitlines()[-1]


def test_cedar_cases_have_one_hash_across_processes(staged_sources: Path) -> None:
    tree = staged_sources / "cedar-examples"
    hashes = {_hash_in_subprocess(_CEDAR_HASH, tree) for _ in range(3)}
    assert len(hashes) == 1, hashes


@pytest.mark.slow
def test_native_build_has_one_full_hash_across_processes(staged_sources: Path,
                                                         full_build: NativeBuild) -> None:
    """The session's build (made in a pytest process, shared with test_staged.py) and one made
    in a fresh interpreter give one full hash."""
    here = Dataset("native", full_build.cases).manifest().full_sha256
    other = _hash_in_subprocess(_FULL_HASH, staged_sources)
    assert len(here) == 64 and here == other
