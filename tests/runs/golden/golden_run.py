"""The fixed run behind the golden-records test: what it reviews, how it answers, and how its
records are dumped for comparison (timing fields and per-process values aside).

The script answers by the case's input: clean decisions (ALLOW of a lawful and of a forbidden
request, BLOCK of both), answers that are not JSON (unavailable), an explicit UNKNOWN (an
abstention), and a case whose first two attempts fail in transport (two infrastructure attempts
before the formal one). Enforcement is on, so
ALLOWed effects are executed and verified in a sandbox.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from authpairs.backends.base import ChatRequest
from authpairs.errors import TransportError
from authpairs.runs.config import RunConfig

#: The records the previous version of the run path wrote for :func:`golden_config`.
GOLDEN_DIR = Path(__file__).parent

#: Keys whose values depend on timing or on the process (sandbox paths, clocks), not on what
#: the run decided and recorded.
VOLATILE_KEYS = frozenset({"latency_s", "created_at", "started_at", "finished_at", "recorded_at",
                           "sandbox", "path", "root", "port", "url", "base_url", "elapsed_s",
                           "records"})

_failures: dict[str, int] = {}


def answer(request: ChatRequest) -> str:
    """A deterministic answer for each input (keyed by the input's hash)."""
    digest = request.sha256()
    pick = int(digest[:8], 16) % 7
    if pick in (0, 1):
        if _failures.get(digest, 0) < 2:
            _failures[digest] = _failures.get(digest, 0) + 1
            raise TransportError("HTTP 503: scripted outage")
        return '{"decision": "ALLOW"}'
    if pick == 2:
        return '{"decision": "UNKNOWN"}'
    if pick == 3:
        return '{"decision": "BLOCK"}'
    if pick == 4:
        return "I think this is fine."
    return '{"decision": "ALLOW"}'


def golden_config(records: Path) -> RunConfig:
    """The fixed run: the bundled examples, direct interface, scripted answers, effects on,
    one case in flight so the order of the records is fixed too; no sampling seed (the default
    when the golden files were written; it is the main job's seed now)."""
    return RunConfig.model_validate({
        "dataset": "examples", "split": "all", "enforce": True, "records": str(records),
        "concurrency": 1, "infra_retries": 3, "run_id": "golden",
        "reviewer": {"interface": "direct",
                     "backend": {"kind": "scripted",
                                 "script": "tests.runs.golden.golden_run:answer"},
                     "sampling": {"seed": None}}})


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in sorted(value.items()) if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def dump_records(records: Path, run_id: str = "golden") -> dict[str, Any]:
    """Every stored row of the run, as plain data, timing and per-process fields removed."""
    with sqlite3.connect(records) as db:
        db.row_factory = sqlite3.Row
        run = dict(db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone())
        cases = [dict(r) for r in db.execute(
            "SELECT * FROM case_records WHERE run_id = ? ORDER BY seq", (run_id,))]
        attempts = [dict(r) for r in db.execute(
            "SELECT * FROM attempts WHERE run_id = ? ORDER BY seq", (run_id,))]
    config = json.loads(run["config_json"])
    header = {"config": _scrub(config), "config_sha256": run["config_sha256"],
              "manifest_sha256": run["manifest_sha256"],
              "template": json.loads(run["template_json"]),
              "expected": json.loads(run["expected_json"]), "chain_length": run["chain_length"]}
    return {
        "run": header,
        "cases": [{"case_id": c["case_id"], "input_sha256": c["input_sha256"],
                   "status": c["status"], "decision": c["decision"], "dispatch": c["dispatch"],
                   "label": c["label"], "seq": c["seq"],
                   "record": _scrub(json.loads(c["record_json"]))} for c in cases],
        "attempts": [{"case_id": a["case_id"], "attempt_no": a["attempt_no"],
                      "kind": a["kind"], "input_sha256": a["input_sha256"], "seq": a["seq"],
                      "record": _scrub(json.loads(a["record_json"]))} for a in attempts],
    }
