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


MAIN_JOB_KEYS = {
    "DATASET": "dataset", "SPLIT": "split", "SAMPLE_SEED": "sample_seed",
    "INTERFACE": "reviewer.interface", "N_CTX": "reviewer.backend.n_ctx",
    "N_PARALLEL": "reviewer.backend.n_parallel", "N_THREADS": "reviewer.backend.n_threads",
    "SPECULATIVE": "reviewer.backend.speculative", "DEADLINE_S": "reviewer.backend.deadline_s",
    "TEMPERATURE": "reviewer.sampling.temperature", "SEED": "reviewer.sampling.seed",
    "MAX_TOKENS": "reviewer.sampling.max_tokens",
    "LOCAL_REPETITION_PENALTY": "reviewer.sampling.repetition_penalty", "ENFORCE": "enforce",
    "CONCURRENCY": "concurrency", "INFRA_RETRIES": "infra_retries", "PREFLIGHT": "preflight",
    "RECORDS": "records"}
"""Each setting of the main job -> the configuration key whose default it is."""
MAIN_JOB_FILE = REPO / "configs" / "local-smollm2.yaml"


def flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested configuration data as dotted key -> value."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict) and value:
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_main_job_setting_is_a_configuration_default() -> None:
    # The cache's environment variable, how `run --agent` reaches its MCP server (an option
    # of that command), the port `mcp serve` listens on and what the deadline means (its help)
    # are not settings of a run configuration.
    settings = {name for name, value in vars(main_job).items() if name.isupper() and name not in
                {"CACHE_ENV", "AGENT_SERVER", "MCP_PORT", "DEADLINE_HELP"}}
    assert settings == set(MAIN_JOB_KEYS)
    config = RunConfig()
    defaults = flat(config.model_dump(mode="json"))
    assert {key: defaults[key] for key in MAIN_JOB_KEYS.values()} == {
        key: getattr(main_job, name) for name, key in MAIN_JOB_KEYS.items()}
    assert isinstance(config.reviewer.backend, LocalBackendConfig)
    assert RunConfig.model_validate({}) == config
    assert_same(config, load_config(MAIN_JOB_FILE))


def test_the_main_job_file_writes_out_every_main_job_value() -> None:
    """Both ways: configs/local-smollm2.yaml writes each main-job value at its key, and
    nothing else but the backend kind (the default backend's)."""
    written = flat(yaml.safe_load(MAIN_JOB_FILE.read_text(encoding="utf-8")))
    assert written.pop("reviewer.backend.kind") == RunConfig().reviewer.backend.kind
    assert written == {key: getattr(main_job, name) for name, key in MAIN_JOB_KEYS.items()}


def test_the_embedded_servers_defaults_are_the_main_jobs() -> None:
    from authpairs.backends.local_server import LocalServerBackend

    fields = ("n_ctx", "n_parallel", "n_threads", "deadline_s", "speculative", "stream")
    direct = LocalServerBackend()
    configured = LocalServerBackend.from_config(LocalBackendConfig())
    assert {f: getattr(direct, f) for f in fields} == {f: getattr(configured, f) for f in fields}


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
    assert from_file.concurrency == main_job.CONCURRENCY
    assert from_file.reviewer.sampling.seed == main_job.SEED
    assert from_file.split is None  # another dataset: its own default split


@pytest.mark.parametrize(("sampling", "kind", "expected"), [
    ({}, "local", main_job.LOCAL_REPETITION_PENALTY),
    ({"seed": 3}, "local", main_job.LOCAL_REPETITION_PENALTY),
    ({"repetition_penalty": None}, "local", None),
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
