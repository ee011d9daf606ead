"""Shared fixture: a running LocalEnforcer in a pytest temp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from authpairs.enforce.enforcer import LocalEnforcer


@pytest.fixture
def enforcer(tmp_path: Path) -> Iterator[LocalEnforcer]:
    """A running enforcer whose sandbox lives under the test's temp dir."""
    with LocalEnforcer(tmp_path) as enf:
        yield enf
