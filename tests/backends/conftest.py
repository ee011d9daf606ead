"""Shared fixtures of the backend tests."""

from __future__ import annotations

import pytest

from tests.backends.main_job import MainJobRun, run_main_job


@pytest.fixture(scope="session")
def streamed_main_job(tmp_path_factory: pytest.TempPathFactory) -> MainJobRun:
    """The main job's slice, run once from scratch, streamed (the embedded server's default):
    the reference that the determinism test repeats and the streaming test runs unstreamed.
    Both tests are in the ``main-job`` xdist group, so one worker runs it once."""
    return run_main_job(tmp_path_factory.mktemp("main-job") / "streamed.sqlite")
