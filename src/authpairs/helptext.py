"""Command help that renders cleanly at any width: one line per paragraph, no reST markup.

Typer keeps single line breaks after a command's first paragraph, so a docstring wrapped at the
source's line length would break mid-sentence in ``--help``; double backticks would show as
they are. :func:`tidy_help` rewrites every registered command's help once, at start-up.
"""

from __future__ import annotations

import inspect
import re

import typer

_LITERAL = re.compile(r"``([^`]+)``")
_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def tidy_text(text: str) -> str:
    """Join each paragraph onto one line; ``code`` and :role:`x` become plain 'code' / x."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _LITERAL.sub(lambda m: f"'{m.group(1)}'", text)
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip())
                       for p in paragraphs if p.strip())


def tidy_help(app: typer.Typer) -> None:
    """Rewrite the help of every command and group of ``app`` (recursively) with tidy_text."""
    for command in app.registered_commands:
        raw = command.help or (command.callback.__doc__ if command.callback else None)
        if raw:
            command.help = tidy_text(raw)
    for group in app.registered_groups:
        if group.help:
            group.help = tidy_text(group.help)
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)
