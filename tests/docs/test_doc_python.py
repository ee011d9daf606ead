"""The snippet runner of the docs test: one namespace per page, top-level await, errors reported."""

from __future__ import annotations

import os
from pathlib import Path

from doc_blocks import blocks
from doc_python import PythonSession


def test_snippets_share_a_namespace_await_and_report_errors(tmp_path: Path) -> None:
    with PythonSession(tmp_path, dict(os.environ)) as session:
        first = session.run("import asyncio\nvalue = 20\nprint('hello')", "a.md:1", 60)
        assert first.error is None and first.output == "hello\n"
        awaited = session.run("await asyncio.sleep(0)\nprint(value + 22)", "a.md:5", 60)
        assert awaited.error is None and awaited.output == "42\n"
        failed = session.run("print('before')\nraise ValueError('boom')", "a.md:9", 60)
        assert failed.output == "before\n"
        assert failed.error is not None and "ValueError: boom" in failed.error
        assert 'File "a.md:9", line 2' in failed.error
        assert session.run("print(value)", "a.md:12", 60).output == "20\n"
        assert session.run("import os; print(os.getcwd())", "a.md:14", 60).output == (
            f"{tmp_path}\n")


def test_a_snippet_that_hangs_is_stopped(tmp_path: Path) -> None:
    with PythonSession(tmp_path, dict(os.environ)) as session:
        hung = session.run("import time\ntime.sleep(30)", "a.md:1", 1)
    assert hung.error is not None and "no answer within 1 s" in hung.error


def test_python_blocks_are_found_with_their_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1)\n```\n\n<!-- needs: gpu -->\n```python\nx = 1\n```\n"
                    "\n```bash\nauthpairs runs\n```\n", encoding="utf-8")
    found = blocks(page)
    assert [(b.is_python, b.has_commands, b.runs) for b in found] == [
        (True, False, True), (True, False, False), (False, True, True)]
