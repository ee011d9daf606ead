"""One registry pattern for every pluggable component.

A :class:`Registry` maps a name to a component: an interface class, a backend kind, a guardrail,
an effect type, a dataset track. Built-in components are registered *lazily*, as an import path
``"package.module:attribute"``, so looking up one component imports only its module (and a missing
optional extra fails with a clear message only when that component is used). Plugins register
through package entry points: a distribution that declares, in its ``pyproject.toml``::

    [project.entry-points."authpairs.guardrails"]
    my-guard = "mypkg.guard:MyGuardrail"

makes ``my-guard`` available wherever guardrails are looked up, with no change to authpairs.
Entry-point groups are ``authpairs.<kind>`` (``interfaces``, ``backends``, ``guardrails``,
``effect_types``, ``effect_implementations``, ``tracks``).

Every entry remembers the module that registered it, so a test can check that no registration
names, by string, code in a layer above its own (``tests/architecture``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from authpairs.errors import AuthpairsError

T = TypeVar("T")


class RegistryError(AuthpairsError, LookupError):
    """An unknown name, or a component (built-in or plugin) that fails to load."""

    hint = ("use one of the known names the message lists ('authpairs guardrails' lists the "
            "interfaces and guardrails); a plugin adds names through its entry points")


@dataclass(frozen=True)
class Entry:
    """Where a registered component comes from and what it is, for listings."""

    name: str
    origin: str
    target: str
    registered_by: str = ""
    """The module whose code registered it (empty for an entry point)."""


def load_object(target: str) -> object:
    """Import ``"package.module:attribute"`` (attribute may be dotted) and return the attribute."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise RegistryError(f"'{target}' is not of the form 'package.module:attribute'")
    try:
        value: object = _import(module_name)
    except ImportError as exc:
        raise RegistryError(f"cannot import '{module_name}' for '{target}': {exc}") from exc
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise RegistryError(f"'{module_name}' has no attribute '{attribute}'") from None
    return value


def _import(module_name: str) -> object:
    """Import a module; a user's own top-level module is also looked up in the current
    directory (as ``python -m`` would), so ``--guardrail mymodule:review`` works from where the
    user stands."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.partition(".")[0]
        cwd = os.getcwd()
        if exc.name != top or cwd in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(module_name)


def caller_module(skip: int = 0) -> str:
    """The name of the first module outside this one on the call stack, ``skip`` more frames
    further out (for a helper that registers on its caller's behalf)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    for _ in range(skip):
        if frame.f_back is not None:
            frame = frame.f_back
    return str(frame.f_globals.get("__name__", ""))


class Registry(Generic[T]):
    """Named components of one kind, loaded on first use, open to entry-point plugins."""

    def __init__(self, kind: str, check: Callable[[object], T] | None = None) -> None:
        self.kind = kind
        self.group = f"authpairs.{kind}"
        self._check = check
        self._loaded: dict[str, T] = {}
        self._lazy: dict[str, Entry] = {}
        self._plugins_scanned = False

    def add(self, name: str, component: T, *, origin: str = "built-in",
            registered_by: str | None = None) -> T:
        """Register an already-imported component under ``name`` and return it.

        ``registered_by`` is the registering module (default: the caller's)."""
        module = getattr(component, "__module__", "?")
        qualname = getattr(component, "__qualname__", type(component).__qualname__)
        self._lazy[name] = Entry(name, origin, f"{module}:{qualname}",
                                 registered_by or caller_module())
        self._loaded[name] = component
        return component

    def add_lazy(self, name: str, target: str, *, origin: str = "built-in",
                 registered_by: str | None = None) -> None:
        """Register ``"module:attribute"`` under ``name``; it is imported on first lookup.

        ``registered_by`` is the registering module (default: the caller's)."""
        self._lazy[name] = Entry(name, origin, target, registered_by or caller_module())
        self._loaded.pop(name, None)

    def get(self, name: str) -> T:
        """The component called ``name``; unknown names list the known ones."""
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._lazy:
            self._scan_plugins()
        if name not in self._lazy:
            known = ", ".join(self.names()) or "none"
            kind = self.kind[:-1].replace("_", " ") if self.kind.endswith("s") else self.kind
            raise RegistryError(f"unknown {kind} '{name}' (known: {known})")
        raw = load_object(self._lazy[name].target)
        component = self._check(raw) if self._check is not None else raw
        self._loaded[name] = component  # type: ignore[assignment]
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._lazy:
            self._scan_plugins()
        return name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def names(self) -> list[str]:
        """Every registered name, built-in and plugin, sorted."""
        self._scan_plugins()
        return sorted(self._lazy)

    def entries(self) -> list[Entry]:
        """Every registered component with its origin (``built-in`` or ``plugin: dist``)."""
        return [self._lazy[name] for name in self.names()]

    def _scan_plugins(self) -> None:
        if self._plugins_scanned:
            return
        self._plugins_scanned = True
        for point in importlib.metadata.entry_points(group=self.group):
            if point.name in self._lazy:
                continue  # a built-in keeps its name; plugins cannot shadow it
            dist = point.dist.name if point.dist is not None else "unknown"
            self._lazy[point.name] = Entry(point.name, f"plugin: {dist}", point.value)
