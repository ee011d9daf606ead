"""configs/paper/: the paper's eight reviewer configurations and the matched study's NeMo arm
load and build."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from authpairs.runs.config import load_config
from authpairs.runs.reviewers import make_reviewer

PAPER = Path(__file__).resolve().parents[3] / "configs" / "paper"
EXPECTED = {"qwen35-9b", "qwen35-27b-thinking", "nemotron-safety", "safeguard",
            "granite-guardian", "policyguard", "nemo-self-check", "qwen3guard",
            "nemo-self-check-shared-prompt"}


def test_the_configurations_exist() -> None:
    assert {p.stem for p in PAPER.glob("*.yaml")} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_configuration_builds_against_vllm(name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PAPER.parents[1])  # a rails folder path is relative to the working dir
    config = load_config(PAPER / f"{name}.yaml",
                         {"reviewer.backend.base_urls": ["http://127.0.0.1:9/v1"]})
    backend = config.reviewer.backend
    assert backend.kind == "openai" and backend.deadline_s == 3600
    assert config.dataset == "language" and config.split == "test"
    if name.startswith("nemo-self-check"):
        pytest.importorskip("nemoguardrails")
    async with AsyncExitStack() as stack:
        reviewer = await make_reviewer(config.reviewer, stack)
        assert reviewer.template_hashes()
    expected_limit = {"policyguard": 4, "qwen3guard": 512}.get(name, 16384)
    assert config.reviewer.sampling.max_tokens == expected_limit
