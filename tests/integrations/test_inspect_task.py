"""The Inspect AI task: samples carry only the rendered public view, the scorer is authpairs'
strict parser, metrics equal authpairs scoring, effects go through the enforcement point."""

from __future__ import annotations

import asyncio
import importlib.metadata
from pathlib import Path

import pytest
from inspect_ai._util.registry import registry_lookup
from inspect_ai.dataset import Sample

import authpairs.main_job as main_job
from authpairs.analysis.scoring import score_by, score_records
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.scripted import ScriptedBackend
from authpairs.cases.dataset import Dataset, DatasetError
from authpairs.cases.examples import load_examples
from authpairs.cases.models import Case, Label
from authpairs.integrations.inspect_requests import from_inspect_messages
from authpairs.integrations.inspect_task import (
    RECORD_KEY,
    TASK_METADATA_KEY,
    authpairs_task,
    build_samples,
    epoch_records,
)
from authpairs.integrations.inspect_tasks import cases, language
from authpairs.review.interfaces import INTERFACES, get_interface
from authpairs.review.outcome import Dispatch, OutcomeStatus
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, SamplingConfig
from authpairs.runs.records import CaseRecord
from authpairs.runs.store import RecordStore
from authpairs.tracks.language.cases import load_language_dataset
from tests.integrations.conftest import INSPECT_WARNINGS, answer_for, mock_model, run_inspect

pytestmark = INSPECT_WARNINGS


def _flip(case: Case) -> Case:
    other = Label.FORBIDDEN if case.reference.label is Label.LAWFUL else Label.LAWFUL
    reference = case.reference.model_copy(update={
        "label": other, "expression": "SECRET-EXPRESSION", "notes": "SECRET-NOTES",
        "facts": {"secret.fact": "SECRET-FACT"}})
    return case.model_copy(update={"reference": reference,
                                   "attributes": {"family": "SECRET-FAMILY"}})


def _sample_text(sample: Sample) -> str:
    """Everything in a sample, minus Inspect's random message ids."""
    data = sample.model_dump(mode="json")
    for message in data["input"]:
        message.pop("id")
    return repr(data)


@pytest.mark.parametrize("name", INTERFACES.names())
def test_samples_hold_only_the_rendered_public_view(name: str) -> None:
    interface = get_interface(name)
    for dataset in (load_examples(), load_language_dataset()):
        samples = build_samples(dataset, interface)
        flipped = build_samples(Dataset(dataset.name, [_flip(c) for c in dataset]), interface)
        for case, sample, other in zip(dataset, samples, flipped, strict=True):
            request = interface.render(case.public)
            assert isinstance(sample.input, list)
            assert from_inspect_messages(sample.input) == request.messages
            assert sample.id == case.case_id and sample.target == ""
            assert sample.metadata == {"input_sha256": request.sha256()}
            assert _sample_text(sample) == _sample_text(other), "label-dependent sample"
            text = _sample_text(sample)
            assert '"lawful"' not in text and "forbidden'" not in text
            for secret in (case.reference.expression, case.reference.notes or None):
                if secret:
                    assert secret not in text, f"{case.case_id}: reference text leaked"
            for key in ("family", "scenario", "variant"):
                value = case.attributes.get(key, "")
                if "_" in value or "-" in value:
                    assert value not in text, f"{case.case_id}: attribute {key} leaked"


def test_tasks_are_registered_through_the_inspect_entry_point() -> None:
    points = importlib.metadata.entry_points(group="inspect_ai")
    assert any(p.name == "authpairs" and p.value == "authpairs.integrations.inspect_tasks"
               for p in points)
    for name in ("authpairs/language", "authpairs/native", "authpairs/cases"):
        assert registry_lookup("task", name) is not None, name


def test_schema_interface_sends_the_exact_response_format() -> None:
    task = language(interface="schema", limit=2, enforce=False)
    expected = get_interface("schema").render(load_language_dataset().cases[0].public)
    assert task.config.extra_body == {"response_format": expected.response_format}
    assert task.config.response_schema is None
    assert language(interface="direct", limit=2).config.extra_body is None


def _as_mockllm_answers(request: ChatRequest) -> ChatResponse:
    """:func:`answer_for` with the finish reason and token usage of :func:`mock_model`."""
    return ChatResponse(text=answer_for(request), finish_reason="stop", input_tokens=100,
                        output_tokens=7)


def authpairs_records(dataset: Dataset, tmp_path: Path, enforce: bool) -> list[CaseRecord]:
    """The same answers through authpairs' own run (scripted backend, direct interface)."""
    reviewer = ModelReviewer(get_interface("direct"), ScriptedBackend(_as_mockllm_answers),
                             SamplingConfig())
    config = RunConfig(dataset="x", split="all", enforce=enforce,
                       records=str(tmp_path / "ref.sqlite"), run_id="reference")
    asyncio.run(run_async(config, progress=False, dataset=dataset, reviewer=reviewer))
    with RecordStore(tmp_path / "ref.sqlite") as store:
        return store.case_records("reference")


def _comparable(record: CaseRecord) -> dict[str, object]:
    data = record.model_dump(mode="json", exclude={"run_id", "latency_s"})
    if data["effect"] is not None:
        data["effect"]["observation"].pop("resources_checked", None)
    return data


def _metrics(log: object) -> dict[str, float]:
    results = log.results  # type: ignore[attr-defined]
    return {name: m.value for s in results.scores for name, m in s.metrics.items()}


@pytest.mark.parametrize("enforce", [True, False])
def test_mockllm_metrics_equal_authpairs_scoring(tmp_path: Path, log_dir: Path,
                                                       enforce: bool) -> None:
    dataset = load_examples()
    log = run_inspect(cases(dataset="examples", interface="direct", split="all",
                            enforce=enforce), log_dir)
    reference = authpairs_records(dataset, tmp_path, enforce)
    assert log.samples is not None
    inspected = {r.case_id: r for r in epoch_records([
        _sample_score(s) for s in log.samples])[0]}
    assert sorted(inspected) == sorted(r.case_id for r in reference)
    for expected in reference:
        # The same case runner made both: every field agrees but the run id, the timing and
        # how many resources the shared sandbox held (it grows with the cases enforced before,
        # whose order differs between the two runs).
        got, want = (_comparable(inspected[expected.case_id]), _comparable(expected))
        assert got == want, expected.case_id
        assert (expected.effect is None) == (not enforce)
    score = score_records(reference)
    metrics = _metrics(log)
    assert metrics["usable_correctness"] == pytest.approx(score.usable_correctness)
    for name in ("incorrect_approvals", "false_denials", "unavailable", "abstentions"):
        assert metrics[name] == getattr(score, name), name
    assert score.unavailable and score.correct and score.false_denials  # the answers are mixed
    if enforce:
        assert metrics["lawful_completions"] == score.lawful_completions
        assert metrics["forbidden_effects"] == score.forbidden_effects
        assert metrics["audit_failures"] == 0
    else:
        assert "forbidden_effects" not in metrics
    for family, group in score_by(reference, "family").items():
        assert metrics[f"family={family}/false_denials"] == group.false_denials
        assert metrics[f"family={family}/usable_correctness"] == pytest.approx(
            group.usable_correctness)


def _sample_score(sample: object) -> object:
    from inspect_ai.scorer import SampleScore

    scores = sample.scores  # type: ignore[attr-defined]
    assert scores is not None and len(scores) == 1
    return SampleScore(score=next(iter(scores.values())), sample_id=sample.id)  # type: ignore[attr-defined]


def test_unclean_output_is_unavailable_and_never_executes(log_dir: Path) -> None:
    log = run_inspect(cases(dataset="examples", interface="direct", split="all"), log_dir,
                      model=mock_model(lambda request: 'ALLOW {"decision": "ALLOW"}'))
    assert log.samples is not None
    for sample in log.samples:
        score = next(iter((sample.scores or {}).values()))
        record = CaseRecord.model_validate((score.metadata or {})[RECORD_KEY])
        assert record.status is OutcomeStatus.UNAVAILABLE
        assert record.dispatch is Dispatch.BLOCK and score.value == 0.0
        assert record.effect is not None and not record.effect.executed
        assert record.effect.audit_ok


def test_native_groups_by_engine_and_a_missing_split_is_refused() -> None:
    task = authpairs_task("examples", interface="direct", split="all", limit=None,
                          enforce=False, group_by=("engine",))
    assert len(task.dataset) == len(load_examples())
    with pytest.raises(DatasetError, match="no 'test' split"):
        cases(dataset="examples", split="test")


def test_a_left_out_split_is_a_runs_default(tmp_path: Path) -> None:
    """As for ``authpairs run --dataset``: the main job's split for its dataset, and another
    dataset's own for another (every case of a file without a dev split), recorded so that
    ``import-inspect`` selects the same cases."""
    assert language(limit=2).metadata[TASK_METADATA_KEY]["split"] == main_job.SPLIT
    path = tmp_path / "test-only.jsonl"
    Dataset("test-only", [c.model_copy(update={"split": "test"})
                          for c in load_examples()]).write_jsonl(path)
    task = cases(dataset=str(path), enforce=False)
    assert len(task.dataset) == len(load_examples())
    assert task.metadata[TASK_METADATA_KEY]["split"] is RunConfig(dataset=str(path)).split
    assert task.metadata[TASK_METADATA_KEY]["interface"] == main_job.INTERFACE


def test_unknown_is_an_abstention_metric(log_dir: Path) -> None:
    log = run_inspect(cases(dataset="examples", interface="direct", split="all", enforce=False),
                      log_dir, model=mock_model(lambda request: '{"decision": "UNKNOWN"}'))
    metrics = _metrics(log)
    assert metrics["abstentions"] == len(load_examples())
    assert metrics["usable_correctness"] == 0.0 and metrics["unavailable"] == 0
