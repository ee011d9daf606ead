"""``authpairs import-inspect``: an Inspect log of an authpairs task becomes run records equal to
an authpairs run with the same answers; foreign, changed, truncated or unfinished logs are
refused and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import generate
from typer.testing import CliRunner

from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.cli import app
from authpairs.integrations.inspect_import import InspectImportError, import_inspect_log
from authpairs.integrations.inspect_tasks import cases
from authpairs.runs.store import RecordStore, RecordStoreError
from tests.integrations.conftest import INSPECT_WARNINGS, answer_for, mock_model, run_inspect
from tests.integrations.test_inspect_task import authpairs_records

pytestmark = INSPECT_WARNINGS


@pytest.fixture
def examples_log(log_dir: Path) -> EvalLog:
    """An Inspect log of the examples (direct interface, effects enforced)."""
    return run_inspect(cases(dataset="examples", interface="direct", split="all"), log_dir)


def _path(log: EvalLog) -> Path:
    return Path(log.location)


def test_imported_records_equal_an_authpairs_run(examples_log: EvalLog, tmp_path: Path,
                                                 records_path: Path) -> None:
    (run,) = import_inspect_log(_path(examples_log), "from-inspect", records_path)
    assert (run.run_id, run.samples, run.imported, run.already_present, run.expected) == (
        "from-inspect", 8, 8, 0, 8)
    expected = {r.case_id: r for r in authpairs_records(load_examples(), tmp_path, True)}
    with RecordStore(records_path) as store:
        records = store.case_records("from-inspect")
        attempts = {a.case_id: a for a in store.attempts("from-inspect")}
        info = store.get_run("from-inspect")
    assert len(records) == 8 and info is not None
    assert info.manifest_sha256 == load_examples().manifest().public_sha256
    assert info.config["source"] == "inspect_ai"
    assert info.config["inspect"]["task"] == "authpairs/cases"
    for record in records:
        want = expected[record.case_id]
        for name in ("input_sha256", "status", "decision", "reason_code", "dispatch", "label",
                     "cluster", "split", "attributes", "resolved"):
            assert getattr(record, name) == getattr(want, name), (record.case_id, name)
        assert record.effect is not None and want.effect is not None
        assert (record.effect.executed, record.effect.verified) == (
            want.effect.executed, want.effect.verified)
        attempt = attempts[record.case_id]
        assert attempt.kind == "formal" and attempt.input_sha256 == record.input_sha256
        assert attempt.output_text is not None
        assert attempt.request is not None and attempt.request.sha256() == record.input_sha256
        assert record.input_tokens == 100 and record.output_tokens == 7
    again = import_inspect_log(_path(examples_log), "from-inspect", records_path)[0]
    assert (again.imported, again.already_present) == (0, 8)


def test_analysis_commands_work_on_an_imported_run(examples_log: EvalLog, tmp_path: Path,
                                                   records_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["import-inspect", str(_path(examples_log)), "--run-id", "insp",
                               "--records", str(records_path)])
    assert done.exit_code == 0, done.output
    assert "8 records written" in " ".join(done.output.split())  # however the line wraps
    authpairs_records(load_examples(), tmp_path, True)  # run 'reference' in ref.sqlite
    reference = f"{tmp_path / 'ref.sqlite'}::reference"
    compared = runner.invoke(app, ["compare", reference, "insp", "--records", str(records_path),
                                   "--no-list"])
    assert compared.exit_code == 0, compared.output
    scored = runner.invoke(app, ["score", "insp", "--records", str(records_path),
                                 "--by", "family"])
    assert scored.exit_code == 0 and "by family" in scored.output
    composed = runner.invoke(app, ["compose", reference, f"{records_path}::insp"])
    assert composed.exit_code == 0, composed.output


def test_a_log_of_another_task_is_refused(log_dir: Path, records_path: Path) -> None:
    other = Task(dataset=[Sample(id="EX-1", input=[ChatMessageUser(content="hello")])],
                 solver=generate(), name="other_task")
    log = run_inspect(other, log_dir)
    with pytest.raises(InspectImportError, match="not of an authpairs task"):
        import_inspect_log(_path(log), "x", records_path)
    assert not records_path.exists() or RecordStore(records_path).get_run("x") is None


def test_a_changed_dataset_is_refused(examples_log: EvalLog, records_path: Path) -> None:
    base = load_examples()
    first = base.cases[0]
    policy = first.public.policy.model_copy(update={"text": first.public.policy.text + " Also."})
    changed = first.model_copy(update={"public": first.public.model_copy(
        update={"policy": policy})})
    dataset = Dataset(base.name, [changed, *base.cases[1:]])
    with pytest.raises(InspectImportError, match="different version of dataset"):
        import_inspect_log(_path(examples_log), "x", records_path, dataset=dataset)
    assert not records_path.exists()


def test_a_changed_prompt_is_refused(examples_log: EvalLog, tmp_path: Path,
                                     records_path: Path) -> None:
    log = read_eval_log(examples_log.location)
    assert log.samples is not None and isinstance(log.samples[3].input, list)
    message = log.samples[3].input[1]
    message.content = str(message.content).replace("Decide", "Please decide", 1) + "\n"
    tampered = tmp_path / "tampered.eval"
    write_eval_log(log, str(tampered))
    with pytest.raises(InspectImportError, match="prompt or response format changed"):
        import_inspect_log(tampered, "x", records_path)
    assert not records_path.exists()


def test_truncated_unfinished_and_missing_logs_are_refused(examples_log: EvalLog,
                                                           tmp_path: Path,
                                                           records_path: Path) -> None:
    data = _path(examples_log).read_bytes()
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(InspectImportError, match="truncated"):
        import_inspect_log(truncated, "x", records_path)
    log = read_eval_log(examples_log.location)
    log.status = "cancelled"
    cancelled = tmp_path / "cancelled.eval"
    write_eval_log(log, str(cancelled))
    with pytest.raises(InspectImportError, match="status is 'cancelled'"):
        import_inspect_log(cancelled, "x", records_path)
    with pytest.raises(InspectImportError, match="not found"):
        import_inspect_log(tmp_path / "missing.eval", "x", records_path)
    assert not records_path.exists()
    runner = CliRunner()
    result = runner.invoke(app, ["import-inspect", str(truncated), "--run-id", "x",
                                 "--records", str(records_path)])
    assert result.exit_code == 2 and "truncated" in result.output


def test_a_second_log_under_the_same_run_id_is_refused(examples_log: EvalLog, log_dir: Path,
                                                       records_path: Path) -> None:
    import_inspect_log(_path(examples_log), "same", records_path)
    second = run_inspect(cases(dataset="examples", interface="direct", split="all"), log_dir,
                         model=mock_model(lambda r: answer_for(r)))
    with pytest.raises(RecordStoreError, match="different configuration"):
        import_inspect_log(_path(second), "same", records_path)
