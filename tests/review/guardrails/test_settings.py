"""Vendor and paper settings: on every card, in every paper configuration, in the run header."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from authpairs.backends.config import SamplingConfig
from authpairs.cli import app
from authpairs.review.guardrails.cards import card_names, read_card
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.guardrails.settings import (
    PAPER,
    SETTINGS,
    VENDOR,
    Recommended,
    settings_keys,
    settings_record,
    settings_table,
)
from authpairs.review.interfaces import get_interface
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, load_config
from authpairs.runs.reviewers import make_reviewer
from authpairs.runs.store import RecordStore

PAPER_CONFIGS = Path(__file__).resolve().parents[3] / "configs" / "paper"
GUARD_CONFIGS = ["granite-guardian", "nemotron-safety", "policyguard", "qwen3guard", "safeguard",
                 "nemo-self-check", "nemo-self-check-shared-prompt"]
VENDOR_CARDS = {"qwen3guard", "granite-guardian", "nemotron-safety", "nemo-self-check",
                "safeguard", "llama-guard", "policyguard"}


def test_every_card_shows_the_vendors_and_the_papers_settings() -> None:
    assert set(card_names()) == VENDOR_CARDS
    for name in card_names():
        table = settings_table(name)
        assert table.count("\n| vendor") >= 1, name
        assert table in read_card(name), f"card {name!r}: its settings table is not the module's"
    # every recommendation belongs to a card
    assert {key.split(":")[0] for key in [*VENDOR, *PAPER]} == VENDOR_CARDS
    assert set(PAPER) <= set(VENDOR)


@pytest.mark.parametrize(("name", "options"), [
    ("qwen3guard", {}), ("granite-guardian", {}), ("granite-guardian", {"family": "4.x"}),
    ("nemotron-safety", {}), ("nemotron-safety", {"thinking": False}),
    ("nemotron-safety", {"family": "reasoning-4b"}),
    ("nemotron-safety", {"family": "nemoguard-8b"}),
    ("safeguard", {}), ("llama-guard", {}), ("llama-guard", {"version": 4}), ("policyguard", {})])
def test_every_native_interface_has_a_vendor_recommendation(name: str,
                                                            options: dict[str, Any]) -> None:
    interface = get_interface(name, options)
    assert isinstance(interface, NativeInterface)
    key = interface.settings_key()
    assert key in VENDOR and key in settings_keys(name)
    record = interface.settings_record(SamplingConfig())
    assert record is not None and record["vendor"]["source"] == VENDOR[key].source


def test_the_json_interfaces_have_no_vendor() -> None:
    assert get_interface("direct").settings_record(SamplingConfig()) is None


@pytest.mark.parametrize(("used", "follows"), [
    ({"temperature": 1.0, "top_p": 1.0, "max_tokens": 16384}, "vendor"),
    ({"temperature": 0.0, "top_p": None, "max_tokens": 16384}, "paper"),
    ({"temperature": 0.0, "top_p": 1.0, "max_tokens": 16384}, "paper"),  # paper leaves top_p
    ({"temperature": 0.0, "top_p": None, "max_tokens": 2048}, "custom"),
    ({"temperature": 1.0, "top_p": 0.9, "max_tokens": 512}, "custom")])
def test_a_run_follows_the_vendor_the_paper_or_neither(used: dict[str, Any],
                                                       follows: str) -> None:
    record = settings_record("safeguard", used)
    assert record is not None and record["follows"] == follows
    assert record["used"] == {name: used.get(name) for name in SETTINGS}
    assert record["vendor"] == {"temperature": 1.0, "top_p": 1.0,
                                "source": VENDOR["safeguard"].source}
    assert record["paper"]["max_tokens"] == 16384


def test_both_and_a_vendor_that_states_nothing() -> None:
    both = Recommended("paper", "p", {"max_tokens": 4})
    record = settings_record("policyguard", {"temperature": 0.0, "max_tokens": 4})
    assert record is not None and record["follows"] == "paper"  # the card states nothing
    both_record = settings_record("policyguard", {"temperature": 0.0, "max_tokens": 4},
                                  vendor=both)
    assert both_record is not None and both_record["follows"] == "vendor and paper"
    assert settings_record("direct", {"max_tokens": 4}) is None


@pytest.mark.parametrize("name", GUARD_CONFIGS)
async def test_each_paper_configuration_says_and_records_that_it_follows_the_paper(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name.startswith("nemo"):
        pytest.importorskip("nemoguardrails")
    monkeypatch.chdir(PAPER_CONFIGS.parents[1])
    path = PAPER_CONFIGS / f"{name}.yaml"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("sampling:"))
    comment = " ".join(lines[at - 3:at])
    assert "The paper's sampling" in comment and "--card" in comment, name
    config = load_config(path, {"reviewer.backend.base_urls": ["http://127.0.0.1:9/v1"]})
    async with AsyncExitStack() as stack:
        reviewer = await make_reviewer(config.reviewer, stack)
        settings = reviewer.describe()["settings"]
    assert settings["follows"] == "paper", (name, settings)
    assert settings["used"]["max_tokens"] == config.reviewer.sampling.max_tokens
    assert settings["vendor"]["source"] and settings["paper"]["source"]


def answer_safe(request: object) -> str:
    """A scripted Qwen3Guard that finds everything safe."""
    return "Safety: Safe"


@pytest.mark.parametrize(("max_tokens", "follows"), [(128, "vendor"), (512, "paper"),
                                                     (300, "custom")])
async def test_the_run_header_records_the_settings_a_run_followed(
        tmp_path: Path, max_tokens: int, follows: str) -> None:
    config = RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 1, "enforce": False,
        "records": str(tmp_path / "runs.sqlite"),
        "reviewer": {"interface": "qwen3guard",
                     "backend": {"kind": "scripted", "script": f"{__name__}:answer_safe"},
                     "sampling": {"temperature": 0.0, "max_tokens": max_tokens}}})
    state = await run_async(config, progress=False)
    with RecordStore(tmp_path / "runs.sqlite") as store:
        info = store.get_run(state.run_id)
    assert info is not None
    settings = info.config["reviewer"]["settings"]
    assert settings["follows"] == follows
    assert settings["used"] == {"temperature": 0.0, "top_p": None, "max_tokens": max_tokens}
    assert settings["vendor"]["max_tokens"] == 128 and settings["paper"]["max_tokens"] == 512


def test_the_cli_shows_both_on_the_card() -> None:
    for name in ("nemo-self-check", "safeguard"):
        result = CliRunner().invoke(app, ["guardrails", "--card", name])
        assert result.exit_code == 0, result.output
        assert settings_table(name) in result.output
        assert "| vendor" in result.output and "| paper" in result.output
