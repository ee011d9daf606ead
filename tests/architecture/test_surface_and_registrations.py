"""The public surface for plugins, and registrations that respect the layers.

A registration names its component by a ``"module:attribute"`` string; import-linter cannot see
such a string, so these tests check them: no registration (nor a string inside the registered
component, such as a backend's ``factory``) names code in a layer above the registering module.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

import authpairs
import authpairs.api
import authpairs.plugins
from authpairs.registry import Entry, Registry

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "authpairs"
TARGET = re.compile(r"^(authpairs(?:\.\w+)+):[\w.]+$")


def layers() -> list[list[str]]:
    """The layers contract of pyproject.toml, top layer first, each as its sibling packages."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["type"] == "layers")
    return [[part.strip() for part in layer.split("|")] for layer in contract["layers"]]


LAYERS = layers()


def layer_of(module: str) -> int | None:
    """Position of the layer holding ``module`` (0 = top), or None when no layer holds it."""
    best: tuple[int, int] | None = None  # (length of the matching package, layer)
    for position, packages in enumerate(LAYERS):
        for package in packages:
            inside = module == package or module.startswith(package + ".")
            if inside and (best is None or len(package) > best[0]):
                best = (len(package), position)
    return None if best is None else best[1]


@dataclass(frozen=True)
class Crossing:
    """A registration that names code in a higher layer."""

    registry: str
    name: str
    registered_by: str
    target: str

    def __str__(self) -> str:
        return (f"{self.registry} '{self.name}', registered by {self.registered_by}, names "
                f"{self.target} (a higher layer)")


def targets_of(entry: Entry, component: object | None) -> list[str]:
    """The entry's own target and every ``"authpairs...:attr"`` string the component holds
    (attributes of a class or fields of an instance, e.g. a backend's factory)."""
    found = [entry.target]
    if component is not None:
        for attribute in dir(component):
            if attribute.startswith("_"):
                continue
            value = getattr(component, attribute, None)
            if isinstance(value, str) and TARGET.match(value):
                found.append(value)
    return found


def crossings(registry: Registry[object], components: dict[str, object]) -> list[Crossing]:
    """Registrations of ``registry`` whose targets lie in a layer above their registrant's."""
    found = []
    for entry in registry.entries():
        own = layer_of(entry.registered_by)
        if own is None:  # a plugin, an entry point or a test: outside the layers
            continue
        for target in targets_of(entry, components.get(entry.name)):
            match = TARGET.match(target)
            target_layer = layer_of(match.group(1)) if match else None
            if target_layer is not None and target_layer < own:
                found.append(Crossing(registry.kind, entry.name, entry.registered_by, target))
    return found


def registry_definitions() -> list[tuple[str, str]]:
    """Every ``NAME = Registry(...)`` (annotated or not) in the package, as (module, NAME)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(("authpairs", *path.relative_to(SRC).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id == "Registry"):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [(module, t.id) for t in targets if isinstance(t, ast.Name)]
    return found


def registering_modules(names: Iterable[str]) -> list[str]:
    """Every package module that calls ``NAME.add`` or ``NAME.add_lazy`` on one of ``names``."""
    wanted = set(names)
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("add", "add_lazy")
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in wanted):
                module = ".".join(("authpairs", *path.relative_to(SRC).with_suffix("").parts))
                found.append(module.removesuffix(".__init__"))
                break
    return found


def test_every_registry_is_found() -> None:
    names = {name for _, name in registry_definitions()}
    assert names == {"INTERFACES", "GUARDRAILS", "BACKEND_KINDS", "EFFECT_TYPES",
                     "EFFECT_IMPLEMENTATIONS", "TRACKS"}


def test_no_registration_names_a_higher_layer() -> None:
    """Every built-in registration, its target loaded, checked against the layers."""
    definitions = registry_definitions()
    for module in registering_modules(name for _, name in definitions):
        importlib.import_module(module)
    problems: list[Crossing] = []
    checked = 0
    for module, name in definitions:
        registry = getattr(importlib.import_module(module), name)
        unplaced = [e for e in registry.entries()
                    if e.origin == "built-in" and layer_of(e.registered_by) is None]
        assert not unplaced, f"built-in {name} entries registered outside the layers: {unplaced}"
        components = {entry.name: registry.get(entry.name) for entry in registry.entries()
                      if entry.registered_by.startswith("authpairs.")}
        checked += len(components)
        problems += crossings(registry, components)
    assert not problems, "\n".join(map(str, problems))
    assert checked >= 30  # interfaces, guardrails, backend kinds, 2 x 9 effect types, tracks


def test_a_crossing_registration_is_caught() -> None:
    """The check can fail: a lower layer naming a higher one, directly or in a factory."""
    registry: Registry[object] = Registry("things")
    registry.add_lazy("up", "authpairs.runs.replay:ReplayBackend",
                      registered_by="authpairs.backends.config")
    registry.add_lazy("down", "authpairs.cases.models:Case",
                      registered_by="authpairs.runs.config")

    class Config:
        factory = "authpairs.analysis.stats:holm"

    registry.add_lazy("nested", "authpairs.backends.config:SamplingConfig",
                      registered_by="authpairs.backends.config")
    found = crossings(registry, {"nested": Config})
    assert sorted((c.name, c.target) for c in found) == [
        ("nested", "authpairs.analysis.stats:holm"),
        ("up", "authpairs.runs.replay:ReplayBackend")]


def test_the_registrant_is_recorded() -> None:
    from authpairs.backends.config import BACKEND_KINDS
    from authpairs.enforce.implementations import EFFECT_IMPLEMENTATIONS

    importlib.import_module("authpairs.runs.config")
    by = {e.name: e.registered_by for e in BACKEND_KINDS.entries()}
    assert by["replay"] == "authpairs.runs.config" and by["local"] == "authpairs.backends.config"
    assert {e.registered_by for e in EFFECT_IMPLEMENTATIONS.entries()
            if e.origin == "built-in"} == {"authpairs.enforce.implementations"}


def test_the_case_contract_names_no_enforcement_code() -> None:
    """cases/effect_types.py knows parameter models and names, nothing of the sandbox."""
    tree = ast.parse((SRC / "cases" / "effect_types.py").read_text(encoding="utf-8"))
    strings = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert not [s for s in strings if TARGET.match(s) or s.startswith("authpairs.enforce")]
    assert not [s for s in strings if ":execute_" in s or s.endswith("Verifier")]


def test_toy_plugin_imports_only_the_public_module() -> None:
    tree = ast.parse((Path(__file__).with_name("toy_plugin.py")).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            imported.add(node.module)
    assert {m for m in imported if m.split(".")[0] == "authpairs"} == {"authpairs.plugins"}


def test_plugins_exports_resolve() -> None:
    """Every name of the public surface loads, and type checkers see the same names from the
    same modules (its ``TYPE_CHECKING`` re-exports); unknown names are an AttributeError."""
    for name in authpairs.plugins.__all__:
        assert getattr(authpairs.plugins, name) is not None, name
    assert set(authpairs.plugins.__all__) == (
        set(authpairs.plugins._MODULE_OF) | {n for n in dir(authpairs.plugins)
                                           if n.startswith("register_")})
    source = (SRC / "plugins.py").read_text(encoding="utf-8")
    re_exported = {alias.asname: node.module for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.ImportFrom) and node.module is not None
                   for alias in node.names if alias.asname == alias.name}
    assert re_exported == authpairs.plugins._MODULE_OF
    with pytest.raises(AttributeError):
        _ = authpairs.plugins.RecordStore  # type: ignore[attr-defined]


def test_plugins_sits_at_the_public_layer() -> None:
    """The public module is a layer of the contract, above every package it re-exports."""
    own = layer_of("authpairs.plugins")
    assert own is not None and own == layer_of("authpairs.api")
    for module in authpairs.plugins._EXPORTS:
        below = layer_of(module)
        assert below is not None and below > own, module


def test_the_api_surface_resolves() -> None:
    """Every documented name of authpairs.api loads (a type from the module that defines it),
    ``import authpairs`` offers the same names, and an unknown name is an AttributeError."""
    import authpairs.api as api

    for name in api.__all__:
        assert getattr(api, name) is not None, name
    for name, target in api._TYPES.items():
        module, _, attribute = target.partition(":")
        assert getattr(api, name) is getattr(importlib.import_module(module), attribute or name)
    assert set(api._TYPES) <= set(api.__all__)
    assert authpairs.api.__all__ == [n for n in authpairs.__all__ if n != "__version__"]
    assert {name: getattr(authpairs, name) for name in api.__all__} == {
        name: getattr(api, name) for name in api.__all__}
    with pytest.raises(AttributeError):
        _ = api.no_such_name  # type: ignore[attr-defined]


def test_the_api_names_are_written_alike_for_type_checkers_and_at_run_time() -> None:
    """authpairs.api writes its documented types twice: the ``TYPE_CHECKING`` imports (what
    type checkers see) and ``_TYPES`` (what loads them); ``__all__`` (a literal list, the only
    form type checkers read) lists exactly those, the public functions and types defined there
    and the constants and base error it imports."""
    import authpairs.api as api

    tree = ast.parse((SRC / "api.py").read_text(encoding="utf-8"))
    checking = next(node for node in tree.body if isinstance(node, ast.If)
                    and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    imported = {alias.asname: node.module + ("" if alias.asname == alias.name
                                             else f":{alias.name}")
                for node in checking.body
                if isinstance(node, ast.ImportFrom) and node.module is not None
                for alias in node.names if alias.asname is not None}
    assert imported == api._TYPES
    defined = {node.name for node in tree.body
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    defined |= {node.target.id for node in tree.body
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    public = {name for name in defined if not name.startswith("_")}
    assert set(api.__all__) == public | set(api._TYPES) | {
        "DEFAULT_DRAWS", "DEFAULT_RECORDS", "DEFAULT_SEED", "AuthpairsError"}
    assert len(api.__all__) == len(set(api.__all__))


def test_dir_lists_the_public_names_before_they_load() -> None:
    """``dir(authpairs)`` and ``dir(authpairs.api)`` name every public name in a fresh
    interpreter, where none of the documented types has loaded yet."""
    code = ("import authpairs, authpairs.api, sys\n"
            "assert 'authpairs.runs.config' not in sys.modules\n"
            "print(sorted(set(authpairs.api.__all__) - set(dir(authpairs.api))),"
            " sorted(set(authpairs.__all__) - set(dir(authpairs))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, env={**os.environ, "PYTHONPATH": str(SRC.parent)})
    assert result.stdout.split() == ["[]", "[]"]


def test_the_package_version_is_the_projects() -> None:
    """``authpairs.__version__`` (what the MCP server and fetched sources report) is the
    version pyproject.toml builds."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert authpairs.__version__ == config["project"]["version"]


def test_register_functions_record_the_plugin_as_registrant(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """A registration through authpairs.plugins is attributed to the plugin, not the helper."""
    from authpairs.plugins import GUARDRAILS, Decision, GuardrailFactory, register_guardrail

    monkeypatch.setattr(GUARDRAILS, "_lazy", dict(GUARDRAILS._lazy))
    monkeypatch.setattr(GUARDRAILS, "_loaded", dict(GUARDRAILS._loaded))

    def always_allow(case: object) -> Decision:
        return Decision.ALLOW

    register_guardrail("toy-guard", always_allow)
    entry = next(e for e in GUARDRAILS.entries() if e.name == "toy-guard")
    assert entry.registered_by == __name__
    assert isinstance(GUARDRAILS.get("toy-guard"), GuardrailFactory)
