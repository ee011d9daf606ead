"""Shared records for the tests that read agent runs through the CLI and the report: the agent
runs of :func:`tests.analysis.agent_fixtures.record_examples` and one guardrail run (``plain``)
in the same records file, so that an agent run can also be given next to a guardrail run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from authpairs.api import run
from tests.analysis.agent_fixtures import record_examples


def record_agent_and_plain_runs(path: Path) -> Path:
    """Record the example agent runs and the guardrail run ``plain`` (the example cases under
    always-allow) into the records file ``path``; return ``path``."""
    asyncio.run(record_examples(path))
    run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
         "records": str(path), "run_id": "plain"})
    return path
