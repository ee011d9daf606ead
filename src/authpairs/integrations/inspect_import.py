"""Turn an Inspect AI eval log of an authpairs task into authpairs run records.

Every sample is matched to its case by id *and* by the SHA-256 of the exact reviewer input
(messages + response format) the model received, re-rendered from the current dataset with the
same interface; a log of another task, another dataset version or a changed prompt is refused.
The model output is parsed again with authpairs' strict parser (the log's own score is not
trusted), the effect record comes from the authpairs scorer's metadata, and the records are
written through :class:`~authpairs.runs.store.RecordStore`, so ``compare``, ``gate``,
``compose`` and ``score`` treat the run like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from pydantic import ValidationError

from authpairs.cases.canonical import sha256_hex
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case
from authpairs.enforce.effect_record import EffectRecord
from authpairs.integrations.inspect_requests import (
    InspectInputError,
    chat_request_of,
    response_format_of,
    response_of,
)
from authpairs.integrations.inspect_task import RECORD_KEY, TASK_METADATA_KEY
from authpairs.review.interfaces import ReviewInterface, get_interface
from authpairs.runs.api import package_versions
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import resolve_dataset

TASK_NAMES = ("authpairs/language", "authpairs/native", "authpairs/cases")


class InspectImportError(ValueError):
    """The log cannot be imported; the message names the log and the reason."""


@dataclass
class ImportResult:
    """What an import wrote."""

    run_id: str
    samples: int
    imported: int
    already_present: int
    errored: list[str] = field(default_factory=list)


def read_log(path: Path) -> EvalLog:
    """Read an Inspect log; a missing, truncated or foreign file is a clear error."""
    if not path.is_file():
        raise InspectImportError(f"{path}: Inspect log not found")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect raises zip, JSON and validation errors alike
        raise InspectImportError(
            f"{path}: cannot read the Inspect log (truncated, corrupt or not an Inspect "
            f".eval/.json log): {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class TaskSpec:
    """The authpairs task settings recorded in a log."""

    dataset: str
    interface: str
    split: str
    limit: int | None
    manifest_sha256: str


def task_spec(log: EvalLog, path: Path) -> TaskSpec:
    """The authpairs settings of the log's task; refuses logs of other tasks."""
    task = log.eval.task
    meta = (log.eval.metadata or {}).get(TASK_METADATA_KEY)
    if task not in TASK_NAMES or not isinstance(meta, dict):
        raise InspectImportError(
            f"{path}: a log of task '{task}', not of an authpairs task "
            f"({', '.join(TASK_NAMES)}); nothing imported")
    try:
        return TaskSpec(dataset=str(meta["dataset"]), interface=str(meta["interface"]),
                        split=str(meta["split"]), limit=meta.get("limit"),
                        manifest_sha256=str(meta["manifest"]["public_sha256"]))
    except (KeyError, TypeError) as exc:
        raise InspectImportError(f"{path}: authpairs task metadata is incomplete ({exc})") from exc


def _effective_response_format(log: EvalLog) -> dict[str, Any] | None:
    """The response format sent: the eval-level config overrides the task's."""
    override = response_format_of(log.eval.model_generate_config)
    return override if override is not None else response_format_of(log.plan.config)


def _check_dataset(spec: TaskSpec, dataset: Dataset, path: Path) -> None:
    manifest = dataset.manifest()
    if manifest.public_sha256 != spec.manifest_sha256:
        raise InspectImportError(
            f"{path}: the log was made on a different version of dataset '{spec.dataset}' "
            f"(split {spec.split}): public manifest {spec.manifest_sha256[:12]} in the log, "
            f"{manifest.public_sha256[:12]} now; nothing imported")


def _matched_input(sample: EvalSample, case: Case, interface: ReviewInterface,
                   response_format: dict[str, Any] | None, path: Path) -> str:
    """The input hash of a sample, refused unless it equals the current rendering."""
    try:
        sent = chat_request_of(sample.input, response_format)
    except InspectInputError as exc:
        raise InspectImportError(f"{path}: sample {sample.id}: {exc}") from exc
    expected = interface.render(case.public).sha256()
    if sent.sha256() != expected:
        raise InspectImportError(
            f"{path}: sample {sample.id}: the input the model received (SHA-256 "
            f"{sent.sha256()[:12]}) differs from the current '{interface.name}' rendering of "
            f"case {case.case_id} ({expected[:12]}): the prompt or response format changed; "
            "nothing imported")
    return expected


def _effect_of(sample: EvalSample, path: Path) -> EffectRecord | None:
    for score in (sample.scores or {}).values():
        data = (score.metadata or {}).get(RECORD_KEY)
        if isinstance(data, dict) and data.get("effect") is not None:
            try:
                return EffectRecord.model_validate(data["effect"])
            except ValidationError as exc:
                raise InspectImportError(
                    f"{path}: sample {sample.id}: malformed effect record: {exc}") from exc
    return None


def sample_records(run_id: str, sample: EvalSample, case: Case, input_sha: str,
                   interface: ReviewInterface, effect: EffectRecord | None
                   ) -> tuple[CaseRecord, AttemptRecord]:
    """The case record and formal attempt of one answered sample (strictly re-parsed)."""
    response = response_of(sample.output)
    outcome = interface.parse(response)
    record = CaseRecord.from_review(run_id, case, input_sha, outcome, response, effect)
    attempt = AttemptRecord(
        run_id=run_id, case_id=case.case_id, attempt_no=1, kind="formal", input_sha256=input_sha,
        output_text=response.text, finish_reason=response.finish_reason,
        input_tokens=response.input_tokens, output_tokens=response.output_tokens,
        reasoning_tokens=response.reasoning_tokens, latency_s=response.latency_s)
    return record, attempt


def _run_info(run_id: str, log: EvalLog, spec: TaskSpec, dataset: Dataset,
              interface: ReviewInterface) -> RunInfo:
    inspect_facts: dict[str, Any] = {
        "eval_id": log.eval.eval_id, "task": log.eval.task, "task_args": log.eval.task_args,
        "model": log.eval.model, "model_base_url": log.eval.model_base_url,
        "generate_config": log.plan.config.model_dump(mode="json", exclude_none=True),
        "eval_generate_config": log.eval.model_generate_config.model_dump(
            mode="json", exclude_none=True),
        "created": log.eval.created}
    resolved: dict[str, Any] = {"dataset": spec.dataset, "split": spec.split,
                                "limit": spec.limit, "reviewer": {"interface": spec.interface}}
    config: dict[str, Any] = {"source": "inspect_ai", "inspect": inspect_facts,
                              "resolved": resolved}
    manifest = dataset.manifest()
    versions = package_versions()
    versions.update({f"inspect:{k}": str(v) for k, v in sorted(log.eval.packages.items())})
    return RunInfo(run_id=run_id, created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                   config=config, config_sha256=sha256_hex(config),
                   manifest=manifest.to_dict(), manifest_sha256=manifest.public_sha256,
                   template_sha256=interface.template_hashes(), versions=versions)


def import_inspect_log(path: str | Path, run_id: str, records: str | Path,
                       dataset: Dataset | None = None) -> ImportResult:
    """Validate the whole log first, then write its records; nothing is written on refusal.

    ``dataset`` overrides loading the dataset named in the log (tests, already loaded data).
    """
    path = Path(path)
    log = read_log(path)
    spec = task_spec(log, path)
    if log.status != "success":
        raise InspectImportError(
            f"{path}: the eval's status is '{log.status}', not 'success' (an interrupted or "
            "failed eval); re-run or resume it with Inspect, then import; nothing imported")
    if dataset is None:
        dataset = resolve_dataset(spec.dataset)
    dataset = dataset.select(spec.split, spec.limit)
    _check_dataset(spec, dataset, path)
    interface = get_interface(spec.interface)
    response_format = _effective_response_format(log)
    cases = dataset.by_id()
    rows: list[tuple[CaseRecord, AttemptRecord]] = []
    errored: list[str] = []
    failures: list[AttemptRecord] = []
    for sample in log.samples or []:
        case = cases.get(str(sample.id))
        if case is None:
            raise InspectImportError(f"{path}: sample {sample.id} is not a case of dataset "
                                     f"'{spec.dataset}' (split {spec.split}); nothing imported")
        input_sha = _matched_input(sample, case, interface, response_format, path)
        if sample.error is not None:
            errored.append(case.case_id)
            failures.append(AttemptRecord(
                run_id=run_id, case_id=case.case_id, attempt_no=1, kind="infrastructure",
                input_sha256=input_sha, error=sample.error.message))
            continue
        rows.append(sample_records(run_id, sample, case, input_sha, interface,
                                   _effect_of(sample, path)))
    if not rows and not errored:
        raise InspectImportError(f"{path}: the log holds no samples; nothing imported")
    info = _run_info(run_id, log, spec, dataset, interface)
    imported = 0
    with RecordStore(records) as store:
        store.open_run(info)
        for record, attempt in rows:
            imported += store.add_case(record, [attempt])
        known = {a.case_id for a in store.attempts(run_id) if a.kind == "infrastructure"}
        new_failures = [a for a in failures if a.case_id not in known]
        if new_failures:
            store.add_attempts(new_failures)
    return ImportResult(run_id=run_id, samples=len(log.samples or []), imported=imported,
                        already_present=len(rows) - imported, errored=errored)
