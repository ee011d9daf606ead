"""Golden records: the run path writes the same records as the version that wrote the golden
files (commit ad1b1ba), and ``authpairs audit`` passes on the records that version wrote.
Since then the formal attempt also keeps the exact input (``request``, hashing to its
``input_sha256``); everything else is unchanged.

``records-ad1b1ba.json`` is :func:`golden_run.dump_records` of ``records-ad1b1ba.sqlite``, both
written by that version for :func:`golden_run.golden_config`. Regenerate them only when a
change of the records is intended (and say so in the commit).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run
from authpairs.runs.store import RecordStore
from tests.runs.golden import golden_run

GOLDEN_JSON = golden_run.GOLDEN_DIR / "records-ad1b1ba.json"
GOLDEN_SQLITE = golden_run.GOLDEN_DIR / "records-ad1b1ba.sqlite"


@pytest.fixture(autouse=True)
def _fresh_script() -> None:
    golden_run._failures.clear()


async def test_records_are_identical_to_the_previous_version(tmp_path: Path) -> None:
    records = tmp_path / "records.sqlite"
    state = await run_async(golden_run.golden_config(records), progress=False)
    assert (state.completed_now, state.missing) == (8, 0)
    got = golden_run.dump_records(records)
    want = json.loads(GOLDEN_JSON.read_text())
    assert got["run"] == want["run"]
    assert len(got["cases"]) == len(want["cases"])
    for mine, theirs in zip(got["cases"], want["cases"], strict=True):
        assert mine == theirs, mine["case_id"]
    for attempt in got["attempts"]:  # kept since: the exact input of each formal attempt
        request = attempt["record"].pop("request", None)
        assert (request is not None) == (attempt["kind"] == "formal"), attempt
        if request is not None:
            assert ChatRequest.model_validate(request).sha256() == attempt["input_sha256"]
    assert got["attempts"] == want["attempts"]


def test_the_golden_dump_is_of_the_golden_records() -> None:
    assert golden_run.dump_records(GOLDEN_SQLITE) == json.loads(GOLDEN_JSON.read_text())


def test_audit_passes_on_records_of_the_previous_version(tmp_path: Path) -> None:
    copy = tmp_path / GOLDEN_SQLITE.name
    shutil.copyfile(GOLDEN_SQLITE, copy)
    with RecordStore(copy) as store:
        report = audit_run(store, "golden")
    assert report.ok, report.findings
    assert not report.skipped
