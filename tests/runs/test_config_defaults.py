"""One source of defaults: ``RunConfig(...)`` in Python, ``RunConfig.model_validate``, a
configuration file, ``authpairs.run({...})`` and ``authpairs run`` on the command line resolve
what they leave out to the main job's values (:mod:`authpairs.main_job`), field by field, with
the same run id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import authpairs.api
import authpairs.main_job as main_job
from authpairs.backends.config import LocalBackendConfig, OpenAIBackendConfig, SamplingConfig
from authpairs.cli import app
from authpairs.errors import ConfigError
from authpairs.runs.config import ReviewerConfig, RunConfig, load_config

REPO = Path(__file__).resolve().parents[2]
GUARD = "tests.review.guardrails.guards:review"


def cli_config(monkeypatch: pytest.MonkeyPatch, *args: str) -> RunConfig:
    """The configuration ``authpairs run ARGS`` would run (the run itself is not started)."""
    seen: list[RunConfig] = []

    async def capture(config: RunConfig, progress: bool = True) -> None:
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr("authpairs.runs.api.run_async", capture)
    result = CliRunner().invoke(app, ["run", *args])
    assert result.exit_code == 0, result.output
    return seen[0]


def assert_same(python: RunConfig, cli: RunConfig) -> None:
    """Field by field, then the identity and the run id."""
    ours, theirs = python.model_dump(mode="json"), cli.model_dump(mode="json")
    assert sorted(ours) == sorted(theirs)
    for name in theirs:
        assert ours[name] == theirs[name], name
    assert python.sha256() == cli.sha256()
    assert python.resolved_run_id() == cli.resolved_run_id()


CASES: list[tuple[list[str], dict[str, Any]]] = [
    ([], {}),
    (["--dataset", "examples", "--limit", "3"], {"dataset": "examples", "limit": 3}),
    (["--dataset", "language", "--split", "test"], {"dataset": "language", "split": "test"}),
    (["--interface", "direct", "--seed", "3", "--max-tokens", "99"],
     {"reviewer": {"interface": "direct", "sampling": {"seed": 3, "max_tokens": 99}}}),
    (["--backend", "openai", "--model", "m", "--base-url", "http://h:1/v1"],
     {"reviewer": {"backend": {"kind": "openai", "model": "m",
                               "base_urls": ["http://h:1/v1"]}}}),
    (["--baseline", "always-allow", "--no-enforce", "--concurrency", "3"],
     {"reviewer": {"baseline": "always-allow"}, "enforce": False, "concurrency": 3}),
    (["--guardrail", GUARD, "--run-id", "mine"],
     {"reviewer": {"guardrail": GUARD}, "run_id": "mine"}),
]


@pytest.mark.parametrize(("args", "values"), CASES, ids=lambda v: " ".join(v) or "none"
                         if isinstance(v, list) else None)
def test_python_and_cli_resolve_to_the_same_configuration(
        monkeypatch: pytest.MonkeyPatch, args: list[str], values: dict[str, Any]) -> None:
    cli = cli_config(monkeypatch, *args)
    assert_same(RunConfig(**values), cli)
    assert_same(authpairs.api.as_config(values), cli)  # authpairs.run({...})


def test_the_defaults_are_the_main_jobs() -> None:
    config = RunConfig()
    assert_same(config, load_config(REPO / "configs" / "local-smollm2.yaml"))
    backend = config.reviewer.backend
    assert isinstance(backend, LocalBackendConfig)
    assert (backend.n_parallel, backend.n_threads, backend.speculative) == (
        main_job.N_PARALLEL, main_job.N_THREADS, main_job.SPECULATIVE)
    sampling = config.reviewer.sampling
    assert (sampling.seed, sampling.repetition_penalty) == (7, 1.3)
    assert (config.concurrency, config.split) == (main_job.CONCURRENCY, "dev")
    assert RunConfig.model_validate({}) == config


def test_the_main_job_file_writes_out_the_defaults() -> None:
    """Every value configs/local-smollm2.yaml writes is the default it would get anyway."""
    written = yaml.safe_load((REPO / "configs" / "local-smollm2.yaml").read_text())
    defaults = RunConfig().model_dump(mode="json")

    def check(values: dict[str, Any], expected: dict[str, Any], where: str) -> None:
        for key, value in values.items():
            if isinstance(value, dict):
                check(value, expected[key], f"{where}{key}.")
            else:
                assert expected[key] == value, f"{where}{key}"

    check(written, defaults, "")


def test_model_instances_count_only_the_fields_set_on_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    nested = RunConfig(reviewer=ReviewerConfig(interface="direct",
                                               sampling=SamplingConfig(seed=3)))
    assert_same(nested, cli_config(monkeypatch, "--interface", "direct", "--seed", "3"))
    openai = RunConfig(reviewer=ReviewerConfig(backend=OpenAIBackendConfig(model="m")))
    assert_same(openai, cli_config(monkeypatch, "--backend", "openai", "--model", "m"))


def test_a_file_and_model_validate_take_the_same_defaults(tmp_path: Path) -> None:
    written = {"dataset": "examples", "reviewer": {"baseline": "always-block"}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(written), encoding="utf-8")
    from_file = load_config(path)
    assert from_file == RunConfig.model_validate(written) == RunConfig(**written)
    assert from_file.concurrency == 1 and from_file.reviewer.sampling.seed == 7
    assert from_file.split is None  # another dataset: its own default split


@pytest.mark.parametrize(("sampling", "kind", "expected"), [
    ({}, "local", 1.3), ({"seed": 3}, "local", 1.3), ({"repetition_penalty": None}, "local", None),
    ({"repetition_penalty": 1.1}, "local", 1.1), ({}, "openai", None)])
def test_the_repetition_penalty_is_the_embedded_servers(
        sampling: dict[str, Any], kind: str, expected: float | None) -> None:
    """Unset, it is the main job's with the local backend and none with another; a stored
    header that says none keeps none (its hash is unchanged)."""
    config = RunConfig.model_validate({"reviewer": {"backend": {"kind": kind},
                                                    "sampling": sampling}})
    assert config.reviewer.sampling.repetition_penalty == expected


def test_a_bad_value_names_the_field() -> None:
    with pytest.raises(ConfigError, match="field 'concurrency'"):
        authpairs.api.as_config({"concurrency": 0})
