"""Build an Inspect AI task over authpairs cases: samples, strict scorer and authpairs metrics.

* **Samples** are the public views rendered by one authpairs review interface: the exact system
  and user messages, the case id as sample id and the input's SHA-256 as sample metadata. No
  reference label, expression, fact or grouping attribute is in a sample; the scorer looks the
  reference up by case id in the dataset it loads itself.
* **Scorer** hands the case, the exact input Inspect sent and the model's output to the same
  :class:`~authpairs.runs.case_runner.CaseRunner` that ``authpairs run`` uses: the interface
  finishes the answer and parses it strictly (anything but a clean decision is unavailable,
  never ALLOW), the decision goes to the authpairs enforcement point when enforcement is on and
  the case carries an effect, and the resulting authpairs :class:`CaseRecord` (built by the same
  :func:`~authpairs.runs.reviewed.build_records`) is kept in the score's metadata.
* **Epochs** (``--epochs N``): every epoch is enforced in a sandbox of its own
  (:class:`EpochSandboxes`), freshly seeded like the sandbox of one ``authpairs run``, and the
  task's epoch reducer (:func:`authpairs_epochs`) keeps every epoch's record.
* **Metrics** are computed by authpairs' own scoring over those records: usable correctness,
  incorrect approvals, false denials, unavailable, abstentions (and effect counts when enforced),
  overall and grouped by case attributes such as family (language) or engine (native); with
  several epochs, each is the mean of the epochs' values.
* **Offline**: Inspect counts tokens with tiktoken's ``o200k_base`` wherever a model reports
  no usage (its ``mockllm`` model, for one), and tiktoken downloads that vocabulary on first
  use; :func:`use_packaged_vocabulary` writes authpairs' verified copy where tiktoken looks
  first.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    Value,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState, generate

from authpairs.analysis.outcomes import case_outcome
from authpairs.analysis.scoring import Score as AuthScore
from authpairs.analysis.scoring import score_by, score_records
from authpairs.backends.base import ChatRequest, ChatResponse, NoResources
from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.enforce.base import Enforcer
from authpairs.integrations.inspect_requests import (
    chat_request_of,
    generate_config_for,
    response_of,
    to_inspect_messages,
)
from authpairs.review.guardrails.harmony_vocab import ensure_vocab
from authpairs.review.interfaces import ReviewInterface, get_interface
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import make_enforcer
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.config import RunConfig
from authpairs.runs.records import CaseRecord
from authpairs.runs.reviewed import build_records
from authpairs.tracks.registry import resolve_dataset

RECORD_KEY = "authpairs_record"
EPOCH_RECORDS_KEY = "authpairs_epoch_records"
INSPECT_RUN_ID = "inspect"
TASK_METADATA_KEY = "authpairs"
DEFAULT_GROUPS: dict[str, tuple[str, ...]] = {
    "language": ("family", "domain"),
    "native": ("engine",),
}

COUNTS = ("incorrect_approvals", "false_denials", "unavailable", "abstentions")
"""The counts among the authpairs measures (after usable correctness)."""
EFFECT_COUNTS = ("forbidden_effects", "lawful_completions", "audit_failures")
"""The counts added when effects are enforced."""
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken downloads ``o200k_base`` from; its cache names the file by this URL."""
TIKTOKEN_CACHE_ENV = "TIKTOKEN_CACHE_DIR"


def cache_name(url: str = O200K_URL) -> str:
    """The file name tiktoken's cache gives a download (SHA-1 of its URL)."""
    return hashlib.sha1(url.encode()).hexdigest()


def use_packaged_vocabulary() -> Path:
    """Make tiktoken find ``o200k_base`` offline; returns tiktoken's cache folder.

    No installed package ships it in tiktoken's format, but ``quicktok-v1`` ships the same
    ranks: :func:`~authpairs.review.guardrails.harmony_vocab.ensure_vocab` rewrites them in that
    format, checked against the published SHA-256 (as tiktoken checks it again), under the
    name tiktoken's cache gives the download. A ``TIKTOKEN_CACHE_DIR`` the user set is kept (the
    file is added to it when missing); else it is set to authpairs' own cache folder.
    """
    folder = ensure_vocab()
    chosen = os.environ.get(TIKTOKEN_CACHE_ENV)
    cache_folder = ensure_vocab(Path(chosen) if chosen else folder, cache_name())
    if not chosen:
        os.environ[TIKTOKEN_CACHE_ENV] = str(cache_folder)
    return cache_folder


@cache
def load_task_dataset(name: str, split: str | None, limit: int | None) -> Dataset:
    """The selected cases of a dataset, as a run selects them (``split`` None: the dataset's
    own), loaded once per process (task and scorer share it)."""
    return resolve_dataset(name).select_for_run(split, limit)


def build_samples(dataset: Dataset, interface: ReviewInterface) -> list[Sample]:
    """One Inspect sample per case: the rendered public view and its input hash, nothing else."""
    samples = []
    for case in dataset:
        request = interface.request(case.public)
        samples.append(Sample(id=case.case_id, input=to_inspect_messages(request),
                              metadata={"input_sha256": request.sha256()}))
    return samples


@dataclass
class EpochSandboxes:
    """One sandbox per epoch (``inspect eval --epochs N``): each epoch's samples are enforced
    in a freshly seeded sandbox of their own, as each epoch is imported as a run of its own.
    An epoch's sandbox opens on first use and closes after the last of its ``samples`` (or at
    interpreter exit if a run is cancelled); used again after that, it re-opens. Epochs may
    run interleaved."""

    samples: int
    _open: dict[int, Enforcer] = field(default_factory=dict)
    _pending: dict[int, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, epoch: int) -> Enforcer:
        """The open enforcer of ``epoch``."""
        with self._lock:
            if epoch not in self._open:
                enforcer = make_enforcer()
                enforcer.__enter__()
                self._open[epoch] = enforcer
                atexit.unregister(self.close)  # registered once, however many epochs open
                atexit.register(self.close)
            return self._open[epoch]

    def sample_done(self, epoch: int) -> None:
        """Count one finished sample of ``epoch``; its sandbox closes after the last one."""
        with self._lock:
            pending = self._pending[epoch] = self._pending.get(epoch, self.samples) - 1
            enforcer = self._open.pop(epoch, None) if pending <= 0 else None
        if enforcer is not None:
            enforcer.__exit__(None, None, None)

    def close(self) -> None:
        """Stop every epoch's sandbox (idempotent)."""
        with self._lock:
            enforcers, self._open = list(self._open.values()), {}
        for enforcer in enforcers:
            enforcer.__exit__(None, None, None)
        atexit.unregister(self.close)


_HOLDERS: dict[str, EpochSandboxes] = {}


def _sample_records(sample_score: SampleScore) -> list[CaseRecord]:
    metadata = sample_score.score.metadata or {}
    data = metadata.get(EPOCH_RECORDS_KEY)
    if data is None and metadata.get(RECORD_KEY) is not None:
        data = [metadata[RECORD_KEY]]
    if data is None:
        raise ValueError(f"sample {sample_score.sample_id}: score has no authpairs record "
                         "(authpairs metrics need the authpairs scorer and, with several "
                         "epochs, its epoch reducer)")
    return [CaseRecord.model_validate(item) for item in data]


def epoch_records(scores: list[SampleScore]) -> list[list[CaseRecord]]:
    """The authpairs case records kept in the scores' metadata, one list per epoch."""
    per_sample = [_sample_records(s) for s in scores]
    epochs = min((len(r) for r in per_sample), default=1)
    return [[records[k] for records in per_sample] for k in range(epochs)]


@score_reducer(name="authpairs_epochs")
def authpairs_epochs() -> ScoreReducer:
    """Reduce a sample's epochs: the mean value, and every epoch's authpairs record kept (in
    epoch order) for the authpairs metrics. One epoch: its score unchanged."""

    def reduce(scores: list[Score]) -> Score:
        if len(scores) == 1:
            return scores[0]
        records = [(s.metadata or {}).get(RECORD_KEY) for s in scores]
        values = [float(s.value) for s in scores if isinstance(s.value, int | float)]
        return Score(value=sum(values) / len(values) if values else 0.0,
                     answer=" | ".join(str(s.answer) for s in scores),
                     metadata={EPOCH_RECORDS_KEY: records})

    return reduce


def _mean(per_epoch: list[dict[str, float]]) -> dict[str, float]:
    """Each measure's mean over epochs (the measure itself with one epoch)."""
    return {name: sum(values[name] for values in per_epoch) / len(per_epoch)
            for name in per_epoch[0]}


def _measures(score: AuthScore, prefix: str = "") -> dict[str, float]:
    counts = COUNTS + (EFFECT_COUNTS if score.enforced else ())
    # Inspect metrics are numbers: a group with no scored case has no correctness (NaN)
    correctness = float("nan") if score.usable_correctness is None else score.usable_correctness
    return {f"{prefix}usable_correctness": correctness,
            **{f"{prefix}{name}": float(getattr(score, name)) for name in counts}}


@metric
def authpairs_measures() -> Metric:
    """Usable correctness (rate over all cases) and the counts of incorrect approvals, false
    denials, unavailable responses and abstentions (plus effect counts when enforced); with
    several epochs, each measure's mean over the epochs."""

    def compute(scores: list[SampleScore]) -> Value:
        return _mean([_measures(score_records(records)) for records in epoch_records(scores)])

    return compute


@metric
def authpairs_grouped(attribute: str) -> Metric:
    """The same measures per value of a case attribute, named ``ATTRIBUTE=VALUE/measure``."""

    def compute(scores: list[SampleScore]) -> Value:
        per_epoch = []
        for records in epoch_records(scores):
            values: dict[str, float] = {}
            for key, group in score_by(records, attribute).items():
                values.update(_measures(group, prefix=f"{attribute}={key}/"))
            per_epoch.append(values)
        return _mean(per_epoch)

    return compute


class InspectAnswer(NoResources):
    """The answer Inspect's model already gave, as the backend a :class:`CaseRunner` asks."""

    name = "inspect"

    def __init__(self, response: ChatResponse) -> None:
        self.response = response

    def describe(self) -> dict[str, Any]:
        """Where the answer came from."""
        return {"kind": self.name}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """The answer Inspect recorded for this sample."""
        return self.response


@scorer(metrics=[authpairs_measures()])
def authpairs_scorer(dataset: str, interface: str, split: str | None, limit: int | None,
                     enforce: bool, holder_key: str = "",
                     interface_options: dict[str, Any] | None = None) -> Scorer:
    """Strictly parse the answer, enforce the effect (when on, in the sample's epoch's
    sandbox), score against the reference: the case runner of ``authpairs run`` with
    Inspect's answer as the reviewer's."""
    cases = load_task_dataset(dataset, split, limit).by_id()
    review_interface = get_interface(interface, interface_options or None)

    async def score(state: TaskState, target: Target) -> Score:
        case = cases[str(state.sample_id)]
        sent = chat_request_of(state.input, review_interface.render(case.public).response_format)
        response = response_of(state.output)
        sandboxes = _HOLDERS.get(holder_key)
        enforcer = (sandboxes.get(state.epoch) if enforce and sandboxes is not None
                    else None)
        reviewer = ModelReviewer(review_interface, InspectAnswer(response), SamplingConfig())
        runner = CaseRunner(reviewer, enforcer=enforcer, infra_retries=0)
        review = await runner.review(case, request=sent)
        record, _ = build_records(INSPECT_RUN_ID, case, review)
        assert record is not None and review.outcome is not None
        outcome = review.outcome
        answer = (outcome.decision.value if outcome.decision is not None
                  else f"unavailable:{record.reason_code}")
        return Score(value=1.0 if case_outcome(record).correct else 0.0, answer=answer,
                     explanation=outcome.detail or None,
                     metadata={RECORD_KEY: record.model_dump(mode="json")})

    return score


def authpairs_task(dataset: str, *, interface: str, split: str | None, limit: int | None,
                   enforce: bool, group_by: tuple[str, ...] | None = None,
                   interface_options: dict[str, Any] | None = None) -> Task:
    """The Inspect task for one authpairs dataset rendered through one interface (with its
    ``interface_options``, as ``reviewer.interface_options`` of a run configuration); ``split``
    None is a run's default for ``dataset`` (:class:`~authpairs.runs.config.RunConfig`)."""
    use_packaged_vocabulary()
    split = split or RunConfig(dataset=dataset).split
    cases = load_task_dataset(dataset, split, limit)
    options = dict(interface_options or {})
    review = get_interface(interface, options or None)
    # the response format depends on the interface only, not on the case
    response_format = review.render(cases.cases[0].public).response_format
    groups = group_by if group_by is not None else DEFAULT_GROUPS.get(dataset, ("family",))
    holder_key = uuid.uuid4().hex
    sandboxes: EpochSandboxes | None = None
    if enforce and any(c.public.effect is not None for c in cases):
        sandboxes = _HOLDERS[holder_key] = EpochSandboxes(samples=len(cases))

    async def cleanup(state: TaskState) -> None:
        if sandboxes is not None:
            sandboxes.sample_done(state.epoch)

    manifest = cases.manifest()
    return Task(
        dataset=MemoryDataset(build_samples(cases, review), name=cases.name),
        solver=generate(),
        scorer=authpairs_scorer(dataset, interface, split, limit, enforce, holder_key,
                                options or None),
        metrics=[authpairs_measures(), *(authpairs_grouped(a) for a in groups)],
        config=generate_config_for(response_format),
        cleanup=cleanup if sandboxes is not None else None,
        epochs=Epochs(1, authpairs_epochs()),
        metadata={TASK_METADATA_KEY: {
            "dataset": dataset, "interface": interface, "interface_options": options,
            "split": split, "limit": limit,
            "enforce": enforce, "manifest": manifest.to_dict(),
            "template_sha256": review.template_hashes()}},
    )
