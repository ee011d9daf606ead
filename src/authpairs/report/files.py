"""Write analysis results as JSON and CSV files that a notebook can load (pandas/csv/json).

While runs whose records fail the integrity check are in use (``--allow-unverified``), every
file written here names them (:func:`authpairs.analysis.runref.unverified_notice`): a JSON
object, and each object row of a JSON list, gets ``unverified_runs``; each CSV row gets an
``unverified_runs`` column."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from authpairs.analysis.runref import unverified_notice


def _clean(value: Any) -> Any:
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def write_json(path: Path, data: Any) -> Path:
    """Write pretty, key-sorted JSON (non-finite floats become null)."""
    notice = unverified_notice()
    if notice and isinstance(data, dict):
        data = {**data, **notice}
    elif notice and isinstance(data, list):
        data = [{**row, **notice} if isinstance(row, dict) else row for row in data]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(data), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return "|".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return value


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """Write rows as CSV with the union of their keys as header (first-seen order).

    Lists are joined with '|', mappings are JSON, None is empty.
    """
    notice = unverified_notice()
    if notice:
        rows = [{**row, **notice} for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    header = list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows({k: _cell(row.get(k)) for k in header} for row in rows)
    return path
