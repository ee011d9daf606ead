"""The ``authpairs`` command line: a thin layer over the Python API.

Command groups live in :mod:`authpairs.commands`; every module there that exposes
``register(app, data_app)`` is discovered automatically, so adding a command group never
means editing this file. A command module imports, at its top, only typer, rich and modules
that import nothing heavy (the error family, the console, the defaults), and what it runs inside
the command function, from the module where it lives, so that starting the CLI for one command
never loads the libraries of the others.

Every expected error (:class:`~authpairs.errors.AuthpairsError`: a bad dataset, configuration or
records file, a backend error, a replay miss) is printed as one ``error:`` line naming the file,
field or option, with exit code 2 and no traceback; ``--debug`` (or ``AUTHPAIRS_DEBUG=1``) shows
the traceback instead.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import logging
import os
import pkgutil
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.text import Text
from typer._click import exceptions as click  # typer vendors click; its errors live here

import authpairs.commands
from authpairs.errors import AuthpairsError, error_message, hinted
from authpairs.helptext import HelpGroup, tidy_help

EXIT_INPUT_ERROR = 2
"""Exit code of an expected error (bad input, bad records, backend refusal)."""

_state = {"debug": os.environ.get("AUTHPAIRS_DEBUG", "") not in ("", "0")}
_stderr = Console(stderr=True, width=None if sys.stderr.isatty() else 120)


def print_error(message: str) -> None:
    """Print ``error: message`` to stderr as one line (a multi-line message, e.g. a YAML
    parser's, is joined); the message is never read as markup."""
    _stderr.print(Text.assemble(("error: ", "bold red"), " ".join(message.split())),
                  soft_wrap=True)


def usage_error_line(exc: click.ClickException) -> str:
    """One line for a command-line mistake: the option or argument named, then a hint.

    Click's own rendering is a usage block and a boxed message over several lines; this is the
    same message as ``--concurrency: 'x' is not a valid integer (hint: ...)``.
    """
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter):
        message = " ".join(exc.message.split())
        param = exc.param
        name: Any = exc.param_hint or (param.opts[0] if param is not None and param.opts
                                       else param.name if param is not None else None)
        if isinstance(name, (list, tuple)):
            name = " / ".join(name)
        if name:
            message = f"{str(name).strip(chr(39) + chr(34))}: {message}"
    else:
        message = " ".join(exc.format_message().split())
    path = ctx.command_path if ctx is not None else "authpairs"
    return f"{message} (hint: see '{path} --help')"


class AuthpairsGroup(HelpGroup):
    """The root command group: expected errors become one clear line and exit code 2."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: Any = None, **extra: Any) -> Any:
        """Parse the root options; a mistake in them is one ``error:`` line, exit code 2."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            if isinstance(exc, click.NoArgsIsHelpError):
                raise
            print_error(usage_error_line(exc))
            raise typer.Exit(EXIT_INPUT_ERROR) from None

    def invoke(self, ctx: Any) -> Any:
        """Run the command; print expected errors without a traceback unless debugging."""
        try:
            return super().invoke(ctx)
        except click.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:
            print_error(usage_error_line(exc))
        except AuthpairsError as exc:
            if _state["debug"]:
                raise
            sub = ctx.invoked_subcommand  # the command that was run, for a hint's {command}
            command = f"{ctx.command_path} {sub}" if sub else ctx.command_path
            print_error(error_message(exc, command))
        except OSError as exc:
            if _state["debug"]:
                raise
            print_error(hinted(f"{exc.filename + ': ' if exc.filename else ''}"
                               f"{exc.strerror or exc}",
                               "check the path, that it exists and that you may read or write "
                               "it as the command needs"))
        raise typer.Exit(EXIT_INPUT_ERROR)


app = typer.Typer(add_completion=False, no_args_is_help=True, cls=AuthpairsGroup,
                  help="AuthorizationPairs: does a guardrail honor authorization?")
data_app = typer.Typer(no_args_is_help=True, help="Datasets: check, build, import, verify.")
app.add_typer(data_app, name="data")


def configure_logging(debug: bool) -> None:
    """Warnings (retries and their causes) go to stderr through rich, above the progress bar."""
    root = logging.getLogger("authpairs")
    if not any(isinstance(h, RichHandler) for h in root.handlers):
        root.addHandler(RichHandler(console=_stderr, show_path=False, markup=False,
                                    rich_tracebacks=False, show_time=False))
    root.setLevel(logging.DEBUG if debug else logging.WARNING)


@app.callback()
def main_options(
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show tracebacks of expected errors and debug logging.")] = False,
) -> None:
    """AuthorizationPairs: does a guardrail honor authorization?"""
    _state["debug"] = _state["debug"] or debug
    configure_logging(_state["debug"])


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(authpairs.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"authpairs.commands.{info.name}")
        if hasattr(module, "register"):  # not a helper shared by commands (run_options)
            module.register(app, data_app)


_register_all()
tidy_help(app)


def main() -> None:
    """The ``authpairs`` command (:data:`app`).

    The objects that exist when it starts (the modules and libraries the command line loaded)
    live until the process exits, and so do those still alive when the command ends: both are
    left out of Python's searches for reference cycles (``gc.freeze``), which would only walk
    them again -- during the command, and once more while the interpreter shuts down, where
    that search is most of the time Python takes to exit. Every command has closed its files,
    records and connections by the time it ends.
    """
    gc.freeze()
    atexit.register(gc.freeze)
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
