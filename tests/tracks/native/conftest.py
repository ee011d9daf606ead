"""Shared paths for the native-policy tests: synthetic fixtures and the staged sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.tracks.native.sources import repo_root

FIXTURES = Path(__file__).parent / "fixtures"
OPENFGA_GOOD = FIXTURES / "openfga" / "good"
OPENFGA_BAD = FIXTURES / "openfga" / "bad"
CEDAR_GOOD = FIXTURES / "cedar" / "good"
CEDAR_BAD = FIXTURES / "cedar" / "bad"


@pytest.fixture(scope="session")
def staged_sources() -> Path:
    """The staged upstream sources: ``../shared/sources`` beside the repository root."""
    path = repo_root().parent / "shared" / "sources"
    if not path.is_dir():
        pytest.skip(f"the staged OpenFGA and Cedar sources are not at {path} (a checkout outside "
                    "this workplace: fetch them with `authpairs data fetch-sources`)")
    return path
