"""Command help that renders cleanly at any width: one line per paragraph, no reST markup.

Typer keeps single line breaks after a command's first paragraph, so a docstring wrapped at the
source's line length would break mid-sentence in ``--help``; double backticks would show as
they are. :func:`tidy_help` rewrites every registered command's help once, at start-up.

It also switches every command from typer's rich help panels to click's plain help formatter
(``rich_markup_mode=None``). The rich panel shares the terminal between five columns and cuts
what does not fit (``--repetition-pena…`` at 80 columns) and shows a flag as taking a
``<bool>``; click's formatter writes each option in full (an option too long for the name column
gets its help on the next line), wraps the help at the terminal width and shows a flag as
``--quiet / --no-quiet`` with no value.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer
from typer.core import TyperGroup
from typer.models import DefaultPlaceholder

_LITERAL = re.compile(r"``([^`]+)``")
_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def tidy_text(text: str) -> str:
    """Join each paragraph onto one line; ``code`` and :role:`x` become plain 'code' / x."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _LITERAL.sub(lambda m: f"'{m.group(1)}'", text)
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip())
                       for p in paragraphs if p.strip())


class HelpGroup(TyperGroup):
    """A command group whose command list gives each command's whole first paragraph, wrapped
    at the terminal width (click cuts it to what fits on one line, ending in '...')."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Write the ``Commands:`` section: name, then the first paragraph of its help."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            text = command.short_help or inspect.cleandoc(command.help or "")
            rows.append((name, " ".join(text.partition("\f")[0].split("\n\n")[0].split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def tidy_help(app: typer.Typer) -> None:
    """Rewrite the help of every command and group of ``app`` (recursively) with tidy_text,
    rendered by click's plain formatter (see the module docstring)."""
    app.rich_markup_mode = None
    if isinstance(app.info.cls, DefaultPlaceholder) or app.info.cls in (None, TyperGroup):
        app.info.cls = HelpGroup  # a group that names its own class keeps it
    for command in app.registered_commands:
        raw = command.help or (command.callback.__doc__ if command.callback else None)
        if raw:
            command.help = tidy_text(raw)
    for group in app.registered_groups:
        if group.help:
            group.help = tidy_text(group.help)
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)
