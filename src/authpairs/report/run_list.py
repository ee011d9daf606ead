"""The ``runs`` listing: one row per stored run that tells runs apart at a glance."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from authpairs.runs.records import RunInfo


def _reviewer(resolved: dict[str, Any]) -> tuple[str, str]:
    """(interface, backend/model or baseline) from a resolved run configuration."""
    reviewer = resolved.get("reviewer", {})
    if reviewer.get("baseline"):
        return "-", f"baseline {reviewer['baseline']}"
    backend = reviewer.get("backend", {})
    kind = str(backend.get("kind", "?"))
    model = backend.get("model") or ""
    if kind == "local" and not model:
        model = backend.get("gguf_path") or "SmolLM2-135M (embedded)"
    if kind == "replay":
        model = f"{backend.get('run_id', '?')}"
    return str(reviewer.get("interface", "?")), f"{kind} {model}".strip()


def describe_run(info: RunInfo, recorded: int) -> dict[str, str]:
    """Plain row: run id, reviewer, dataset/split, effects enforced or not, recorded/expected
    cases and date."""
    resolved = info.config.get("resolved", {})
    interface, reviewer = _reviewer(resolved)
    dataset = str(resolved.get("dataset", info.manifest.get("name", "?")))
    split = resolved.get("split")
    limit = resolved.get("limit")
    where = f"{dataset} {split}" if split else dataset
    if limit:
        where += f" (first {limit})"
    expected = len(info.expected_case_ids) or info.manifest.get("n_cases")
    flag = "" if not expected or recorded >= int(expected) else " INCOMPLETE"
    return {"run id": info.run_id, "interface": interface, "backend / model": reviewer,
            "dataset": where, "effects": "enforced" if resolved.get("enforce", True) else "off",
            "recorded": f"{recorded}/{expected if expected else '?'}{flag}",
            "created (UTC)": info.created_at.replace("T", " ").split("+")[0]}


def runs_table(rows: list[dict[str, str]], title: str) -> Table:
    """A table of :func:`describe_run` rows."""
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False,
                  show_edge=False)
    columns = ["run id", "interface", "backend / model", "dataset", "effects", "recorded",
               "created (UTC)"]
    for name in columns:
        table.add_column(name, justify="right" if name == "recorded" else "left")
    for row in rows:
        table.add_row(*(Text(row[name]) for name in columns))
    return table
