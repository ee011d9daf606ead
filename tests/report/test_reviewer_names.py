"""Every view names the reviewer that ran: a Python function, an HTTP service, NeMo, a model.

Real runs of the example cases are recorded to one SQLite file -- ``examples.guard:review`` (a
plain function), the ``http`` guardrail against a loopback service, ``nemo-self-check`` against
an OpenAI-compatible stub, and the direct interface on a scripted backend -- then ``authpairs
runs``, ``authpairs score`` (one run and several), the HTML report and ``authpairs export`` are
read back. None of the guardrail runs may show the configuration's unused default backend
(SmolLM2) or interface (schema); hints never offer options that do not apply.
"""

from __future__ import annotations

import asyncio
import csv
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from authpairs.analysis.scoring import Score
from authpairs.cli import app
from authpairs.report.build import build_report
from authpairs.report.hints import unavailable_hint
from authpairs.report.request import ReportRequest
from authpairs.report.reviewer_name import name_reviewer
from authpairs.runs.api import run_async
from authpairs.runs.config import config_from_dict
from tests.loopback import json_service
from tests.review.guardrails.chat_stub import ChatStub

pytest.importorskip("nemoguardrails")

SCRIPT = "tests.report.test_reviewer_names:allow_all"


def allow_all(request: Any) -> str:
    """Scripted backend answer for the direct interface."""
    return '{"decision": "ALLOW"}'


@dataclass(frozen=True)
class Recorded:
    """The records file and the run id of each kind of reviewer."""

    records: Path
    runs: dict[str, str]
    service: str


EXPECTED = {
    "callable": ("guardrail examples.guard:review", "Python function, parser label", "-"),
    "nemo": ("guardrail nemo-self-check", "NeMo self_check_input, built-in prompt",
             "openai stub-model"),
    "model": ("direct", "direct", "scripted tests.report.test_reviewer_names:allow_all"),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    folder = tmp_path_factory.mktemp("names")
    records = folder / "r.sqlite"
    base = {"dataset": "examples", "records": str(records), "enforce": False}
    with json_service(lambda path, body: (200, {"decision": "BLOCK"})) as url, \
            ChatStub(lambda body: ("No", "stop")) as stub:
        service = f"{url}/verdict"
        reviewers: dict[str, dict[str, Any]] = {
            "callable": {"guardrail": "examples.guard:review"},
            "http": {"guardrail": "http", "guardrail_options": {"url": service}},
            "nemo": {"guardrail": "nemo-self-check",
                     "backend": {"kind": "openai", "base_urls": [stub.base_url],
                                 "model": "stub-model"}},
            "model": {"interface": "direct", "backend": {"kind": "scripted", "script": SCRIPT}},
        }
        runs = {}
        for kind, reviewer in reviewers.items():
            config = config_from_dict({**base, "run_id": f"names-{kind}", "reviewer": reviewer})
            state = asyncio.run(run_async(config, progress=False))
            assert state.total == state.completed_now == 8
            runs[kind] = state.run_id
    yield Recorded(records, runs, service)


def _expected(recorded: Recorded) -> dict[str, tuple[str, str, str]]:
    return {**EXPECTED, "http": ("guardrail http", f"POST case to {recorded.service}", "-")}


def _label(parts: tuple[str, str, str]) -> str:
    reviewer, interface, model = parts
    if reviewer == interface:
        return f"{interface} / {model}"
    return " / ".join(p for p in (reviewer, interface, model) if p != "-")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


def test_runs_lists_reviewer_interface_and_model(recorded: Recorded) -> None:
    output = _invoke("runs", "--records", str(recorded.records))
    cells: dict[str, list[str]] = {run_id: [] for run_id in recorded.runs.values()}
    for line in output.splitlines():  # a narrow terminal stacks the columns in parts
        first, *rest = re.split(r"\s{2,}", line.strip())
        if first in cells:
            cells[first].extend(rest)
    for kind, (reviewer, interface, model) in _expected(recorded).items():
        row = cells[recorded.runs[kind]]
        assert row[:3] == [reviewer, interface, model], (kind, row)
        assert row[3:6] == ["examples", "off", "8/8"]
    assert "SmolLM2" not in output and "schema" not in output


def test_score_names_the_reviewer_for_one_run_and_several(recorded: Recorded) -> None:
    expected = _expected(recorded)
    for kind, run_id in recorded.runs.items():
        output = _invoke("score", run_id, "--records", str(recorded.records))
        assert f"reviewer: {_label(expected[kind])}\n" in output
        assert "SmolLM2" not in output
    output = _invoke("score", *recorded.runs.values(), "--records", str(recorded.records))
    for kind, run_id in recorded.runs.items():
        assert f"{run_id}: {_label(expected[kind])}\n" in output


def test_the_html_report_names_every_reviewer(recorded: Recorded, tmp_path: Path) -> None:
    result = build_report(ReportRequest(runs=list(recorded.runs.values()), out=tmp_path / "rep",
                                        records=recorded.records, draws=200, workers=1))
    page = result.html.read_text(encoding="utf-8")
    with (tmp_path / "rep" / "tables" / "runs.csv").open(encoding="utf-8") as handle:
        table = {row["run"]: row["reviewer"] for row in csv.DictReader(handle)}
    for kind, parts in _expected(recorded).items():
        label = _label(parts)
        run_id = recorded.runs[kind]
        assert table[run_id] == label
        assert html.escape(f"{run_id}: {label}", quote=False) in page  # the overview
    assert "SmolLM2" not in page


def test_export_names_the_reviewer_on_its_first_line(recorded: Recorded,
                                                     tmp_path: Path) -> None:
    for kind, parts in _expected(recorded).items():
        out = tmp_path / f"{kind}.jsonl"
        _invoke("export", recorded.runs[kind], "--out", str(out), "--records",
                str(recorded.records))
        first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
        reviewer, interface, model = parts
        assert first["reviewer"] == {
            "kind": "interface" if kind == "model" else "guardrail",
            "reviewer": reviewer.removeprefix("guardrail "), "interface": interface,
            "model": model, "label": _label(parts)}


REASONS = ("length", "not_json", "extra_prose", "multiple_objects", "missing_field",
           "extra_field", "wrong_type", "invalid_value", "empty", "filtered", "infrastructure",
           "no_label", "native_fallback", "guardrail_error", "malformed")
MODEL_FLAGS = ("--max-tokens", "--temperature", "--base-url", "--model")


@pytest.mark.parametrize(("reviewer", "never"), [
    ({"guardrail": "examples.guard:review"}, (*MODEL_FLAGS, "--interface")),
    ({"guardrail": "http", "guardrail_options": {"url": "http://x"}},
     (*MODEL_FLAGS, "--interface")),
    ({"guardrail": "nemo-self-check", "sampling": {"max_tokens": 16}}, ("--interface",)),
    ({"interface": "policyguard", "sampling": {"max_tokens": 4}}, ("--interface",)),
    ({"interface": "schema", "sampling": {"max_tokens": 64}}, ("--interface schema",)),
    ({"interface": "direct", "sampling": {"max_tokens": 64}}, ("--interface direct",)),
    ({"baseline": "always-allow"}, ("hint",)),
])
def test_hints_offer_only_options_that_apply(reviewer: dict[str, Any],
                                             never: tuple[str, ...]) -> None:
    hints = []
    for reason in REASONS:
        hint = unavailable_hint(Score(n=4, unavailable=4, unavailable_by_reason={reason: 4}),
                                reviewer)
        if hint is not None:
            hints.append(hint)
            assert not any(flag in hint for flag in never), (reason, hint)
    name = name_reviewer(reviewer)
    assert (not hints) is (name.kind == "baseline")
    if "--max-tokens" in name.options:
        assert any("--max-tokens (now" in hint for hint in hints)


def test_the_hint_after_a_failing_function_run_names_no_model_option(tmp_path: Path) -> None:
    output = CliRunner().invoke(app, [
        "run", "--dataset", "examples", "--no-enforce", "--quiet", "--records",
        str(tmp_path / "r.sqlite"), "--guardrail", "tests.review.guardrails.guards:raises"],
        env={"COLUMNS": "300"}).output
    hint = [line for line in output.splitlines() if line.startswith("hint:")]
    assert len(hint) == 1 and "(guardrail_error)" in hint[0], output
    assert not any(flag in hint[0] for flag in (*MODEL_FLAGS, "--interface"))
    assert "reviewer: guardrail tests.review.guardrails.guards:raises / Python function" in output
