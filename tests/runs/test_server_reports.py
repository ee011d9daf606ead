"""What a server reports beside the answer, through a whole run (issue 25, point 7): absurd but
well-formed ``usage`` counts are recorded exactly as reported, read back unchanged and change no
decision; a reply without ``finish_reason`` is a clean stop, so a whole answer decides and a cut
one is unavailable by its shape. docs/reliability.md (section 2 and the parser table) states
both."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.store import RecordStore
from tests.backends.fake_server import FaultServer, completion_body

HUGE = 9223372036854775808  # 2**63: over a signed 64-bit integer
ALLOW = '{"decision": "ALLOW"}'


def _config(url: str, records: Path, run_id: str) -> RunConfig:
    return config_from_dict({
        "dataset": "examples", "split": "all", "limit": 1, "enforce": False,
        "records": str(records), "run_id": run_id,
        "reviewer": {"interface": "direct", "backend": {
            "kind": "openai", "base_urls": [url], "model": "m"}}})


def _body(content: str, *, finish: str | None, usage: dict[str, object]) -> str:
    body = completion_body(content)
    body["usage"] = usage
    if finish is None:
        del body["choices"][0]["finish_reason"]
    else:
        body["choices"][0]["finish_reason"] = finish
    return "body:" + json.dumps(body)


async def test_absurd_usage_counts_are_recorded_as_reported(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    usage = {"prompt_tokens": HUGE, "completion_tokens": 1e30,
             "completion_tokens_details": {"reasoning_tokens": HUGE - 1}}
    async with FaultServer([_body(ALLOW, finish="stop", usage=usage)]) as server:
        state = await run_async(_config(server.base_url, records, "usage"), progress=False)
    assert state.completed_now == 1 and not state.infrastructure_failed
    with RecordStore(records, readonly=True) as store:
        (record,) = store.case_records("usage")
        (attempt,) = store.attempts("usage")
        assert audit_run(store, "usage").ok
    assert record.decision is not None and record.decision.value == "ALLOW"  # no effect on it
    assert (record.input_tokens, record.output_tokens) == (HUGE, int(1e30))
    assert record.reasoning_tokens == HUGE - 1
    assert (attempt.input_tokens, attempt.output_tokens) == (HUGE, int(1e30))
    out = tmp_path / "export.jsonl"
    result = CliRunner().invoke(app, ["export", "usage", "--records", str(records),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(line.get("input_tokens") == HUGE for line in exported)


async def test_a_missing_finish_reason_is_a_clean_stop(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    faults = [_body(ALLOW, finish=None, usage={}), _body(ALLOW[:-3], finish=None, usage={})]
    async with FaultServer(faults) as server:
        config = _config(server.base_url, records, "whole")
        await run_async(config, progress=False)
        config = _config(server.base_url, records, "cut")
        await run_async(config, progress=False)
    with RecordStore(records, readonly=True) as store:
        (whole,) = store.case_records("whole")
        (cut,) = store.case_records("cut")
    assert whole.finish_reason is None and whole.decision is not None
    assert whole.decision.value == "ALLOW"
    assert cut.finish_reason is None and cut.status.value == "unavailable"
    assert cut.dispatch.value == "BLOCK"
