"""Every documented command and Python snippet works as written, or is marked with what it needs.

The fast test runs each document's unmarked command blocks and Python snippets in order, in a
fresh working directory (records, reports and exports land there, never in the repository) that
links the repository's ``configs/``, ``gate/``, ``tests/`` and ``.venv``; a page's snippets share
one interpreter (:mod:`doc_python`). A command block fails the test when it ends with another
exit code than documented, a snippet when it raises. The slow tests run the blocks that need the
embedded model or the staged sources, and every page one after the other in one folder (README
first), as a reader following the pages would: a run id one page reuses with other settings
stops that. That sequence starts in a fresh folder, so it is README's own test too. GPU-server
blocks are not run, but every configuration, study plan and case-id file the documentation names
must exist and load.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import NEEDS, REPO, Block, documents, runnable_blocks
from doc_python import PythonSession

from authpairs.analysis.gate import read_case_ids
from authpairs.analysis.study import load_plan
from authpairs.runs.config import load_config
from authpairs.tracks.native.sources import default_sources
from authpairs.tracks.registry import resolve_dataset

LINKED = ("configs", "gate", "tests", ".venv", "scripts", "examples")
NOT_RUN_ALLOWED = {"bash scripts/run.sh", "bash scripts/test.sh"}
BLOCK_TIMEOUT_S = 900
_FILE_HEADER = re.compile(r"^#\s*([\w./-]+\.py)\b")


def _all_blocks() -> list[Block]:
    return [b for doc in documents() for b in runnable_blocks(doc)]


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        if (REPO / name).exists():
            (work / name).symlink_to(REPO / name)
    return work


class _Reader:
    """Runs blocks in one working directory as one reader would: shell blocks in bash, Python
    snippets in one interpreter per page (started at a page's first snippet)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = dict(os.environ)
        self.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["COLUMNS"] = "100"
        self.env.pop("AUTHPAIRS_NATIVE_CASES", None)
        self.session: PythonSession | None = None
        self.page: Path | None = None

    def run(self, block: Block) -> None:
        """Run one block; fail the test unless it ends as documented."""
        if block.doc != self.page:
            self.close()
            self.page = block.doc
        if block.is_python:
            self._snippet(block)
            return
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=self.work,
                              env=self.env, capture_output=True, text=True,
                              timeout=BLOCK_TIMEOUT_S, check=False)
        assert done.returncode == block.expected_exit, (
            f"{block.where}: exit {done.returncode}, documented {block.expected_exit}\n"
            f"--- block ---\n{block.text}\n--- stdout ---\n{done.stdout[-4000:]}\n"
            f"--- stderr ---\n{done.stderr[-4000:]}")

    def _snippet(self, block: Block) -> None:
        if self.session is None:
            self.session = PythonSession(self.work, self.env)
        result = self.session.run(block.text, block.where, BLOCK_TIMEOUT_S)
        assert result.error is None, (
            f"{block.where}: the snippet raised\n--- snippet ---\n{block.text}\n"
            f"--- output ---\n{result.output[-4000:]}\n--- error ---\n{result.error}")

    def run_all(self, blocks: Iterable[Block]) -> None:
        """Run ``blocks`` in order, then end the page's interpreter."""
        try:
            for block in blocks:
                self.run(block)
        finally:
            self.close()

    def close(self) -> None:
        """End the current page's interpreter, if one was started."""
        if self.session is not None:
            self.session.close()
            self.session = None


def test_every_command_block_is_run_or_marked() -> None:
    blocks = _all_blocks()
    assert len(blocks) >= 8
    assert sum(b.is_python for b in blocks) >= 4
    for block in blocks:
        needs = block.markers.get("needs")
        assert needs is None or needs in NEEDS, f"{block.where}: unknown need '{needs}'"
        if block.is_python:
            assert "exit" not in block.markers, f"{block.where}: a snippet has no exit code"
        if "not-run" in block.markers:
            commands = {line.split("#")[0].strip() for line in block.text.splitlines()}
            assert not block.is_python and commands - {""} <= NOT_RUN_ALLOWED, (
                f"{block.where}: only the setup scripts may be left unrun")


def _paragraphs(text: str) -> str:
    """``text`` with runs of blank lines as one blank line and no trailing spaces."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def test_snippets_that_name_a_file_are_excerpts_of_it() -> None:
    """A snippet headed ``# examples/guard.py`` shows that file's code as it is."""
    named = [(b, found.group(1)) for b in _all_blocks() if b.is_python
             and (found := _FILE_HEADER.match(b.text.lstrip()))]
    assert named, "no snippet names its file"
    for block, name in named:
        assert (REPO / name).is_file(), f"{block.where}: {name} is not in the repository"
        shown = _paragraphs(block.text.lstrip().split("\n", 1)[1])
        assert shown in _paragraphs((REPO / name).read_text(encoding="utf-8")), (
            f"{block.where}: the snippet is not an excerpt of {name}")


_SEPARATORS = {";", "&&", "||", "|", "&"}
_REDIRECTIONS = {">", ">>", "<", ">&", "&>"}


def _run_commands(block: Block) -> Iterable[list[str]]:
    """The ``authpairs run`` commands of a shell block, as argument lists (redirections and
    leading ``VAR=value`` assignments left out)."""
    for line in re.sub(r"\\\n", " ", block.text).splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        target = False
        for token in [*lexer, ";"]:
            if token in _SEPARATORS:
                while words and "=" in words[0] and not words[0].startswith("-"):
                    words.pop(0)
                if words[:2] == ["authpairs", "run"]:
                    yield words[2:]
                words = []
            elif token in _REDIRECTIONS:
                if words and words[-1].isdigit():
                    words.pop()  # the descriptor of 2> and friends
                target = True
            elif target:
                target = False
            else:
                words.append(token)


def _option(words: list[str], name: str) -> str | None:
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _settings(words: list[str]) -> list[tuple[str, str]]:
    """A command's options as sorted (option, value) pairs; ``--quiet`` left out."""
    pairs: list[tuple[str, str]] = []
    for i, word in enumerate(words):
        if word.startswith("-") and word != "--quiet":
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else ""
            pairs.append((word, value))
    return sorted(pairs)


def test_a_run_id_is_one_run_across_pages() -> None:
    """A reader who follows README, then analysis.md, then report.md, ... in one folder never
    meets a run id that an earlier page recorded with other settings: the same id in the same
    records file is the same command (which resumes the run) wherever it appears."""
    seen: dict[tuple[str, str], tuple[Block, list[tuple[str, str]]]] = {}
    for block in _all_blocks():
        if not block.runs or block.is_python:
            continue
        for words in _run_commands(block):
            run_id = _option(words, "--run-id")
            if run_id is None:
                continue  # the default id is the configuration's hash
            key = (_option(words, "--records") or "runs/authpairs.sqlite", run_id)
            setting = _settings(words)
            if key in seen:
                first, first_setting = seen[key]
                assert setting == first_setting, (
                    f"run id {run_id!r}: {first.where} runs {first_setting}, "
                    f"{block.where} runs {setting}")
            else:
                seen[key] = (block, setting)
    assert len(seen) >= 4


def test_definitions_are_not_outside_the_repository() -> None:
    """The docs never send a reader to the workspace's SPEC or paper; the only ``../shared``
    left is the native track's default location of the staged upstream sources (data that is
    not part of the repository)."""
    outside = re.compile(r"\.\./shared(?!/sources)")
    for path in [*documents(), *(REPO / "configs").glob("*.yaml"), REPO / "pyproject.toml"]:
        assert not outside.search(path.read_text(encoding="utf-8")), path


def test_documented_files_exist_and_load() -> None:
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in documents())
    configs = set(re.findall(r"\bconfigs/[\w./-]+\.yaml\b", text))
    gate_files = set(re.findall(r"\bgate/[\w./-]+\.txt\b", text))
    docs = set(re.findall(r"\bdocs/[\w./-]+\.md\b", text))
    assert {"configs/baseline.yaml", "configs/candidate.yaml"} <= configs
    assert {"gate/required.txt", "gate/forbidden.txt"} <= gate_files
    for name in sorted(configs | gate_files | docs):
        assert (REPO / name).is_file(), f"documented file {name} is missing"
    for name in sorted(configs):
        raw = (REPO / name).read_text(encoding="utf-8")
        if re.search(r"^factors:", raw, re.MULTILINE):
            load_plan(REPO / name)
        elif re.search(r"^contrasts:", raw, re.MULTILINE):
            continue  # a contrast family; run by docs/analysis.md
        else:
            load_config(REPO / name)
    language = resolve_dataset("language").by_id()
    for name in sorted(gate_files):
        ids = read_case_ids(REPO / name)
        assert ids, f"{name} is empty"
        assert all(d.case_id in language for d in ids), f"{name} names unknown cases"


HEAVY_PAGES = frozenset({"docs/analysis.md", "docs/agents.md", "docs/report.md", "docs/api.md"})
"""Pages whose commands take several seconds each (Inspect, the HF export, MCP servers, reports):
run on their own in the slow tier only, keeping the fast suite fast; the slow
:func:`test_the_pages_in_sequence_in_one_folder` runs their blocks too."""

FIRST_PAGE = documents()[0]
"""README.md. It has no test of its own here: :func:`test_the_pages_in_sequence_in_one_folder`
(slow) runs its blocks first, in a fresh folder, exactly as this test would, and then the other
pages after it."""


def _page_param(doc: Path) -> Any:
    name = str(doc.relative_to(REPO))
    marks = [pytest.mark.slow] if name in HEAVY_PAGES else []
    return pytest.param(doc, id=name, marks=marks)


@pytest.mark.parametrize("doc", [_page_param(d) for d in documents() if d != FIRST_PAGE and any(
    b.runs for b in runnable_blocks(d))])
def test_documented_commands_run(doc: Path, tmp_path: Path) -> None:
    _Reader(_workdir(tmp_path)).run_all(b for b in runnable_blocks(doc) if b.runs)


@pytest.mark.slow
@pytest.mark.parametrize("need", [
    # README's Inspect server and docs/agents.md's agent run llama.cpp on two threads
    pytest.param("embedded-model", marks=pytest.mark.all_cpus), "sources"])
def test_documented_commands_that_need_the_model_or_sources(need: str, tmp_path: Path) -> None:
    if need == "sources" and not Path(default_sources()).is_dir():
        pytest.skip("the staged upstream sources are not present")
    blocks = [b for b in _all_blocks() if b.markers.get("needs") == need]
    assert blocks, f"no block needs {need}"
    _Reader(_workdir(tmp_path)).run_all(blocks)


@pytest.mark.slow
def test_the_pages_in_sequence_in_one_folder(tmp_path: Path) -> None:
    """Every page's unmarked blocks, README first and then docs/ in order, in one folder and one
    records file: no page stops on what an earlier page left (a run id, a file). README's blocks
    run first, in the fresh folder: that is README's own test (:data:`FIRST_PAGE`)."""
    blocks = [b for b in _all_blocks() if b.runs]
    assert blocks[0].doc == FIRST_PAGE and FIRST_PAGE.name == "README.md"
    assert {b.doc.name for b in blocks} >= {"README.md", "analysis.md", "report.md"}
    _Reader(_workdir(tmp_path)).run_all(blocks)
