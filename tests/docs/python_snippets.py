"""A page's Python snippets with the output the page shows for them, run and compared.

On a page, a ```python snippet followed directly by a ```text block documents what the snippet
prints: :func:`documented_snippets` pairs them, and :func:`check_page` runs every snippet of the
page in order in one :class:`~doc_python.PythonSession` (one interpreter, one namespace) and
fails on a snippet that raises or prints anything else than its documented output. A snippet
without an output block must only run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from doc_blocks import Block, blocks
from doc_python import PythonSession

SNIPPET_TIMEOUT_S = 600


@dataclass(frozen=True)
class Snippet:
    """A Python snippet and the output block under it (None when the page shows none)."""

    code: Block
    output: Block | None


def documented_snippets(doc: Path) -> list[Snippet]:
    """The Python snippets of ``doc`` in page order, each with the ```text block that follows
    it directly (no other block between them)."""
    found = blocks(doc)
    out = []
    for i, block in enumerate(found):
        if not block.is_python:
            continue
        after = found[i + 1] if i + 1 < len(found) else None
        out.append(Snippet(block, after if after is not None and after.lang == "text" else None))
    return out


def check_page(doc: Path, work: Path, env: dict[str, str]) -> list[Snippet]:
    """Run ``doc``'s snippets in ``work``; assert each ran and printed its documented output.
    Returns the snippets (a caller can check that the page has the ones it expects)."""
    snippets = documented_snippets(doc)
    with PythonSession(work, env) as session:
        for snippet in snippets:
            result = session.run(snippet.code.text, snippet.code.where, SNIPPET_TIMEOUT_S)
            assert result.error is None, (
                f"{snippet.code.where}: the snippet raised\n--- output ---\n"
                f"{result.output[-4000:]}\n--- error ---\n{result.error}")
            if snippet.output is not None:
                assert result.output.rstrip("\n") == snippet.output.text.rstrip("\n"), (
                    f"{snippet.code.where}: printed something else than the page shows "
                    f"({snippet.output.where})\n--- printed ---\n{result.output}"
                    f"--- documented ---\n{snippet.output.text}")
    return snippets
