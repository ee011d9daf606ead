"""``authpairs data export-hf``: Parquet configs ``public``/``reference`` with a Hub dataset card;
``datasets.load_dataset("parquet", ...)`` reproduces every case; ``authpairs run --dataset DIR``
accepts the folder; an occupied folder is refused without ``--force``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from authpairs.cases.dataset import Dataset, DatasetError
from authpairs.cases.examples import load_examples
from authpairs.cases.hf import (
    ExportError,
    case_from_rows,
    export_hf,
    load_hf_export,
    public_row,
)
from authpairs.cases.models import Case
from authpairs.cli import app
from authpairs.runs.store import RecordStore
from authpairs.tracks.language.cases import load_language_dataset
from authpairs.tracks.registry import resolve_dataset

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _load_parquet(folder: Path, config: str, cache: Path) -> dict[str, list[dict[str, Any]]]:
    import datasets

    files = {split: str(folder / config / f"{split}-00000-of-00001.parquet")
             for split in ("dev", "test") if (folder / config / f"{split}-00000-of-00001.parquet"
                                              ).exists()}
    loaded = datasets.load_dataset("parquet", data_files=files, cache_dir=str(cache))
    return {split: list(loaded[split]) for split in files}


def _front_matter(folder: Path) -> dict[str, Any]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    data = yaml.safe_load(text.split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_round_trip_through_datasets_reproduces_every_case(tmp_path: Path) -> None:
    dataset = load_language_dataset()
    out = tmp_path / "hf"
    counts = export_hf(dataset, out)
    assert counts == {"dev": 40, "test": 160}
    public = _load_parquet(out, "public", tmp_path / "cache")
    reference = _load_parquet(out, "reference", tmp_path / "cache")
    rebuilt: dict[str, Case] = {}
    for split, rows in public.items():
        refs = {row["case_id"]: row for row in reference[split]}
        assert set(refs) == {row["case_id"] for row in rows}
        for row in rows:
            rebuilt[row["case_id"]] = case_from_rows(row, refs[row["case_id"]], split)
    assert len(rebuilt) == len(dataset)
    for case in dataset:
        assert rebuilt[case.case_id] == case, case.case_id
    assert load_hf_export(out).cases == dataset.cases  # the authpairs loader keeps the order


def test_public_config_holds_no_reference_data(tmp_path: Path) -> None:
    dataset = load_examples()
    export_hf(dataset, tmp_path / "hf")
    public = _load_parquet(tmp_path / "hf", "public", tmp_path / "cache")
    columns = set(public["dev"][0])
    assert not columns & {"label", "expression", "facts", "notes", "attributes", "resolved"}
    text = repr(public)
    for case in dataset:
        assert case.reference.label.value not in {str(v) for v in public_row(0, case).values()}
        if case.reference.expression:
            assert case.reference.expression not in text
        scenario = case.attributes.get("scenario", "")
        if "-" in scenario:
            assert scenario not in text


def test_dataset_card_has_the_hub_metadata(tmp_path: Path) -> None:
    dataset = load_language_dataset()
    export_hf(dataset, tmp_path / "hf")
    meta = _front_matter(tmp_path / "hf")
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"public", "reference"} and configs["public"]["default"] is True
    for name, config in configs.items():
        for entry in config["data_files"]:
            assert entry["path"].startswith(f"{name}/") and f"/{entry['split']}-" in entry["path"]
            assert (tmp_path / "hf" / entry["path"]).is_file()
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in infos["public"]["splits"]} == {
        "dev": 40, "test": 160}
    assert {f["name"] for f in infos["reference"]["features"]} >= {"case_id", "label"}
    assert meta["license"] == "apache-2.0"
    body = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "2610.16838" in body and "Apache-2.0 (synthetic)" in body
    assert dataset.manifest().public_sha256 in body


def test_an_occupied_folder_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "hf"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="already holds files"):
        export_hf(load_examples(), out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    runner = CliRunner()
    refused = runner.invoke(app, ["data", "export-hf", "--dataset", "examples", "--out",
                                  str(out)])
    assert refused.exit_code == 2 and "--force" in refused.output
    forced = runner.invoke(app, ["data", "export-hf", "--dataset", "examples", "--out",
                                 str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert (out / "notes.txt").read_text() == "mine"  # only the export's own files replaced
    assert load_hf_export(out).cases == load_examples().cases


def test_run_accepts_the_exported_folder(tmp_path: Path, records_path: Path) -> None:
    out = tmp_path / "hf"
    export_hf(load_examples(), out)
    assert resolve_dataset(str(out)).manifest() == load_examples().manifest()
    result = CliRunner().invoke(app, [
        "run", "--dataset", str(out), "--split", "all", "--baseline", "always-block",
        "--records", str(records_path), "--run-id", "hf", "--quiet", "--no-enforce"])
    assert result.exit_code == 0, result.output
    with RecordStore(records_path) as store:
        info = store.get_run("hf")
        assert len(store.case_records("hf")) == len(load_examples())
    assert info is not None
    assert info.manifest_sha256 == load_examples().manifest().public_sha256


def test_a_missing_reference_row_is_a_clear_error(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "hf"
    export_hf(load_examples(), out)
    path = out / "reference" / "dev-00000-of-00001.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    with pytest.raises(DatasetError, match="no reference row"):
        load_hf_export(out)
    with pytest.raises(DatasetError, match="not an exported dataset folder"):
        load_hf_export(tmp_path)


def test_an_empty_dataset_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no cases"):
        export_hf(Dataset("empty", []), tmp_path / "hf")
