"""Every documented command works as written, or is marked with what it needs.

The fast test runs each document's unmarked command blocks in order, in a fresh working
directory (records, reports and exports land there, never in the repository) that links the
repository's ``configs/``, ``gate/``, ``tests/`` and ``.venv``. A block fails the test when it
ends with another exit code than documented. The slow test runs the blocks that need the
embedded model or the staged sources. GPU-server blocks are not run, but every configuration,
study plan and case-id file the documentation names must exist and load.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import NEEDS, REPO, Block, command_blocks, documents

from authpairs.analysis.gate import read_case_ids
from authpairs.analysis.study import load_plan
from authpairs.runs.config import load_config
from authpairs.tracks.native.sources import default_sources
from authpairs.tracks.registry import resolve_dataset

LINKED = ("configs", "gate", "tests", ".venv", "scripts", "examples")
NOT_RUN_ALLOWED = {"bash scripts/run.sh", "bash scripts/test.sh"}
BLOCK_TIMEOUT_S = 900


def _all_blocks() -> list[Block]:
    return [b for doc in documents() for b in command_blocks(doc)]


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        if (REPO / name).exists():
            (work / name).symlink_to(REPO / name)
    return work


def _run(block: Block, work: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    env.pop("AUTHPAIRS_NATIVE_CASES", None)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=work, env=env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False)
    assert done.returncode == block.expected_exit, (
        f"{block.where}: exit {done.returncode}, documented {block.expected_exit}\n"
        f"--- block ---\n{block.text}\n--- stdout ---\n{done.stdout[-4000:]}\n"
        f"--- stderr ---\n{done.stderr[-4000:]}")


def test_every_command_block_is_run_or_marked() -> None:
    blocks = _all_blocks()
    assert len(blocks) >= 8
    for block in blocks:
        needs = block.markers.get("needs")
        assert needs is None or needs in NEEDS, f"{block.where}: unknown need '{needs}'"
        if "not-run" in block.markers:
            commands = {line.split("#")[0].strip() for line in block.text.splitlines()}
            assert commands - {""} <= NOT_RUN_ALLOWED, (
                f"{block.where}: only the setup scripts may be left unrun")


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


@pytest.mark.parametrize("doc", [d for d in documents() if any(
    not b.markers.get("needs") and "not-run" not in b.markers for b in command_blocks(d))],
    ids=lambda d: str(d.relative_to(REPO)))
def test_documented_commands_run(doc: Path, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    for block in command_blocks(doc):
        if block.markers.get("needs") or "not-run" in block.markers:
            continue
        _run(block, work)


@pytest.mark.slow
@pytest.mark.parametrize("need", ["embedded-model", "sources"])
def test_documented_commands_that_need_the_model_or_sources(need: str, tmp_path: Path) -> None:
    if need == "sources" and not Path(default_sources()).is_dir():
        pytest.skip("the staged upstream sources are not present")
    work = _workdir(tmp_path)
    blocks = [b for b in _all_blocks() if b.markers.get("needs") == need]
    assert blocks, f"no block needs {need}"
    for block in blocks:
        _run(block, work)
