"""Run configuration: which cases, which reviewer (interface + backend), where records go.

A configuration is a YAML file (or a dict) naming components and their arguments. The *resolved*
configuration (defaults filled in) is stored with every run together with its SHA-256.

What a configuration leaves out takes the field defaults, which are the main job's
(:mod:`authpairs.main_job`): ``RunConfig()``, ``RunConfig.model_validate({})``, an empty
``authpairs.run({})`` and ``authpairs run`` without options are one configuration, and
``RunConfig(dataset="examples")`` is ``authpairs run --dataset examples``. The split defaults
to the main job's only for the main job's dataset, the repetition penalty only for the embedded
server (see :mod:`authpairs.main_job`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

import authpairs.main_job as main_job
from authpairs.backends.config import (
    BACKEND_KINDS,
    BackendConfig,
    LocalBackendConfig,
    SamplingConfig,
)
from authpairs.cases.canonical import sha256_hex
from authpairs.errors import ConfigError
from authpairs.runs.agent_config import AgentModelConfig
from authpairs.yamlfiles import first_error, read_yaml_mapping

__all__ = [
    "ReviewerConfig",
    "RunConfig",
    "SamplingConfig",
    "config_from_dict",
    "load_config",
]

_NOT_IDENTITY = {"records", "run_id", "concurrency", "infra_retries", "preflight"}

# The backend kinds of this layer, registered where run configurations are parsed: replay reads
# run records, so the backends layer below cannot name it.
BACKEND_KINDS.add_lazy("replay", "authpairs.runs.replay:ReplayBackendConfig")


class ReviewerConfig(BaseModel):
    """A reviewer: an interface with a backend, or a baseline that calls no model."""

    model_config = ConfigDict(extra="forbid")

    interface: str = Field(default=main_job.INTERFACE,
                           description="'direct', 'structured', 'schema', or a registered name.")
    baseline: Literal["always-allow", "always-block"] | None = Field(
        default=None, description="Use a baseline reviewer instead of a model.")
    interface_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Interface arguments, e.g. safeguard reasoning_effort / rendering_date.")
    guardrail: str | None = Field(
        default=None, description="A guardrail instead of an interface: a registered name "
        "('nemo-self-check', 'http', a plugin) or 'package.module:callable'.")
    guardrail_options: dict[str, Any] = Field(
        default_factory=dict, description="Guardrail arguments, e.g. the http service's url.")
    backend: BackendConfig = Field(default_factory=LocalBackendConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)

    @model_validator(mode="after")
    def _local_repetition_penalty(self) -> ReviewerConfig:
        """With the embedded server, a repetition penalty the sampling leaves unset is the main
        job's (:data:`~authpairs.main_job.LOCAL_REPETITION_PENALTY`); other backends get none
        unless the run sets one."""
        if (self.backend.kind == "local"
                and "repetition_penalty" not in self.sampling.model_fields_set):
            self.sampling = self.sampling.model_copy(
                update={"repetition_penalty": main_job.LOCAL_REPETITION_PENALTY})
        return self

    @model_validator(mode="after")
    def _resolve_guardrail_options(self) -> ReviewerConfig:
        """A registered guardrail states its implicit settings in its options (e.g. a NeMo
        rails folder's content hash), so the stored configuration says what runs."""
        if self.guardrail:
            from authpairs.review.guardrails.registry import resolve_guardrail_options

            self.guardrail_options = resolve_guardrail_options(
                self.guardrail, self.guardrail_options, self.sampling)
        return self


class RunConfig(BaseModel):
    """Everything that defines a run. Its hash decides whether a re-run resumes it; what it
    leaves out is the main job's (``RunConfig()`` is ``authpairs run``)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(default=main_job.DATASET,
                         description="'language', 'examples', 'native', or a JSONL path.")
    split: Literal["dev", "test", "all"] | None = Field(
        default_factory=lambda data: main_job.SPLIT if data.get("dataset") == main_job.DATASET
        else None, description="Split to review; default: the main job's (dev) for its "
        "dataset, else the dataset's own (dev when it has one, otherwise all cases).")
    limit: int | None = Field(default=None, ge=1,
                              description="The first N cases of the split in file order only.")
    sample: int | None = Field(
        default=None, ge=1, description="A slice of N cases of the split, balanced by label "
        "(and by family where N allows), chosen by sample_seed; excludes limit.")
    sample_seed: int = Field(default=main_job.SAMPLE_SEED,
                             description="The seed that chooses the sample.")
    reviewer: ReviewerConfig = Field(default_factory=ReviewerConfig)
    enforce: bool = Field(default=main_job.ENFORCE,
                          description="Execute ALLOWed effects in a sandbox.")
    concurrency: int = Field(default=main_job.CONCURRENCY, ge=1,
                             description="Cases in flight at once.")
    infra_retries: int = Field(default=main_job.INFRA_RETRIES, ge=0,
                               description="Retries after transport failures.")
    preflight: bool = Field(default=main_job.PREFLIGHT, description="Check every endpoint once "
                            "before the first case (off for servers without a models endpoint).")
    run_id: str | None = Field(default=None, description="Default: derived from the config hash.")
    records: str = Field(default=main_job.RECORDS, description="SQLite records path.")
    agent: AgentModelConfig | None = Field(
        default=None, description="An agent run (authpairs run --agent): the model that acts "
        "as the agent over MCP; the reviewer above reviews each of its tool calls.")

    @field_validator("sample")
    @classmethod
    def _limit_or_sample(cls, sample: int | None, info: ValidationInfo) -> int | None:
        """``limit`` (the first N) and ``sample`` (a balanced N) are two ways to choose; one."""
        if sample is not None and info.data.get("limit") is not None:
            raise ValueError("limit (the first N cases) and sample (a balanced N) exclude each "
                             "other: give one of them")
        return sample

    def identity(self) -> dict[str, Any]:
        """What can change results: dataset, reviewer, interface, sampling, enforcement.

        Not where records go, not the run id, not how many requests are in flight or how often
        transport failures are retried, and not which URL spelling reaches the server. Optional
        fields left unset are left out (as in :meth:`recorded`): earlier runs keep their identity.
        """
        data = {k: v for k, v in self.recorded().items() if k not in _NOT_IDENTITY}
        data["reviewer"]["backend"] = self.reviewer.backend.identity()
        if self.reviewer.guardrail and self.reviewer.guardrail_options:
            from authpairs.review.guardrails.registry import guardrail_identity_options

            data["reviewer"]["guardrail_options"] = guardrail_identity_options(
                self.reviewer.guardrail, self.reviewer.guardrail_options)
        for optional in ("interface_options", "guardrail", "guardrail_options"):
            if not data["reviewer"][optional]:
                del data["reviewer"][optional]
        if self.agent is not None:
            data["agent"] = self.agent.identity()
        return data

    def recorded(self) -> dict[str, Any]:
        """The resolved configuration as a run header stores it: every field, but the optional
        ones left unset (no sample, no agent, preflight on) are left out, so the headers of runs
        that do not use them are those earlier versions wrote."""
        data = self.model_dump(mode="json")
        if self.sample is None:
            del data["sample"], data["sample_seed"]
        if self.agent is None:
            del data["agent"]
        if self.preflight:
            del data["preflight"]  # the default: headers of earlier runs are unchanged
        return data

    def sha256(self) -> str:
        """SHA-256 of :meth:`identity`."""
        return sha256_hex(self.identity())

    def resolved_run_id(self) -> str:
        """The run id: explicit, or ``run-`` + 12 hex digits of the config hash."""
        return self.run_id or f"run-{self.sha256()[:12]}"


def session_sha256(agent: dict[str, Any] | None, config: RunConfig) -> str:
    """The configuration hash of an agent session's run (``authpairs mcp serve``, ``authpairs
    run --agent``): its header's ``agent`` section with the configuration's identity."""
    return sha256_hex({"agent": agent, "identity": config.identity()})


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Load a YAML run configuration, then apply dotted-key ``overrides``
    (e.g. ``{"reviewer.interface": "direct"}``)."""
    raw = read_yaml_mapping(path, "configuration", ConfigError)
    if not raw:
        raise ConfigError(f"{path}: the configuration file is empty (hint: start from "
                          "configs/local-smollm2.yaml, or leave out --config)")
    return config_from_dict(raw, overrides, origin=str(path))


def config_from_dict(raw: dict[str, Any], overrides: dict[str, Any] | None = None,
                     origin: str = "<config>") -> RunConfig:
    """Build a :class:`RunConfig` from plain data plus dotted-key overrides (``raw`` is never
    modified); an invalid value is a :class:`ConfigError` naming ``origin`` and the field."""
    data = copy.deepcopy(raw)
    overrides = dict(overrides or {})
    new_kind = overrides.get("reviewer.backend.kind")
    reviewer = data.get("reviewer")
    if new_kind is not None and isinstance(reviewer, dict):
        backend = reviewer.get("backend")
        if isinstance(backend, dict) and backend.get("kind", "local") != new_kind:
            # another backend kind: the file's settings of the old kind do not apply
            data["reviewer"] = {**reviewer, "backend": {}}
    for dotted, value in overrides.items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        field, message = first_error(exc)
        raise ConfigError(f"{origin}: field '{field}': {message}") from exc


def header_config(resolved: dict[str, Any]) -> RunConfig:
    """A run header's resolved configuration (:meth:`RunConfig.recorded`) as the version that
    wrote it read it. A header holds every field its version had, so a field it lacks did not
    exist yet and had that time's default, not today's: the embedded server's ``speculative``
    decoding was off."""
    backend = resolved.get("reviewer", {}).get("backend", {})
    if backend.get("kind") == "local" and "speculative" not in backend:
        resolved = copy.deepcopy(resolved)
        resolved["reviewer"]["backend"]["speculative"] = "none"
    return RunConfig.model_validate(resolved)

