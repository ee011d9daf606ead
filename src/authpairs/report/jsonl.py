"""Export a run's records to JSONL: one line per case record, with its attempts inlined."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from authpairs.report.reviewer_name import name_run
from authpairs.runs.completeness import completeness
from authpairs.runs.store import RecordStore


def export_jsonl(store: RecordStore, run_id: str, out: str | Path) -> int:
    """Write the run's case records (each with ``attempts``) to ``out``; returns the line count.

    A first line ``{"run": ..., "reviewer": ..., "completeness": ...}`` carries the run metadata
    (configuration, hashes, versions), the reviewer's name (kind, reviewer, interface, model,
    label; as ``authpairs runs`` shows it) and the recorded-versus-expected case counts with the
    missing ids.
    Attempts that produced no case record (exhausted infrastructure retries) follow as
    ``{"orphan_attempts": [...]}`` lines, so nothing recorded is left out.
    """
    info = store.get_run(run_id)
    if info is None:
        raise KeyError(f"{store.path}: no run '{run_id}'")
    attempts = defaultdict(list)
    for attempt in store.attempts(run_id):
        attempts[attempt.case_id].append(attempt.model_dump(mode="json"))
    recorded = store.done_case_ids(run_id)
    lines = [json.dumps({"run": info.model_dump(mode="json"),
                         "reviewer": name_run(info.config).to_dict(),
                         "completeness": completeness(info, recorded).to_dict()},
                        sort_keys=True)]
    for record in store.case_records(run_id):
        row = record.model_dump(mode="json")
        row["attempts"] = attempts.pop(record.case_id, [])
        lines.append(json.dumps(row, sort_keys=True))
    for case_id, orphans in sorted(attempts.items()):
        lines.append(json.dumps({"case_id": case_id, "orphan_attempts": orphans}, sort_keys=True))
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
