"""The streamable HTTP transport: ``authpairs mcp serve --transport http`` on 127.0.0.1, one
call by the SDK's client, then SIGTERM; the call and the case record are in the records."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from mcp import Client

from authpairs.runs.records import CallResult, Proposal
from authpairs.runs.store import RecordStore
from tests.agent.helpers import LAWFUL

REPO = Path(__file__).resolve().parents[2]
REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    """Until the server accepts connections (or the process has exited)."""
    for _ in range(300):
        assert process.poll() is None, "the server exited"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise AssertionError("the server did not start")


async def test_streamable_http_on_loopback(tmp_path: Path) -> None:
    records = tmp_path / "records.sqlite"
    port = _free_port()
    command = [str(Path(sys.executable).with_name("authpairs")), "mcp", "serve",
               "--dataset", "examples", "--case", LAWFUL, "--baseline", "always-allow",
               "--records", str(records), "--run-id", "agent-http", "--transport", "http",
               "--port", str(port)]
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await _wait_for(port, process)
        with socket.socket() as probe:  # loopback only: no listener on another address
            probe.settimeout(0.5)
            other = socket.gethostbyname(socket.gethostname())
            if other != "127.0.0.1" and not other.startswith("127."):
                assert probe.connect_ex((other, port)) != 0
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            tools = await client.list_tools()
            assert "ledger_transfer" in {t.name for t in tools.tools}
            result = await client.call_tool("ledger_transfer", REFUND)
            assert not result.is_error
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    with RecordStore(records, readonly=True) as store:
        calls = store.agent_calls("agent-http")
        cases = store.case_records("agent-http")
        run = store.get_run("agent-http")
    assert [(c.proposal, c.result, c.selected_by) for c in calls] == [
        (Proposal.CASE_OPERATION, CallResult.EXECUTED, "only")]
    assert [c.case_id for c in cases] == [LAWFUL] and cases[0].went_through
    assert run is not None and run.config["agent"]["transport"] == "http"
