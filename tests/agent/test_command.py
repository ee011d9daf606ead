"""``authpairs mcp serve`` on the command line: bad selections are one error line, and a
stdio session stopped by SIGTERM exits cleanly with its run stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.runs.records import RunInfo
from authpairs.runs.store import RecordStore
from tests.agent.helpers import LAWFUL

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_an_unknown_case_or_transport_is_an_error(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    result = runner.invoke(app, ["mcp", "serve", "--dataset", "examples", "--case", "EX-none",
                                 "--baseline", "always-allow", "--records", str(records)])
    assert result.exit_code == 2 and "has no case 'EX-none'" in result.output
    assert not records.exists()
    result = runner.invoke(app, ["mcp", "serve", "--dataset", "examples", "--transport", "sse",
                                 "--baseline", "always-allow", "--records", str(records)])
    assert result.exit_code == 2 and "--transport" in result.output
    assert "'sse' is not one of 'stdio', 'http'" in result.output


def test_a_serve_session_does_not_reuse_a_run(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    with RecordStore(records) as store:
        store.open_run(RunInfo(run_id="taken", created_at="t", config={}, config_sha256="c",
                               manifest={}, manifest_sha256="m", expected_case_ids=[LAWFUL]))
    result = runner.invoke(app, ["mcp", "serve", "--dataset", "examples", "--case", LAWFUL,
                                 "--baseline", "always-allow", "--records", str(records),
                                 "--run-id", "taken"])
    assert result.exit_code == 2 and "run 'taken' already exists" in result.output


def test_sigterm_ends_a_stdio_session_cleanly(tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    command = [str(Path(sys.executable).with_name("authpairs")), "mcp", "serve", "--dataset",
               "examples", "--case", LAWFUL, "--baseline", "always-block", "--records",
               str(records), "--run-id", "agent-term"]
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    line = process.stderr.readline().decode()  # printed once SIGTERM is handled
    assert "run agent-term" in line
    process.send_signal(signal.SIGTERM)
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and stdout == b""
    with RecordStore(records, readonly=True) as store:
        run = store.get_run("agent-term")
    assert run is not None and run.expected_case_ids == [LAWFUL]
