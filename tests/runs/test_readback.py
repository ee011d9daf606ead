"""Everything stored can be read back: any text a model or guardrail returns (lone surrogates,
control characters, 1 MB) is recorded, then read back unchanged through ``authpairs export``,
``authpairs audit``, ``authpairs report`` and the Python API (``authpairs.open_records``,
``authpairs.score``). A property test draws arbitrary strings as the answer."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import authpairs
from authpairs.cli import app
from tests.runs import readback_script

runner = CliRunner()

_CHARACTERS = st.one_of(st.characters(exclude_categories=()),  # every code point but Cs
                        st.integers(0xD800, 0xDFFF).map(chr),  # lone surrogates
                        st.sampled_from(["\x00", "\x1b", "\r", "\u2028", "\ufeff", "\\", '"']))
ANSWERS = st.one_of(st.text(_CHARACTERS, max_size=300),
                    st.builds(lambda a, b: '{"decision": "ALLOW"}' + a + b,
                              st.text(_CHARACTERS, max_size=20), st.sampled_from(["", "\ud800"])))
MEGABYTE = ("ALLOW \ud800\x00\x1b\u2028 " * 100_000)[:1_000_000]


def _config(folder: Path, kind: str) -> Path:
    config = folder / f"{kind}.yaml"
    if kind == "model":
        config.write_text("reviewer:\n  interface: direct\n  backend:\n    kind: scripted\n"
                          "    script: tests.runs.readback_script:answer\n")
    else:
        config.write_text("reviewer:\n  guardrail: tests.runs.readback_script:guard\n")
    return config


def _as_json_reads_it(text: str) -> str:
    """``text`` as any JSON reader returns it: a high surrogate followed by a low one is the
    character the pair encodes (JSON has one spelling for both), every other string as is."""
    return str(json.loads(json.dumps(text)))


def _round_trip(text: str, kind: str) -> None:
    """Record ``text`` as every case's answer, then read it back every way."""
    readback_script.ANSWER = text
    expected = _as_json_reads_it(text)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        db = folder / "r.sqlite"
        result = runner.invoke(app, ["run", "--config", str(_config(folder, kind)),
                                     "--dataset", "examples", "--split", "all", "--records",
                                     str(db), "--run-id", "odd", "--no-enforce", "--quiet"])
        assert result.exit_code == 0, result.output

        out = folder / "odd.jsonl"
        result = runner.invoke(app, ["export", "odd", "--records", str(db), "--out", str(out)])
        assert result.exit_code == 0, result.output
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        rows = lines[1:]
        assert len(rows) == 8
        for row in rows:
            formal = [a for a in row["attempts"] if a["kind"] == "formal"]
            assert [a["output_text"] for a in formal] == [expected]

        result = runner.invoke(app, ["audit", "odd", "--records", str(db)])
        assert result.exit_code == 0, result.output
        assert "audit passed" in result.output

        result = runner.invoke(app, ["report", "odd", "--records", str(db), "--out",
                                     str(folder / "report")])
        assert result.exit_code == 0, result.output
        assert (folder / "report" / "report.html").stat().st_size > 0

        with authpairs.open_records(db) as store:
            attempts = [a for a in store.attempts("odd") if a.kind == "formal"]
            assert [a.output_text for a in attempts] == [expected] * 8
            assert len(store.case_records("odd")) == 8
        assert authpairs.score(f"{db}::odd")


@pytest.mark.slow  # ten whole runs through the CLI path; the guardrail variant below stays fast
@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(ANSWERS)
@example("\ud800")
@example("\ud800\udc00")
@example("ok\udfff\x00\x1b")
@example('{"decision": "ALLOW"}\ud800')
@example("")
def test_any_model_answer_reads_back(text: str) -> None:
    _round_trip(text, "model")


@pytest.mark.parametrize("text", ["\ud800", "ALLOW\x00", "BLOCK\udc80\u2028"])
def test_any_guardrail_answer_reads_back(text: str) -> None:
    _round_trip(text, "guardrail")


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_a_megabyte_answer_reads_back() -> None:
    assert len(MEGABYTE) == 1_000_000
    _round_trip(MEGABYTE, "model")
