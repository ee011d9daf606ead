"""Verifiers are independent of executors: separate modules, no imports, their own channel."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

import authpairs.enforce.verify as verify_pkg
from authpairs.cases.effect_types import BUILT_IN_EFFECT_TYPES as EFFECT_TYPES
from authpairs.cases.effect_types import EFFECT_TYPES as TYPES
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS as REGISTRY

FORBIDDEN = ("authpairs.enforce.execute", "authpairs.enforce.safepath",
             "authpairs.enforce.seeding", "authpairs.enforce.sandbox",
             "authpairs.enforce.enforcer")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import inside authpairs.enforce.verify
                parent = "authpairs.enforce.verify".rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names |= {f"{base}.{a.name}" for a in node.names}
    return names


def test_verifier_modules_import_no_executor_code() -> None:
    files = sorted(Path(verify_pkg.__file__).parent.glob("*.py"))
    assert {"built_in.py", "digest.py", "channel.py"} <= {p.name for p in files}
    for path in files:
        bad = {n for n in _imports(path) if n.startswith(FORBIDDEN)}
        assert not bad, f"{path.name} imports {bad}"


def test_every_type_has_an_executor_and_a_verifier_in_separate_modules() -> None:
    assert set(REGISTRY.names()) == set(TYPES.names()) == set(EFFECT_TYPES)
    for effect_type in EFFECT_TYPES:
        spec = REGISTRY.get(effect_type)
        executor_module = spec.load_executor().__module__
        verifier_module = type(spec.load_verifier()).__module__
        assert executor_module.startswith("authpairs.enforce.execute.")
        assert verifier_module.startswith("authpairs.enforce.verify.")


def test_read_channel_is_read_only(tmp_path: Path) -> None:
    with LocalEnforcer(tmp_path) as enf:
        channel = enf._channel
        assert channel is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            channel.query("DELETE FROM accounts")


def test_importing_a_verifier_module_loads_no_executor_module() -> None:
    """Independence holds at run time, not only in the source text: a fresh interpreter that
    imports any verifier module has no executor, sandbox or seeding module loaded."""
    import subprocess
    import sys

    modules = sorted(f"authpairs.enforce.verify.{p.stem}"
                     for p in Path(verify_pkg.__file__).parent.glob("*.py"))
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            f"bad = sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r}))\n"
            "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"verifier imports loaded: {out.stdout.strip()}"
