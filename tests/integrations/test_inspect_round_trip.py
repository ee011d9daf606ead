"""Inspect round trip: an imported log is a complete run (expected cases, a configuration hash
``audit`` recomputes, the reviewer named), ``score``, ``compare``, ``gate`` and ``audit`` pass on
it, ``--epochs N`` runs with effects on (one sandbox per epoch) and every epoch is imported as a
run of its own; ``inspect eval --model mockllm/model`` runs from the command line offline."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from typer.testing import CliRunner

from authpairs.analysis.scoring import score_records
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.examples import load_examples
from authpairs.cli import app
from authpairs.integrations.inspect_backend import InspectBackendConfig
from authpairs.integrations.inspect_import import import_inspect_log
from authpairs.integrations.inspect_task import cache_name, epoch_records
from authpairs.integrations.inspect_tasks import cases
from authpairs.report.reviewer_name import name_run
from authpairs.review.interfaces import get_interface
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore
from tests.integrations.conftest import INSPECT_WARNINGS, mock_model, run_inspect
from tests.integrations.test_inspect_task import _comparable, _metrics, authpairs_records

pytestmark = INSPECT_WARNINGS

#: Every request fails fast: a test that passes made no download.
NO_NETWORK = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
              "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
              "NO_PROXY": "", "no_proxy": ""}


def _oracle(request: ChatRequest) -> str:
    """The right decision for each examples case (found by its direct-interface input)."""
    direct = get_interface("direct")
    for case in load_examples():
        if direct.render(case.public).sha256() == request.sha256():
            lawful = case.reference.label.value == "lawful"
            return '{"decision": "%s"}' % ("ALLOW" if lawful else "BLOCK")
    raise AssertionError("not an examples input")


def _epochs_eval(log_dir: Path, epochs: int, enforce: bool = True,
                 **options: object) -> EvalLog:
    task = cases(dataset="examples", interface="direct", split="all", enforce=enforce)
    logs = inspect_eval(task, model=mock_model(), log_dir=str(log_dir), display="none",
                        epochs=epochs, **options)  # type: ignore[arg-type]
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_an_imported_run_is_complete_and_passes_audit(log_dir: Path,
                                                      records_path: Path) -> None:
    log = run_inspect(cases(dataset="examples", interface="direct", split="all"), log_dir)
    import_inspect_log(Path(log.location), "insp", records_path)
    with RecordStore(records_path) as store:
        info = store.get_run("insp")
        assert info is not None
        report = audit_run(store, "insp")
    assert report.ok, report.findings
    assert not report.skipped
    assert info.expected_case_ids == sorted(c.case_id for c in load_examples())
    config = RunConfig.model_validate(info.config["resolved"])
    assert config.sha256() == info.config_sha256
    backend = config.reviewer.backend
    assert isinstance(backend, InspectBackendConfig)
    assert (backend.model, backend.eval_id, backend.epoch) == ("mockllm/model",
                                                               log.eval.eval_id, 1)
    assert config.reviewer.sampling.max_tokens == 2048
    assert config.reviewer.sampling.temperature == 0.0
    assert name_run(info.config).label == "direct / inspect mockllm/model"
    assert (config.dataset, config.split, config.enforce) == ("examples", "all", True)
    scored = _cli("score", "insp", "--records", str(records_path))
    assert "8 recorded of 8 expected" in scored
    listing = _cli("runs", "--records", str(records_path))
    assert "inspect mockllm/model" in listing
    assert "audit passed" in _cli("audit", "insp", "--records", str(records_path))


def test_epochs_with_effects_each_epoch_a_run_of_its_own(log_dir: Path, tmp_path: Path,
                                                         records_path: Path) -> None:
    log = _epochs_eval(log_dir, epochs=3)
    reference = {r.case_id: r for r in authpairs_records(load_examples(), tmp_path, True)}
    # Each epoch is enforced in a fresh sandbox of its own, so every epoch's records equal
    # one authpairs run's, and the Inspect metrics (mean over epochs) equal its scores.
    assert log.samples is not None and len(log.samples) == 24
    expected = score_records(list(reference.values()))
    metrics = _metrics(log)
    for name in ("lawful_completions", "forbidden_effects", "false_denials", "unavailable"):
        assert metrics[name] == getattr(expected, name), name
    assert metrics["usable_correctness"] == pytest.approx(expected.usable_correctness)
    output = _cli("import-inspect", log.location, "--run-id", "ep", "--records",
                  str(records_path))
    assert "3 epochs: one run per epoch" in output
    hashes = set()
    with RecordStore(records_path) as store:
        for epoch in (1, 2, 3):
            run_id = f"ep-e{epoch}"
            info = store.get_run(run_id)
            assert info is not None
            hashes.add(info.config_sha256)
            assert info.config["resolved"]["reviewer"]["backend"]["epoch"] == epoch
            records = store.case_records(run_id)
            assert len(records) == 8
            for record in records:
                want = reference[record.case_id]
                assert _comparable(record) | {"effect": None} == _comparable(want) | {
                    "effect": None}
                assert record.effect is not None and want.effect is not None
                assert (record.effect.executed, record.effect.verified,
                        record.effect.audit_ok) == (want.effect.executed,
                                                    want.effect.verified, want.effect.audit_ok)
            assert audit_run(store, run_id).ok
        assert store.get_run("ep") is None
    assert len(hashes) == 1  # repetitions of one configuration
    compared = _cli("compare", "ep-e1", "ep-e3", "--records", str(records_path), "--no-list")
    assert "net +0" in compared


def test_epochs_without_effects_are_all_kept(log_dir: Path, records_path: Path) -> None:
    log = _epochs_eval(log_dir, epochs=2, enforce=False)
    result = import_inspect_log(Path(log.location), "off", records_path)
    assert [(r.run_id, r.imported, r.expected) for r in result] == [
        ("off-e1", 8, 8), ("off-e2", 8, 8)]


def test_an_eval_level_limit_is_the_expected_selection(log_dir: Path,
                                                       records_path: Path) -> None:
    log = _epochs_eval(log_dir, epochs=1, limit=3)
    run = import_inspect_log(Path(log.location), "first3", records_path)[0]
    assert (run.imported, run.expected) == (3, 3)
    with RecordStore(records_path) as store:
        assert audit_run(store, "first3").ok
    assert "3 recorded of 3 expected" in _cli("score", "first3", "--records",
                                               str(records_path))


def test_gate_passes_on_imported_runs(log_dir: Path, tmp_path: Path,
                                      records_path: Path) -> None:
    log = run_inspect(cases(dataset="examples", interface="direct", split="all"), log_dir,
                      model=mock_model(_oracle))
    import_inspect_log(Path(log.location), "right", records_path)
    required = tmp_path / "required.txt"
    required.write_text("\n".join(c.case_id for c in load_examples()
                                  if c.reference.label.value == "lawful"), encoding="utf-8")
    output = _cli("gate", "--baseline", "right", "--candidate", "right", "--required",
                  str(required), "--records", str(records_path))
    assert "PASS" in output.upper()


def test_interface_options_travel_to_the_stored_configuration(log_dir: Path,
                                                               records_path: Path) -> None:
    task = cases(dataset="examples", interface="policyguard", split="all", enforce=False,
                 interface_options={"labels": "card"})
    log = run_inspect(task, log_dir, model=mock_model(lambda request: "no violation"))
    assert all(r.decision is not None and r.decision.value == "ALLOW"
               for r in epoch_records([_score(s) for s in log.samples or []])[0])
    import_inspect_log(Path(log.location), "card", records_path)
    with RecordStore(records_path) as store:
        info = store.get_run("card")
        assert info is not None
        assert info.config["resolved"]["reviewer"]["interface_options"] == {"labels": "card"}
        assert {r.decision.value for r in store.case_records("card")
                if r.decision is not None} == {"ALLOW"}
        report = audit_run(store, "card")
    assert report.ok, report.findings


def _score(sample: object) -> object:
    from inspect_ai.scorer import SampleScore

    scores = sample.scores  # type: ignore[attr-defined]
    return SampleScore(score=next(iter(scores.values())), sample_id=sample.id)  # type: ignore[attr-defined]


def test_the_stored_configuration_reruns_on_the_logs_answers(log_dir: Path,
                                                             records_path: Path) -> None:
    """Backend kind ``inspect`` answers from the log: an authpairs run with the imported run's
    configuration (another run id) decides every case as the import did."""
    log = _epochs_eval(log_dir, epochs=2, enforce=False)
    import_inspect_log(Path(log.location), "imp", records_path)
    with RecordStore(records_path) as store:
        info = store.get_run("imp-e2")
        assert info is not None
        imported = {r.case_id: r for r in store.case_records("imp-e2")}
    resolved = dict(info.config["resolved"], run_id="rerun")
    config = RunConfig.model_validate(resolved)
    state = asyncio.run(run_async(config, progress=False))
    assert state.completed_now == 8
    with RecordStore(records_path) as store:
        rerun = store.case_records("rerun")
    for record in rerun:
        want = imported[record.case_id]
        assert (record.input_sha256, record.status, record.decision, record.dispatch) == (
            want.input_sha256, want.status, want.decision, want.dispatch)


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_mockllm_from_the_command_line_runs_offline(tmp_path: Path) -> None:
    """``inspect eval`` with ``mockllm`` (no token usage, so Inspect counts tokens with
    tiktoken) and ``--epochs 2``, no network, an empty tiktoken cache; then the import."""
    env = {**os.environ, **NO_NETWORK, "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
           "AUTHPAIRS_CACHE": str(tmp_path / "cache"), "INSPECT_LOG_DIR": str(tmp_path / "logs")}
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run(
        [str(inspect), "eval", "authpairs/cases", "-T", "dataset=examples", "-T", "split=all",
         "-T", "interface=direct", "--model", "mockllm/model", "--epochs", "2",
         "--display", "none", "--log-format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "tiktoken" / cache_name()).is_file()
    (log,) = (tmp_path / "logs").glob("*.json")
    assert json.loads(log.read_text())["status"] == "success"
    records = tmp_path / "r.sqlite"
    output = _cli("import-inspect", str(log), "--run-id", "cli", "--records", str(records))
    assert "run cli-e1" in output and "run cli-e2" in output
    for run_id in ("cli-e1", "cli-e2"):
        assert "8 recorded of 8 expected" in _cli("score", run_id, "--records", str(records))
        assert "audit passed" in _cli("audit", run_id, "--records", str(records))


def test_the_packaged_vocabulary_serves_tiktoken_when_no_cache_is_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env.update(NO_NETWORK, AUTHPAIRS_CACHE=str(tmp_path / "cache"))
    code = ("import os, tiktoken\n"
            "from authpairs.integrations.inspect_task import use_packaged_vocabulary\n"
            "folder = use_packaged_vocabulary()\n"
            "assert os.environ['TIKTOKEN_CACHE_DIR'] == str(folder)\n"
            "print(folder, len(tiktoken.get_encoding('o200k_base').encode('hello world')))\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    folder, count = done.stdout.split()
    assert Path(folder).is_relative_to(tmp_path / "cache") and count == "2"


@pytest.mark.parametrize("present", [False, True])
def test_a_cache_folder_the_user_set_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             present: bool) -> None:
    from authpairs.integrations.inspect_task import use_packaged_vocabulary

    mine = tmp_path / "mine"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(mine))
    monkeypatch.setenv("AUTHPAIRS_CACHE", str(tmp_path / "cache"))
    if present:
        mine.mkdir()
        (mine / cache_name()).write_bytes(b"damaged")
    assert use_packaged_vocabulary() == mine
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(mine)
    data = (mine / cache_name()).read_bytes()
    assert data == (tmp_path / "cache" / "tiktoken" / "o200k_base.tiktoken").read_bytes()


def test_the_inspect_backend_refuses_another_eval_and_unknown_inputs(log_dir: Path) -> None:
    from authpairs.errors import BackendError
    from authpairs.integrations.inspect_backend import InspectLogBackend

    log = _epochs_eval(log_dir, epochs=1, enforce=False)
    config = InspectBackendConfig(model="mockllm/model", eval_id="another", log=log.location)
    with pytest.raises(BackendError, match="not another"):
        InspectLogBackend(config).load()
    backend = InspectLogBackend(config.model_copy(
        update={"eval_id": log.eval.eval_id}))
    sampling = RunConfig().reviewer.sampling
    known = get_interface("direct").render(load_examples().cases[0].public)
    with pytest.raises(BackendError, match="not entered"):
        asyncio.run(backend.complete(known, sampling))

    async def ask(request: ChatRequest) -> ChatResponse:
        async with backend:
            return await backend.complete(request, sampling)

    answer = asyncio.run(ask(known))
    assert answer.finish_reason == "stop" and answer.output_tokens == 7
    assert backend.answers is not None and len(backend.answers) == 8
    stranger = ChatRequest(messages=[{"role": "user", "content": "hello"}])
    with pytest.raises(BackendError, match="no answer for input"):
        asyncio.run(ask(stranger))
