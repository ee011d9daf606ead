"""``authpairs data export-hf``: Parquet configs ``public``/``reference`` with a Hub dataset card;
``datasets.load_dataset("parquet", ...)`` reproduces every case; the card's YAML passes
``datasets``' own card parsing and the folder loads through it without a warning; the card
describes every column and names the source repositories; ``authpairs run --dataset DIR``
accepts the folder; an occupied folder is refused without ``--force``."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from authpairs.cases.dataset import Dataset, DatasetError
from authpairs.cases.examples import load_examples
from authpairs.cases.hf import (
    COLUMN_DESCRIPTIONS,
    PUBLIC_COLUMNS,
    REFERENCE_COLUMNS,
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
from authpairs.tracks.native.byo import import_cedar
from authpairs.tracks.registry import resolve_dataset

CEDAR_CLINIC = Path(__file__).parents[1] / "tracks" / "native" / "fixtures" / "cedar" / "good" \
    / "clinic"
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


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _no_warnings() -> Iterator[None]:
    """Fail on any Python warning or any WARNING log record of ``datasets`` / the Hub client
    (their loggers do not propagate to the root logger, so pytest's capture misses them)."""
    handler = _Collect()
    loggers = [logging.getLogger(name) for name in ("datasets", "huggingface_hub")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert not caught, [str(w.message) for w in caught]
    assert not handler.records, [r.getMessage() for r in handler.records]


def test_the_card_and_folder_load_with_datasets_without_warnings(tmp_path: Path) -> None:
    import datasets
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    dataset = load_language_dataset()
    out = tmp_path / "hf"
    export_hf(dataset, out)
    with _no_warnings():
        card = DatasetCard.load(out / "README.md")
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        folder = {name: datasets.load_dataset(str(out), name, cache_dir=str(tmp_path / "c1"))
                  for name in ("public", "reference")}
        parquet = datasets.load_dataset("parquet", data_files={
            "dev": str(out / "public" / "dev-00000-of-00001.parquet")},
            cache_dir=str(tmp_path / "c2"))
    assert set(configs) == set(infos) == {"public", "reference"}
    for name, loaded in folder.items():
        recorded = infos[name].splits
        assert recorded is not None and set(recorded) == {"dev", "test"}
        for split in ("dev", "test"):
            assert recorded[split].num_examples == loaded[split].num_rows
            assert recorded[split].num_bytes == loaded[split].info.splits[split].num_bytes > 0
    assert parquet["dev"].num_rows == 40
    assert folder["public"]["dev"].column_names == list(PUBLIC_COLUMNS)


def test_the_card_describes_every_column_and_names_the_repositories(tmp_path: Path) -> None:
    assert set(COLUMN_DESCRIPTIONS) == set(PUBLIC_COLUMNS) | set(REFERENCE_COLUMNS)
    native = import_cedar(CEDAR_CLINIC)
    for case in native.cases:
        case.reference.facts["repository"] = "https://github.com/cedar-policy/cedar-examples"
    export_hf(native, tmp_path / "hf")
    body = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
    for name, text in COLUMN_DESCRIPTIONS.items():
        assert f"| `{name}` |" in body and text in body, name
    assert "Upstream repositories: https://github.com/cedar-policy/cedar-examples." in body
    export_hf(load_examples(), tmp_path / "examples")
    examples = (tmp_path / "examples" / "README.md").read_text(encoding="utf-8")
    assert "Upstream repositories" not in examples and "ship with it" in examples


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
