"""Resume by what matters: the run identity hashes only result-relevant settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.api import run
from authpairs.runs.config import config_from_dict
from authpairs.runs.store import RecordStoreError

BASE = {"dataset": "examples", "split": "all",
        "reviewer": {"interface": "direct", "backend": {
            "kind": "openai", "model": "qwen", "base_urls": ["http://gpu-1:8000/v1"]}}}


def _sha(**changes: object) -> str:
    return config_from_dict(BASE, changes).sha256()


def test_operational_settings_do_not_change_the_identity() -> None:
    same = _sha()
    assert _sha(**{"concurrency": 16}) == same
    assert _sha(**{"infra_retries": 9}) == same
    assert _sha(**{"records": "elsewhere.sqlite"}) == same
    assert _sha(**{"run_id": "named"}) == same
    assert _sha(**{"reviewer.backend.base_urls": ["http://127.0.0.1:8000/v1/",
                                                  "http://gpu-2:8000/v1"]}) == same
    assert _sha(**{"reviewer.backend.deadline_s": 30.0}) == same
    assert _sha(**{"reviewer.backend.concurrency_per_endpoint": 1}) == same
    assert _sha(**{"reviewer.backend.api_key_env": "OTHER_KEY"}) == same


@pytest.mark.parametrize("change", [
    {"dataset": "language"}, {"split": "dev"}, {"limit": 3},
    {"reviewer.interface": "structured"}, {"reviewer.backend.model": "other"},
    {"reviewer.sampling.temperature": 0.7}, {"reviewer.sampling.seed": 1},
    {"reviewer.sampling.max_tokens": 99}, {"enforce": False},
    {"reviewer.backend.extra_body": {"chat_template_kwargs": {"enable_thinking": True}}},
])
def test_result_relevant_settings_change_the_identity(change: dict[str, object]) -> None:
    assert _sha(**change) != _sha()


def test_changing_a_result_relevant_setting_under_one_run_id_is_an_error(tmp_path: Path) -> None:
    base = {"dataset": "examples", "split": "all", "enforce": False, "run_id": "fixed",
            "records": str(tmp_path / "r.sqlite"), "reviewer": {"baseline": "always-allow"}}
    run(config_from_dict(base))
    run(config_from_dict({**base, "concurrency": 7, "infra_retries": 0}))  # resumes: nothing
    with pytest.raises(RecordStoreError, match="different configuration"):  # result-relevant
        run(config_from_dict({**base, "reviewer": {"baseline": "always-block"}}))  # changed
    with pytest.raises(RecordStoreError, match="different"):
        run(config_from_dict({**base, "limit": 2}))
