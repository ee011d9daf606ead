"""Hugging Face dataset folders: export a dataset as Parquet with a dataset card, and load it back.

Layout (``authpairs data export-hf``)::

    DIR/README.md                             dataset card (Hub YAML: configs, splits, features,
                                              licence, citation)
    DIR/public/<split>-00000-of-00001.parquet     what a reviewer may see
    DIR/reference/<split>-00000-of-00001.parquet  labels, scoring data, provenance, attributes

The two configs are separate files, so a leaderboard can publish ``public`` and withhold
``reference``. Free-form JSON objects (request arguments, environment, engine state, effect
parameters, facts, attributes) are stored as canonical JSON strings, so every case round-trips
exactly. :func:`load_hf_export` reads such a folder back into a :class:`Dataset` (it is what
``authpairs run --dataset DIR`` uses); it needs ``pyarrow`` (``pip install authpairs[hf]``).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from authpairs.cases.canonical import canonical_json
from authpairs.cases.dataset import Dataset, DatasetError, validation_error
from authpairs.cases.models import Case
from authpairs.errors import DataError

CONFIGS = ("public", "reference")
SPLITS = ("dev", "test")
FORMAT_VERSION = "1"
METADATA_KEY = b"authpairs"
CARD = "README.md"
PAPER_CITATION = """@misc{jing2026authorizationpairs,
  title         = {Same Operation, Different Permission: Evaluating Whether Guardrails Honor
                   Authorization},
  author        = {Jing, Huihao and Chen, Shaojin and Hu, Wenbin and Liu, Yuxuan and
                   Shi, Haochen and Xie, Zhongwei and Li, Haoran and Song, Yangqiu},
  year          = {2026},
  eprint        = {2610.16838},
  archivePrefix = {arXiv}
}"""

# column -> Hub feature dtype; "documents" is a list of structs.
PUBLIC_COLUMNS: dict[str, str] = {
    "position": "int64", "case_id": "string", "source_id": "string", "subject": "string",
    "action": "string", "resource": "string", "purpose": "string", "arguments": "string",
    "environment": "string", "policy_format": "string", "policy_text": "string",
    "policy_schema_text": "string", "evidence_documents": "documents",
    "evidence_state": "string", "effect_type": "string", "effect_params": "string",
}
DOCUMENT_FIELDS = ("doc_id", "issuer", "time", "text")
REFERENCE_COLUMNS: dict[str, str] = {
    "case_id": "string", "label": "string", "expression": "string", "facts": "string",
    "notes": "string", "resolved": "bool", "attributes": "string", "source_track": "string",
    "source_dataset": "string", "source_path": "string", "source_revision": "string",
    "source_licence": "string", "source_locator": "string",
}

COLUMN_DESCRIPTIONS: dict[str, str] = {
    "position": "Index of the case in the dataset's order (0-based, across splits).",
    "case_id": "Stable case identifier; joins the public and reference configs.",
    "source_id": "Identifier of the source input (native: engine + hash of the full input).",
    "subject": "Who asks: the requesting user or principal.",
    "action": "The requested operation (tool, relation or Cedar action).",
    "resource": "The object the operation acts on.",
    "purpose": "The stated purpose of the request, if any.",
    "arguments": "Request arguments (canonical JSON object).",
    "environment": "Request environment: time, location, check context (canonical JSON).",
    "policy_format": "Policy language: 'text' (natural language), 'openfga' or 'cedar'.",
    "policy_text": "The policy text as the reviewer sees it.",
    "policy_schema_text": "Cedar schema passed to the engine (null when none was passed).",
    "evidence_documents": "Evidence documents (doc_id, issuer, time, text) in the given order.",
    "evidence_state": "Engine state: OpenFGA tuples or Cedar entities, context and template "
                      "links (canonical JSON).",
    "effect_type": "Type of the operation's effect, when the case carries one.",
    "effect_params": "Public parameters of that effect (canonical JSON).",
    "label": "Reference label: 'lawful' (may proceed) or 'forbidden' (must be blocked).",
    "expression": "Permission expression the label was derived from, if any.",
    "facts": "Derived facts: engine answer and version, upstream expectation, duplicates, "
             "upstream repository, ... (canonical JSON).",
    "notes": "Scoring notes.",
    "resolved": "False when an evaluator left the case's context unresolved.",
    "attributes": "Grouping attributes: family, domain, engine, group, encoding, split, ... "
                  "(canonical JSON).",
    "source_track": "Track the case belongs to ('language', 'native', 'example', ...).",
    "source_dataset": "Dataset name within the track.",
    "source_path": "Upstream or package file the case came from.",
    "source_revision": "Upstream commit of that file, or the dataset version.",
    "source_licence": "Licence of the upstream material.",
    "source_locator": "Record within that file (assertion, request file, context).",
}
"""What each column of the two configs holds (the dataset card lists them)."""


class ExportError(DataError):
    """The export cannot be written (e.g. the folder already holds files)."""

    hint = "choose an empty --out folder (or pass --force) and a dataset that holds cases"


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:  # pragma: no cover - depends on the environment
        raise DatasetError("<hf>", "Parquet datasets need pyarrow: "
                           "pip install 'authpairs[hf]'") from None
    return pyarrow


def public_row(position: int, case: Case) -> dict[str, Any]:
    """The ``public`` config row of a case: only what a reviewer may see (plus its position)."""
    public = case.public
    request = public.request
    return {
        "position": position, "case_id": case.case_id, "source_id": public.source_id,
        "subject": request.subject, "action": request.action, "resource": request.resource,
        "purpose": request.purpose, "arguments": canonical_json(request.arguments),
        "environment": canonical_json(request.environment),
        "policy_format": public.policy.format, "policy_text": public.policy.text,
        "policy_schema_text": public.policy.schema_text,
        "evidence_documents": [d.model_dump(mode="json") for d in public.evidence.documents],
        "evidence_state": canonical_json(public.evidence.state),
        "effect_type": public.effect.type if public.effect else None,
        "effect_params": canonical_json(public.effect.params) if public.effect else None,
    }


def reference_row(case: Case) -> dict[str, Any]:
    """The ``reference`` config row of a case: label, scoring data, provenance, attributes."""
    ref, source = case.reference, case.source
    return {
        "case_id": case.case_id, "label": ref.label.value, "expression": ref.expression,
        "facts": canonical_json(ref.facts), "notes": ref.notes, "resolved": ref.resolved,
        "attributes": canonical_json(case.attributes), "source_track": source.track,
        "source_dataset": source.dataset, "source_path": source.path,
        "source_revision": source.revision, "source_licence": source.licence,
        "source_locator": source.locator,
    }


def case_from_rows(public: dict[str, Any], reference: dict[str, Any], split: str) -> Case:
    """Rebuild a case from its two rows (raises pydantic/JSON errors on malformed rows)."""
    effect = None
    if public["effect_type"] is not None:
        effect = {"type": public["effect_type"], "params": json.loads(public["effect_params"])}
    return Case.model_validate({
        "case_id": public["case_id"], "split": split,
        "public": {
            "source_id": public["source_id"],
            "request": {"subject": public["subject"], "action": public["action"],
                        "arguments": json.loads(public["arguments"]),
                        "resource": public["resource"],
                        "environment": json.loads(public["environment"]),
                        "purpose": public["purpose"]},
            "policy": {"format": public["policy_format"], "text": public["policy_text"],
                       "schema_text": public["policy_schema_text"]},
            "evidence": {"documents": public["evidence_documents"] or [],
                         "state": json.loads(public["evidence_state"])},
            "effect": effect},
        "reference": {"label": reference["label"], "expression": reference["expression"],
                      "facts": json.loads(reference["facts"]), "notes": reference["notes"],
                      "resolved": reference["resolved"]},
        "source": {"track": reference["source_track"], "dataset": reference["source_dataset"],
                   "path": reference["source_path"], "revision": reference["source_revision"],
                   "licence": reference["source_licence"],
                   "locator": reference["source_locator"]},
        "attributes": json.loads(reference["attributes"]),
    })


def _arrow_schema(pa: Any, columns: dict[str, str], name: str, config: str) -> Any:
    types = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_(),
             "documents": pa.list_(pa.struct([(f, pa.string()) for f in DOCUMENT_FIELDS]))}
    meta = {METADATA_KEY: json.dumps({"dataset": name, "config": config,
                                      "format_version": FORMAT_VERSION}).encode()}
    return pa.schema([(c, types[t]) for c, t in columns.items()], metadata=meta)


def split_file(config: str, split: str) -> str:
    """Relative path of one config's split file (the config name is the folder)."""
    return f"{config}/{split}-00000-of-00001.parquet"


def _check_target(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise ExportError(f"{out}: the folder already holds files; choose an empty folder "
                              "or pass --force to replace the export there")
        for config in CONFIGS:
            shutil.rmtree(out / config, ignore_errors=True)
        (out / CARD).unlink(missing_ok=True)


def export_hf(dataset: Dataset, out: str | Path, *, force: bool = False) -> dict[str, int]:
    """Write ``dataset`` as Parquet (configs ``public``/``reference``) plus a dataset card.

    Returns the number of cases per split. Refuses a folder that already holds files unless
    ``force`` (then only the export's own files are replaced).
    """
    pa = _pyarrow()
    out = Path(out)
    _check_target(out, force)
    by_split: dict[str, list[tuple[int, Case]]] = {s: [] for s in SPLITS}
    for position, case in enumerate(dataset):
        by_split[case.split].append((position, case))
    counts = {s: len(items) for s, items in by_split.items() if items}
    if not counts:
        raise ExportError(f"dataset '{dataset.name}' has no cases to export")
    schemas = {"public": _arrow_schema(pa, PUBLIC_COLUMNS, dataset.name, "public"),
               "reference": _arrow_schema(pa, REFERENCE_COLUMNS, dataset.name, "reference")}
    sizes: dict[str, dict[str, SplitSize]] = {config: {} for config in CONFIGS}
    for split in counts:
        rows = {"public": [public_row(p, c) for p, c in by_split[split]],
                "reference": [reference_row(c) for _, c in by_split[split]]}
        for config in CONFIGS:
            target = out / split_file(config, split)
            target.parent.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pylist(rows[config], schema=schemas[config])
            pa.parquet.write_table(table, target)
            written = pa.parquet.read_table(target)  # sizes as ``datasets`` counts them
            sizes[config][split] = SplitSize(written.num_rows, int(written.nbytes),
                                             target.stat().st_size)
    from authpairs.cases.hf_card import dataset_card

    (out / CARD).write_text(dataset_card(dataset, counts, sizes), encoding="utf-8")
    return counts


@dataclass(frozen=True)
class SplitSize:
    """Sizes of one written split file, as the Hub's ``dataset_info`` records them."""

    num_examples: int
    num_bytes: int
    """In-memory Arrow size of the table read back from the file (what ``datasets`` counts)."""
    file_bytes: int
    """Size of the Parquet file (``download_size``)."""


def _read_config(pa: Any, folder: Path, config: str) -> tuple[str, dict[str, list[tuple[
        Path, dict[str, Any]]]]]:
    """Rows of one config per split, and the dataset name stored in the files."""
    rows: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    name = folder.name
    for split in SPLITS:
        for path in sorted((folder / config).glob(f"{split}-*.parquet")):
            try:
                table = pa.parquet.read_table(path)
            except (OSError, pa.ArrowInvalid) as exc:
                raise DatasetError(path, f"cannot read Parquet file: {exc}") from exc
            meta = (table.schema.metadata or {}).get(METADATA_KEY)
            if meta:
                name = str(json.loads(meta).get("dataset", name))
            rows.setdefault(split, []).extend((path, row) for row in table.to_pylist())
    return name, rows


def load_hf_export(path: str | Path) -> Dataset:
    """Load a folder written by :func:`export_hf` (both configs) back into a :class:`Dataset`."""
    pa = _pyarrow()
    folder = Path(path)
    if not folder.is_dir() or not any((folder / "public").glob("*.parquet")):
        raise DatasetError(folder, "not an exported dataset folder (no public/*.parquet)")
    name, public = _read_config(pa, folder, "public")
    _, reference = _read_config(pa, folder, "reference")
    positioned: list[tuple[int, Case]] = []
    for split, rows in public.items():
        refs = {row["case_id"]: row for _, row in reference.get(split, [])}
        for file, row in rows:
            case_id = row.get("case_id")
            ref = refs.get(case_id)
            if ref is None:
                raise DatasetError(folder / split_file("reference", split),
                                   "no reference row for this case (the reference config is "
                                   "needed to run and score)", record=str(case_id))
            try:
                positioned.append((int(row["position"]), case_from_rows(row, ref, split)))
            except ValidationError as exc:
                raise validation_error(file, str(case_id), exc) from exc
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(file, f"malformed row: {exc}", record=str(case_id)) from exc
    positioned.sort(key=lambda item: item[0])
    return Dataset(name=name, cases=[case for _, case in positioned])
