"""A JSONL file read as the run goes (CaseFile) selects the cases, computes the manifest and
reports errors exactly as the file loaded into a Dataset does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from authpairs.cases.case_file import CaseFile
from authpairs.cases.dataset import Dataset, DatasetError, load_dataset
from authpairs.runs.api import open_run_cases, run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore


@pytest.fixture
def cases_file(tmp_path: Path, examples: Dataset) -> Path:
    rows = [c.model_dump(mode="json") for c in examples]
    for number, row in enumerate(rows):  # both splits, so split selection matters
        row["split"] = "test" if number % 3 == 0 else "dev"
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    return path


@pytest.mark.parametrize(("split", "limit"), [(None, None), ("dev", None), ("test", 2),
                                              ("all", 5), ("all", None)])
def test_the_selection_and_manifest_equal_the_loaded_datasets(
        cases_file: Path, split: str | None, limit: int | None) -> None:
    loaded = load_dataset(cases_file).select_for_run(split, limit)
    streamed = CaseFile.for_run(cases_file, split, limit)
    assert list(streamed) == loaded.cases
    assert streamed.case_ids() == loaded.case_ids() and len(streamed) == len(loaded)
    assert streamed.manifest() == loaded.manifest()
    assert streamed.name == loaded.name


def _error(call: object) -> str:
    with pytest.raises(DatasetError) as info:
        call()  # type: ignore[operator]
    return str(info.value)


def test_errors_are_the_loaded_datasets(cases_file: Path) -> None:
    assert _error(lambda: CaseFile.for_run(cases_file, "train")) == _error(
        lambda: load_dataset(cases_file).select_for_run("train"))
    lines = cases_file.read_text().splitlines()
    cases_file.write_text("\n".join([*lines[:3], '{"case_id": "x"', *lines[3:]]) + "\n")
    assert _error(lambda: CaseFile.for_run(cases_file, "all")) == _error(
        lambda: load_dataset(cases_file))
    cases_file.write_text("\n".join([*lines, lines[0]]) + "\n")
    assert "duplicate case id" in _error(lambda: CaseFile.for_run(cases_file, "all"))
    assert _error(lambda: CaseFile(cases_file.with_name("none.jsonl"))) == _error(
        lambda: load_dataset(cases_file.with_name("none.jsonl")))


def test_a_run_on_a_file_reads_it_as_it_goes_and_records_the_same(
        cases_file: Path, tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    config = RunConfig.model_validate({
        "dataset": str(cases_file), "split": "all", "records": str(records), "run_id": "file",
        "concurrency": 1,
        "reviewer": {"baseline": "always-allow"}})
    assert isinstance(open_run_cases(config), CaseFile)
    asyncio.run(run_async(config, progress=False))
    in_memory = config.model_copy(update={"run_id": "memory"})
    asyncio.run(run_async(in_memory, progress=False, dataset=load_dataset(cases_file)))
    with RecordStore(records, readonly=True) as store:
        streamed, loaded = store.get_run("file"), store.get_run("memory")
        assert streamed is not None and loaded is not None
        assert streamed.manifest_sha256 == loaded.manifest_sha256
        assert streamed.expected_case_ids == loaded.expected_case_ids
        got = {r.case_id: r.model_dump(exclude={"run_id", "latency_s"})
               for r in store.case_records("file")}
        want = {r.case_id: r.model_dump(exclude={"run_id", "latency_s"})
                for r in store.case_records("memory")}
    assert got == want and len(got) == 8
