"""Shared paths for the native-policy tests: synthetic fixtures and the staged sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.tracks.native.build import NativeBuild, build_native
from authpairs.tracks.native.sources import repo_root
from tests.once import once_per_session

FIXTURES = Path(__file__).parent / "fixtures"
OPENFGA_GOOD = FIXTURES / "openfga" / "good"
OPENFGA_BAD = FIXTURES / "openfga" / "bad"
CEDAR_GOOD = FIXTURES / "cedar" / "good"
CEDAR_BAD = FIXTURES / "cedar" / "bad"
STAGED = repo_root().parent / "shared" / "sources"


@pytest.fixture(scope="session")
def staged_sources() -> Path:
    """The staged upstream sources: ``../shared/sources`` beside the repository root.

    Tests that use them are skipped, with the path in the reason, in a checkout without them
    (``authpairs data fetch-sources --dest ../shared/sources`` puts them there).
    """
    if not STAGED.is_dir():
        pytest.skip(f"the staged upstream sources are not present at {STAGED} "
                    "(authpairs data fetch-sources --dest <that folder> fetches them)")
    return STAGED


@pytest.fixture(scope="session")
def full_build(staged_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> NativeBuild:
    """The whole native track built from the staged sources (every upstream assertion
    replayed) in a test process, once per session: the slow tests of test_staged.py and
    test_determinism.py share it."""
    return once_per_session(tmp_path_factory, "native-build",
                            lambda _folder: build_native(staged_sources))
