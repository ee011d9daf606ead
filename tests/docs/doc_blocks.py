"""Find the command and Python blocks of the documentation and what each one needs to run.

A block is a fenced code block. Shell blocks (```bash and friends) and any other block with a
line that starts with ``authpairs `` hold documented commands; ```python blocks hold documented
Python snippets (a page's snippets run in one interpreter, in order, as a reader would type them;
top-level ``await`` works). A snippet whose first line is a comment naming a file of the
repository (``# examples/guard.py ...``) must also be an excerpt of that file. An HTML comment on
the lines right before the fence says what a block needs; without one, the block runs in the fast
test suite:

* ``<!-- needs: gpu -->``: a GPU server (vLLM); not run, its files are still checked;
* ``<!-- needs: embedded-model -->``: the embedded SmolLM2 server; run by the slow test;
* ``<!-- needs: sources -->``: the staged upstream policy sources; run by the slow test;
* ``<!-- not-run: REASON -->``: only for the two setup scripts (they run the whole job / suite);
* ``<!-- exit: N -->``: the block is run and must end with exit code N (e.g. a failing gate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL_LANGS = {"bash", "sh", "shell", "console"}
PYTHON_LANGS = {"python", "py"}
NEEDS = {"gpu", "embedded-model", "sources"}
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(needs|not-run|exit):\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block: where it is, its language, text and markers."""

    doc: Path
    line: int
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``README.md:42`` (relative to the repository)."""
        return f"{self.doc.relative_to(REPO)}:{self.line}"

    @property
    def has_commands(self) -> bool:
        """A shell block, or any other non-Python block with a line starting with
        ``authpairs ``."""
        if self.lang in SHELL_LANGS:
            return bool(self.text.strip())
        if self.lang in PYTHON_LANGS:
            return False
        return any(line.strip().startswith("authpairs ") for line in self.text.splitlines())

    @property
    def is_python(self) -> bool:
        """A non-empty ```python block."""
        return self.lang in PYTHON_LANGS and bool(self.text.strip())

    @property
    def runs(self) -> bool:
        """Unmarked: run by the fast test."""
        return not self.markers.get("needs") and "not-run" not in self.markers

    @property
    def expected_exit(self) -> int:
        """The exit code the block must end with (0 unless marked)."""
        return int(self.markers.get("exit", "0"))


def documents() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(doc: Path) -> list[Block]:
    """Every fenced block of ``doc`` with the markers right above it."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None or not lines[i].lstrip().startswith("```"):
            i += 1
            continue
        markers: dict[str, str] = {}
        j = i - 1
        while j >= 0 and (_MARKER.match(lines[j]) or not lines[j].strip()):
            found = _MARKER.match(lines[j])
            if found:
                markers[found.group(1)] = found.group(2)
            elif markers:
                break
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        out.append(Block(doc, i + 1, opened.group(2).lower(), "\n".join(lines[i + 1:end]),
                         markers))
        i = end + 1
    return out


def command_blocks(doc: Path) -> list[Block]:
    """The blocks of ``doc`` that hold documented commands."""
    return [b for b in blocks(doc) if b.has_commands]


def runnable_blocks(doc: Path) -> list[Block]:
    """The command blocks and Python snippets of ``doc``, in page order."""
    return [b for b in blocks(doc) if b.has_commands or b.is_python]
