"""The ``runs`` listing: one row per stored run that tells runs apart at a glance."""

from __future__ import annotations

from authpairs.analysis.notebook import TableView
from authpairs.report.reviewer_name import name_run
from authpairs.runs.records import RunInfo

COLUMNS = ["run id", "reviewer", "interface", "model", "dataset", "effects", "recorded",
           "created (UTC)"]
"""The columns of the listing."""


def describe_run(info: RunInfo, recorded: int) -> dict[str, str]:
    """Plain row: run id, the reviewer that ran (interface, guardrail or baseline; how it was
    asked; the model it called, ``-`` for none), dataset/split, effects enforced or not,
    recorded/expected cases and date."""
    resolved = info.config.get("resolved", {})
    name = name_run(info.config)
    dataset = str(resolved.get("dataset", info.manifest.get("name", "?")))
    split = resolved.get("split")
    limit = resolved.get("limit")
    where = f"{dataset} {split}" if split else dataset
    if limit:
        where += f" (first {limit})"
    if resolved.get("sample"):
        where += f" (sample {resolved['sample']}, seed {resolved.get('sample_seed', 0)})"
    expected = len(info.expected_case_ids) or info.manifest.get("n_cases")
    flag = "" if not expected or recorded >= int(expected) else " INCOMPLETE"
    reviewer = name.reviewer if name.kind == "interface" else f"{name.kind} {name.reviewer}"
    return {"run id": info.run_id, "reviewer": reviewer, "interface": name.interface,
            "model": name.model, "dataset": where,
            "effects": "enforced" if resolved.get("enforce", True) else "off",
            "recorded": f"{recorded}/{expected if expected else '?'}{flag}",
            "created (UTC)": info.created_at.replace("T", " ").split("+")[0]}


def runs_table(rows: list[dict[str, str]], title: str) -> TableView:
    """A table of :func:`describe_run` rows (interface and model only when a run has one)."""
    # interface and model are left out when no run has one (baselines only)
    columns = [name for name in COLUMNS if name not in ("interface", "model")
               or any(row[name] != "-" for row in rows)]
    return TableView(title, columns, [[row[name] for name in columns] for row in rows],
                     numeric=[name == "recorded" for name in columns])
