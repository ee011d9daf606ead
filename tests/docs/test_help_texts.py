"""Every command's ``--help`` renders cleanly at 80 columns: no raw markup, no broken sentences,
every option and command name in full, flags without a value."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from authpairs.cli import app
from authpairs.helptext import tidy_text

WIDTH = 80


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command path under ``group`` (a click command or group from typer)."""
    yield prefix
    if isinstance(getattr(group, "commands", None), dict):
        for name, sub in sorted(group.commands.items()):
            yield from _commands(sub, (*prefix, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_every_command_is_covered() -> None:
    names = {" ".join(c) for c in COMMANDS}
    assert {"run", "score", "runs", "compare", "gate", "data import-cedar"} <= names


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "authpairs")
def test_help_renders_cleanly_at_80_columns(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=WIDTH,
                                env={"COLUMNS": str(WIDTH), "TERMINAL_WIDTH": str(WIDTH)})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    assert all(len(line) <= WIDTH for line in text.splitlines()), text
    description = re.split(r"^(?:Arguments|Options|Commands):$", text, maxsplit=1,
                           flags=re.MULTILINE)[0]
    lines = [line.strip() for line in description.splitlines()]
    for current, following in itertools.pairwise(lines):
        if current and following and not current.startswith("Usage:"):
            # a wrapped paragraph fills the line; a short line followed by more text is a break
            # left over from the source's own line length
            assert len(current) >= WIDTH - 30, f"mid-sentence break after {current!r}:\n{text}"


def test_tidy_text_joins_paragraph_lines_and_drops_markup() -> None:
    raw = """First line.

    Second paragraph wraps
    here with ``code`` and :class:`~a.b.Thing`.
    """
    assert tidy_text(raw) == "First line.\n\nSecond paragraph wraps here with 'code' and Thing."
    assert not re.search(r"\n(?!\n)", tidy_text(raw).replace("\n\n", ""))


def _click_command(command: tuple[str, ...]) -> Any:
    """The click command object of a command path."""
    found: Any = typer.main.get_command(app)
    for name in command:
        found = found.commands[name]
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "authpairs")
def test_help_at_80_columns_names_every_option_in_full(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=WIDTH,
                                env={"COLUMNS": str(WIDTH), "TERMINAL_WIDTH": str(WIDTH)})
    text = result.output
    repeated = re.sub(r"\w\.\.\. <", "", text)  # an argument taking several values: 'runs...'
    assert "…" not in text and not re.search(r"\w\.\.\.", repeated), text  # nothing cut off
    assert all(len(line) <= WIDTH for line in text.splitlines()), text
    entries = re.findall(r"^  (-[^ ].*?)(?:  |$)", text, flags=re.MULTILINE)
    clicked = _click_command(command)
    for param in clicked.params:
        if getattr(param, "hidden", False) or not param.opts[0].startswith("-"):
            continue
        for name in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (name, text)
        entry = next(line for line in entries if param.opts[0] in line.split())
        if getattr(param, "is_flag", False):
            assert "<" not in entry and "bool" not in entry.lower(), entry  # a flag takes none
    for name in getattr(clicked, "commands", {}):
        assert re.search(rf"^  {re.escape(name)}(?:  |$)", text, flags=re.MULTILINE), name
