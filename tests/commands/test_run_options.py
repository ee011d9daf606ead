"""``authpairs run``: main-job defaults, sampling flags, conflicting options, the hint; ``runs``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from authpairs.analysis.scoring import Score
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cli import app
from authpairs.commands.run_options import config_of
from authpairs.report.hints import unavailable_hint
from authpairs.runs.config import RunConfig, load_config

REPO = Path(__file__).resolve().parents[2]


def cut_off(request: ChatRequest) -> ChatResponse:
    """A reviewer that always runs into the token limit (scripted backend)."""
    return ChatResponse(text='{"decision": "AL', finish_reason="length", input_tokens=10,
                        output_tokens=2048)


def test_cli_defaults_are_the_main_job() -> None:
    from_cli = config_of({})
    from_file = load_config(REPO / "configs" / "local-smollm2.yaml")
    assert from_cli.model_dump() == from_file.model_dump()
    assert from_cli.resolved_run_id() == from_file.resolved_run_id()


def test_other_backends_drop_the_local_only_settings() -> None:
    config = config_of({"backend": "openai"})
    assert config.reviewer.backend.kind == "openai"
    assert config.reviewer.sampling.repetition_penalty is None
    assert config.reviewer.sampling.seed == 7 and config.concurrency == 1


def test_sampling_settings_are_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunConfig] = []

    async def capture(config: RunConfig, progress: bool = True) -> None:
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr("authpairs.runs.api.run_async", capture)  # imported by the command
    result = CliRunner().invoke(app, [
        "run", "--backend", "openai", "--model", "m", "--base-url", "http://h:1/v1",
        "--top-p", "0.9", "--top-k", "5", "--min-p", "0.05", "--presence-penalty", "0.5",
        "--repetition-penalty", "1.1", "--temperature", "0.7", "--seed", "3",
        "--max-tokens", "99"])
    assert result.exit_code == 0, result.output
    sampling = seen[0].reviewer.sampling
    assert (sampling.top_p, sampling.top_k, sampling.min_p, sampling.presence_penalty,
            sampling.repetition_penalty, sampling.temperature, sampling.seed,
            sampling.max_tokens) == (0.9, 5, 0.05, 0.5, 1.1, 0.7, 3, 99)
    assert seen[0].reviewer.backend.kind == "openai"


def test_baseline_with_model_options_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "run", "--baseline", "always-allow", "--interface", "direct", "--temperature", "0.5",
        "--records", str(tmp_path / "r.sqlite")], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    flat = " ".join(result.output.replace("│", " ").split())  # the error panel may wrap
    assert "--interface, --temperature only apply to a model" in flat
    assert not (tmp_path / "r.sqlite").exists()


def test_mostly_unavailable_run_ends_with_a_hint(tmp_path: Path) -> None:
    config = tmp_path / "cut.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": "language", "split": "dev", "limit": 4, "enforce": False,
        "records": str(tmp_path / "r.sqlite"),
        "reviewer": {"interface": "structured",
                     "backend": {"kind": "scripted", "script": f"{Path(__file__).stem}:cut_off"},
                     "sampling": {"max_tokens": 2048}}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--quiet"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    hint = [line for line in result.output.splitlines() if line.startswith("hint:")]
    assert hint == ["hint: 4/4 answers are unavailable (length); the answers hit the output token "
                    "limit: raise --max-tokens (now 2048) or use --interface schema "
                    "(constrained decoding keeps answers short)"]
    listing = CliRunner().invoke(app, ["runs", "--records", str(tmp_path / "r.sqlite")],
                                 env={"COLUMNS": "200"})
    assert listing.exit_code == 0, listing.output
    for value in ("structured", "scripted", "language dev (first 4)", "4/4"):
        assert value in listing.output


def test_hint_threshold() -> None:
    structured = {"interface": "structured"}
    assert unavailable_hint(Score(n=10, unavailable=5,
                                  unavailable_by_reason={"length": 5}), structured) is None
    hint = unavailable_hint(Score(n=10, unavailable=6, unavailable_by_reason={"not_json": 6}),
                            structured)
    assert hint is not None and "--interface schema" in hint
    assert unavailable_hint(Score(), structured) is None


def test_another_dataset_keeps_its_own_default_split() -> None:
    assert config_of({"dataset": "mine.jsonl"}).split is None
    assert config_of({"dataset": "language"}).split == "dev"


def test_run_and_mcp_serve_take_the_same_run_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """One declaration (RUN_OPTIONS) gives both commands every option of a run, and the same
    flags give both the same configuration."""
    from typer.main import get_command

    from authpairs.commands.run_options import RUN_OPTIONS

    cli = get_command(app)
    serve_command = cli.commands["mcp"].commands["serve"]  # type: ignore[attr-defined]
    for command in (cli.commands["run"], serve_command):  # type: ignore[attr-defined]
        assert {o.name for o in RUN_OPTIONS} <= {p.name for p in command.params}
    seen: list[RunConfig] = []

    async def capture(config: RunConfig, **_: object) -> None:
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr("authpairs.runs.api.run_async", capture)
    monkeypatch.setattr("authpairs.agent.serve.serve", capture)
    flags = ["--dataset", "examples", "--interface", "direct", "--seed", "3", "--no-enforce",
             "--no-preflight", "--deadline", "9", "--guardrail-option", "k=1"]
    for args in (["run", *flags], ["mcp", "serve", *flags]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    assert seen[0] == seen[1]
    assert (seen[0].reviewer.sampling.seed, seen[0].enforce, seen[0].preflight) == (3, False,
                                                                                  False)
    refused = CliRunner().invoke(app, ["mcp", "serve", "--baseline", "always-allow", "--seed",
                                       "3"], env={"COLUMNS": "200"})
    assert refused.exit_code == 2 and "only apply to a model" in refused.output
