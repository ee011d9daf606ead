"""Bring your own guardrail: callables, plugins through entry points, the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.cli import app
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.registry import GUARDRAILS, resolve_guardrail
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore

GUARDS = "tests.review.guardrails.guards"


async def _review(target: str, examples: Dataset, **options: object) -> list[object]:
    reviewer = resolve_guardrail(target).build(target, dict(options), None, SamplingConfig())
    outcomes = []
    for case in examples.cases:
        request = reviewer.render(case.public)
        outcomes.append(reviewer.parse(await reviewer.answer(request)))
    return outcomes


async def test_sync_callable_returning_decisions(examples: Dataset) -> None:
    outcomes = await _review(f"{GUARDS}:review", examples)
    assert {o.decision for o in outcomes} == {Decision.ALLOW, Decision.BLOCK}  # type: ignore[attr-defined]


async def test_async_callable_string_through_a_named_parser(examples: Dataset) -> None:
    outcomes = await _review(f"{GUARDS}:review_async", examples, parser="policyguard")
    assert all(o.status is OutcomeStatus.DECISION for o in outcomes)  # type: ignore[attr-defined]
    label_outcomes = await _review(f"{GUARDS}:review_async", examples)  # default parser: label
    assert all(o.reason_code is ReasonCode.NO_LABEL  # type: ignore[attr-defined]
               for o in label_outcomes)


async def test_a_callable_that_raises_is_unavailable_not_a_crash(examples: Dataset) -> None:
    for target in (f"{GUARDS}:raises", f"{GUARDS}:wrong_type"):
        outcomes = await _review(target, examples)
        assert all(o.reason_code is ReasonCode.GUARDRAIL_ERROR  # type: ignore[attr-defined]
                   for o in outcomes)


def test_unknown_names_and_bad_options_are_clear_errors() -> None:
    with pytest.raises(ReviewerError, match=r"unknown guardrail 'nope'.*nemo-self-check"):
        resolve_guardrail("nope")
    with pytest.raises(ReviewerError, match="cannot import"):
        resolve_guardrail("no_such_module_xyz:review")
    with pytest.raises(ReviewerError, match="unknown parser"):
        resolve_guardrail(f"{GUARDS}:review").build("g", {"parser": "nope"}, None,
                                                    SamplingConfig())
    with pytest.raises(ReviewerError, match="unknown guardrail_options"):
        resolve_guardrail(f"{GUARDS}:review").build("g", {"colour": 1}, None, SamplingConfig())


async def test_run_keeps_records_when_the_guardrail_fails(examples: Dataset,
                                                           records_path: Path) -> None:
    config = RunConfig(dataset="examples", records=str(records_path), enforce=False,
                       reviewer={"guardrail": f"{GUARDS}:raises"})
    state = await run_async(config, progress=False)
    assert state.completed_now == len(examples.cases)
    with RecordStore(records_path) as store:
        records = store.case_records(config.resolved_run_id())
    assert {r.reason_code for r in records} == {"guardrail_error"}
    assert all(r.dispatch.value == "BLOCK" for r in records)


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pip-installed-looking distribution registering two guardrails (one broken)."""
    site = tmp_path / "site"
    package = site / "acme_guard"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""Acme guardrail plugin."""\n'
        "from authpairs.review.outcome import Decision\n\n"
        "def review(case):\n"
        "    return Decision.BLOCK if case.request.action == 'refund' else Decision.ALLOW\n")
    info = site / "acme_guard-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-guard\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[authpairs.guardrails]\nacme = acme_guard:review\nbroken = acme_missing:review\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(GUARDRAILS, "_lazy", dict(GUARDRAILS._lazy))
    monkeypatch.setattr(GUARDRAILS, "_loaded", dict(GUARDRAILS._loaded))
    monkeypatch.setattr(GUARDRAILS, "_plugins_scanned", False)
    yield site
    sys.modules.pop("acme_guard", None)


def test_plugin_is_found_listed_and_runs(plugin_dist: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    listing = runner.invoke(app, ["guardrails", "--plain"])
    assert listing.exit_code == 0, listing.output
    rows = {line.split("\t")[0]: line.split("\t") for line in listing.output.splitlines()}
    assert rows["acme"][2] == "plugin: acme-guard"
    assert "fails to load" in rows["broken"][3]
    assert rows["safeguard"][2] == "built-in" and "always-block" in rows
    records = tmp_path / "r.sqlite"
    result = runner.invoke(app, ["run", "--dataset", "examples", "--guardrail", "acme",
                                 "--records", str(records), "--no-enforce", "--quiet"])
    assert result.exit_code == 0, result.output
    broken = runner.invoke(app, ["run", "--dataset", "examples", "--guardrail", "broken",
                                 "--records", str(records), "--no-enforce", "--quiet"])
    assert broken.exit_code == 2 and "acme_missing" in broken.output


def test_cli_runs_a_callable_by_import_path(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--dataset", "examples", "--guardrail",
                                 f"{GUARDS}:review", "--records", str(tmp_path / "r.sqlite"),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    unknown = runner.invoke(app, ["run", "--dataset", "examples", "--guardrail", "nope",
                                  "--records", str(tmp_path / "r.sqlite"), "--quiet"])
    assert unknown.exit_code == 2 and "unknown guardrail 'nope'" in unknown.output


def test_the_callable_source_is_hashed_into_the_run() -> None:
    reviewer = resolve_guardrail(f"{GUARDS}:review").build("g", {}, None, SamplingConfig())
    hashes = reviewer.template_hashes()
    assert list(hashes) == ["callable:g"] and len(hashes["callable:g"]) == 64


def test_unset_guardrail_fields_leave_run_identity_unchanged() -> None:
    plain = RunConfig(dataset="examples")
    assert "guardrail" not in plain.identity()["reviewer"]
    guarded = RunConfig(dataset="examples", reviewer={"guardrail": f"{GUARDS}:review"})
    assert guarded.identity()["reviewer"]["guardrail"] == f"{GUARDS}:review"
    assert guarded.sha256() != plain.sha256()
