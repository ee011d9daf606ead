"""Run a page's Python snippets as a reader would: one interpreter, one namespace, in order.

:class:`PythonSession` starts ``python`` in the page's working directory and hands it one snippet
at a time. Each snippet is compiled with top-level ``await`` allowed (as in a notebook or
``python -m asyncio``) and executed in the namespace the earlier snippets left; a coroutine it
produces is run to completion on the session's event loop. The session answers each snippet
with whether it raised and what it printed.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

_SERVER = r"""
import ast, asyncio, inspect, json, sys, traceback
marker = sys.argv[1]
namespace = {"__name__": "__main__"}
loop = asyncio.new_event_loop()
for line in sys.stdin:
    block = json.loads(line)
    error = None
    try:
        code = compile(block["code"], block["where"], "exec",
                       flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            loop.run_until_complete(result)
    except BaseException:
        error = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    print(marker + json.dumps({"error": error}), flush=True)
"""


@dataclass(frozen=True)
class SnippetResult:
    """What one snippet did: the traceback it raised (None when it ran) and what it printed."""

    error: str | None
    output: str


class PythonSession:
    """One Python interpreter that runs snippets in a shared namespace (a context manager)."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        """Start the interpreter in ``cwd`` with ``env``."""
        self._marker = f"@@snippet-done-{uuid.uuid4().hex}@@"
        self._process = subprocess.Popen(
            [sys.executable, "-u", "-c", _SERVER, self._marker], cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def run(self, code: str, where: str, timeout_s: float) -> SnippetResult:
        """Run one snippet; its traceback (or None) and output. The session is stopped and an
        error reported when it takes longer than ``timeout_s`` or the interpreter exits."""
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps({"code": code, "where": where}) + "\n")
        self._process.stdin.flush()
        output: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=timeout_s)
            except queue.Empty:
                self._process.kill()
                self.close()
                return SnippetResult(f"no answer within {timeout_s:.0f} s", "".join(output))
            if line is None:
                return SnippetResult(f"the interpreter exited ({self._process.wait()})",
                                     "".join(output))
            if line.startswith(self._marker):
                error = json.loads(line[len(self._marker):])["error"]
                return SnippetResult(error, "".join(output))
            output.append(line)

    def close(self) -> None:
        """End the interpreter (closing its input ends it; killed after 10 s)."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout=10)
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __enter__(self) -> PythonSession:
        """The session itself."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """End the interpreter."""
        self.close()
