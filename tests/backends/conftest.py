"""Shared fixtures of the backend tests."""

from __future__ import annotations

import pytest

from tests.backends.main_job import MainJobRun, run_main_job
from tests.once import once_per_session


@pytest.fixture(scope="session")
def streamed_main_job(tmp_path_factory: pytest.TempPathFactory) -> MainJobRun:
    """The main job's slice, run from scratch once per session, streamed (the embedded server's
    default): the run that the determinism test repeats and the streaming test runs
    unstreamed."""
    return once_per_session(tmp_path_factory, "main-job",
                            lambda folder: run_main_job(folder / "streamed.sqlite"))
