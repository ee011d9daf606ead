"""The ``authpairs`` command line: a thin layer over the Python API.

Command groups live in :mod:`authpairs.commands`; every module there exposes
``register(app, data_app)`` and is discovered automatically, so adding a command group never
means editing this file.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

import authpairs.commands
from authpairs.helptext import tidy_help

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="AuthorizationPairs: does a guardrail honor authorization?")
data_app = typer.Typer(no_args_is_help=True, help="Datasets: check, build, import, verify.")
app.add_typer(data_app, name="data")


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(authpairs.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"authpairs.commands.{info.name}")
        module.register(app, data_app)


_register_all()
tidy_help(app)

if __name__ == "__main__":  # pragma: no cover
    app()
