"""Turn an Inspect AI eval log of an authpairs task into authpairs run records.

Every sample is matched to its case by id *and* by the SHA-256 of the exact reviewer input
(messages + response format) the model received, re-rendered from the current dataset with the
same interface; a log of another task, another dataset version or a changed prompt is refused.
The model output is parsed again with authpairs' strict parser (the log's own score is not
trusted), the effect record comes from the authpairs scorer's metadata, and the records are
written through :class:`~authpairs.runs.store.RecordStore`, so ``compare``, ``gate``,
``compose``, ``score`` and ``audit`` treat the run like any other.

An imported run is complete like one ``authpairs run`` writes: its header holds the expected
case set (the task's selection, narrowed by an eval-level ``--limit N``), and its stored
configuration is a resolved :class:`~authpairs.runs.config.RunConfig` whose hash ``audit``
recomputes: the dataset, split and limit, the interface with its options, the Inspect model as
backend kind ``inspect`` (:mod:`authpairs.integrations.inspect_backend`: model, base URL, eval
id, epoch, generation settings) and the sampling settings Inspect sent.

**Epochs** (``inspect eval --epochs N``) are repetitions: each epoch becomes a run of its own,
``RUN_ID-e1`` .. ``RUN_ID-eN`` (just ``RUN_ID`` when the eval ran one epoch). Their
configurations differ only in ``reviewer.backend.epoch`` and share one configuration hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import GenerateConfig
from pydantic import ValidationError

from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case
from authpairs.enforce.effect_record import EffectRecord
from authpairs.errors import DataError
from authpairs.integrations.inspect_backend import InspectBackendConfig
from authpairs.integrations.inspect_requests import (
    InspectInputError,
    chat_request_of,
    response_format_of,
    response_of,
)
from authpairs.integrations.inspect_task import RECORD_KEY, TASK_METADATA_KEY
from authpairs.review.interfaces import ReviewInterface, get_interface
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_header
from authpairs.runs.config import RunConfig
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import resolve_dataset

if TYPE_CHECKING:
    from authpairs.backends.base import ChatResponse

TASK_NAMES = ("authpairs/language", "authpairs/native", "authpairs/cases")


class InspectImportError(DataError):
    """The log cannot be imported; the message names the log and the reason."""

    hint = ("import the log of an 'inspect eval authpairs/...' task run on the current dataset "
            "and prompts; run '{command} --help' for what it takes")


@dataclass
class ImportedRun:
    """What an import wrote for one epoch of the eval."""

    run_id: str
    epoch: int
    samples: int
    imported: int
    already_present: int
    expected: int
    errored: list[str] = field(default_factory=list)


def epoch_run_id(run_id: str, epoch: int, epochs: int) -> str:
    """The run id of one epoch: ``RUN_ID`` for a one-epoch eval, else ``RUN_ID-eN``."""
    return run_id if epochs == 1 else f"{run_id}-e{epoch}"


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
    interface_options: dict[str, Any]
    split: str | None
    limit: int | None
    enforce: bool
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
                        interface_options=dict(meta.get("interface_options") or {}),
                        split=meta.get("split"), limit=meta.get("limit"),
                        enforce=bool(meta.get("enforce", True)),
                        manifest_sha256=str(meta["manifest"]["public_sha256"]))
    except (KeyError, TypeError) as exc:
        raise InspectImportError(f"{path}: authpairs task metadata is incomplete ({exc})") from exc


def _effective_response_format(log: EvalLog) -> dict[str, Any] | None:
    """The response format sent: the eval-level config overrides the task's."""
    override = response_format_of(log.eval.model_generate_config)
    return override if override is not None else response_format_of(log.plan.config)


def epoch_answers(log: EvalLog, epoch: int) -> dict[str, ChatResponse]:
    """The recorded output per reviewer input SHA-256 in one epoch (errored samples left out)."""
    response_format = _effective_response_format(log)
    answers = {}
    for sample in log.samples or []:
        if sample.epoch == epoch and sample.error is None:
            request = chat_request_of(sample.input, response_format)
            answers[request.sha256()] = response_of(sample.output)
    return answers


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
        request=interface.render(case.public),  # what the model received (hash checked)
        output_text=response.text, finish_reason=response.finish_reason,
        input_tokens=response.input_tokens, output_tokens=response.output_tokens,
        reasoning_tokens=response.reasoning_tokens, latency_s=response.latency_s)
    return record, attempt


def _sampling(config: GenerateConfig) -> dict[str, Any]:
    """The authpairs sampling section for Inspect's settings (unset ones stay unset)."""
    sampling: dict[str, Any] = {
        "temperature": config.temperature, "top_p": config.top_p, "top_k": config.top_k,
        "presence_penalty": config.presence_penalty, "seed": config.seed}
    if config.max_tokens is not None:
        sampling["max_tokens"] = config.max_tokens
    return sampling


def run_config(log: EvalLog, spec: TaskSpec, run_id: str, records: str | Path, epoch: int,
               epochs: int, limit: int | None, path: Path) -> RunConfig:
    """The resolved configuration of one epoch's run (see the module docstring)."""
    generate = log.plan.config.merge(log.eval.model_generate_config)  # the task's, overridden
    backend = InspectBackendConfig(
        model=log.eval.model, base_url=log.eval.model_base_url, eval_id=log.eval.eval_id,
        epoch=epoch, epochs=epochs, log=str(path.resolve()),
        generate_config=generate.model_dump(mode="json", exclude_none=True))
    return RunConfig.model_validate({
        "dataset": spec.dataset, "split": spec.split, "limit": limit,
        "reviewer": {"interface": spec.interface, "interface_options": spec.interface_options,
                     "backend": backend.model_dump(mode="json"),
                     "sampling": _sampling(generate)},
        "enforce": spec.enforce, "run_id": run_id, "records": str(records)})


def _run_info(config: RunConfig, log: EvalLog, dataset: Dataset, interface: ReviewInterface,
              epoch: int) -> RunInfo:
    """The header ``authpairs run`` writes (:func:`~authpairs.runs.api.run_header`: the
    reviewer is the interface with the log's answers), with where the answers came from."""
    reviewer = ModelReviewer(interface, config.reviewer.backend.create(),
                             config.reviewer.sampling)
    info = run_header(str(config.run_id), config, reviewer, dataset)
    info.config.update(source="inspect_ai", inspect={
        "eval_id": log.eval.eval_id, "task": log.eval.task, "task_args": log.eval.task_args,
        "model": log.eval.model, "model_base_url": log.eval.model_base_url,
        "epoch": epoch, "created": log.eval.created})
    info.versions.update({f"inspect:{k}": str(v) for k, v in sorted(log.eval.packages.items())})
    return info


@dataclass
class _Epoch:
    """One epoch's validated rows, before anything is written."""

    epoch: int
    samples: int = 0
    rows: list[tuple[CaseRecord, AttemptRecord]] = field(default_factory=list)
    failures: list[AttemptRecord] = field(default_factory=list)


def import_inspect_log(path: str | Path, run_id: str, records: str | Path,
                       dataset: Dataset | None = None) -> list[ImportedRun]:
    """Validate the whole log first, then write one run per epoch (what is returned, in epoch
    order); nothing is written on refusal.

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
    dataset = dataset.select_for_run(spec.split, spec.limit)
    public_sha256 = dataset.manifest().public_sha256
    if public_sha256 != spec.manifest_sha256:
        raise InspectImportError(
            f"{path}: the log was made on a different version of dataset '{spec.dataset}' "
            f"(split {spec.split}): public manifest {spec.manifest_sha256[:12]} in the log, "
            f"{public_sha256[:12]} now; nothing imported")
    limit = spec.limit
    # An eval-level --limit N (the first N samples) narrows the selection; a range or sample
    # ids are not a selection authpairs can name, so the run then expects the task's whole one.
    eval_limit = log.eval.config.limit
    if isinstance(eval_limit, int) and not log.eval.config.sample_id and eval_limit < len(dataset):
        limit = eval_limit
        dataset = dataset.select(None, limit)
    interface = get_interface(spec.interface, spec.interface_options or None)
    response_format = _effective_response_format(log)
    cases = dataset.by_id()
    epochs = max([log.eval.config.epochs or 1, *(s.epoch for s in log.samples or [])])
    found = {n: _Epoch(n) for n in range(1, epochs + 1)}
    for sample in log.samples or []:
        case = cases.get(str(sample.id))
        if case is None:
            raise InspectImportError(f"{path}: sample {sample.id} is not a case of dataset "
                                     f"'{spec.dataset}' (split {spec.split}); nothing imported")
        input_sha = _matched_input(sample, case, interface, response_format, path)
        part = found[sample.epoch]
        part.samples += 1
        one_id = epoch_run_id(run_id, sample.epoch, epochs)
        if sample.error is not None:
            part.failures.append(AttemptRecord(
                run_id=one_id, case_id=case.case_id, attempt_no=1, kind="infrastructure",
                input_sha256=input_sha, error=sample.error.message))
            continue
        part.rows.append(sample_records(one_id, sample, case, input_sha, interface,
                                        _effect_of(sample, path)))
    if not log.samples:
        raise InspectImportError(f"{path}: the log holds no samples; nothing imported")
    written = []
    with RecordStore(records) as store:
        for part in found.values():
            one_id = epoch_run_id(run_id, part.epoch, epochs)
            config = run_config(log, spec, one_id, records, part.epoch, epochs, limit, path)
            store.open_run(_run_info(config, log, dataset, interface, part.epoch))
            imported = sum(store.add_case(record, [attempt]) for record, attempt in part.rows)
            known = {a.case_id for a in store.attempts(one_id) if a.kind == "infrastructure"}
            new_failures = [a for a in part.failures if a.case_id not in known]
            if new_failures:
                store.add_attempts(new_failures)
            written.append(ImportedRun(
                run_id=one_id, epoch=part.epoch, samples=part.samples, imported=imported,
                already_present=len(part.rows) - imported, expected=len(dataset),
                errored=[a.case_id for a in part.failures]))
    return written
