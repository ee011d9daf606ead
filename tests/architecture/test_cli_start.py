"""Starting the CLI loads only the CLI: the libraries of the commands load when a command runs.

Not a timing test: it checks *which* modules a fresh interpreter has loaded, which does not
depend on how busy the machine is. ``bench/bench_cli_start.py`` measures the time.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "numpy", "matplotlib", "pandas", "pyarrow", "jinja2", "httpx", "openai",
         "inspect_ai", "nemoguardrails", "pydantic", "jsonschema", "yaml")
"""Libraries that no command needs in order to be listed or to show its help."""


def loaded_after(code: str) -> list[str]:
    """Top-level names of the HEAVY libraries loaded after running ``code`` in a new process."""
    probe = (f"import sys\n{code}\n"
             "import json\n"
             f"print(json.dumps(sorted({{m.partition('.')[0] for m in sys.modules}} & "
             f"set({list(HEAVY)!r}))))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    found: list[str] = json.loads(out.strip().splitlines()[-1])
    return found


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert loaded_after("import authpairs.cli") == []


def test_building_every_command_loads_no_heavy_library() -> None:
    """What ``authpairs --help`` does: every command's parameters are built from its signature."""
    assert loaded_after("from typer.main import get_command\n"
                        "from authpairs.cli import app\n"
                        "get_command(app)") == []


def test_the_probe_sees_a_heavy_import() -> None:
    """The check above can fail: a command module importing the analysis is noticed."""
    assert "scipy" in loaded_after("import authpairs.cli\nimport authpairs.analysis.stats")


@pytest.mark.parametrize("module", ["authpairs.api", "authpairs.plugins"])
def test_public_modules_are_cheap_to_import(module: str) -> None:
    """The public surface loads its parts on first use."""
    assert loaded_after(f"import {module}") == []
