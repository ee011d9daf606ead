"""The guardrail registry: name -> a factory that builds a :class:`Reviewer`.

:data:`GUARDRAILS` is an :class:`authpairs.registry.Registry` (entry-point group
``authpairs.guardrails``). A registered object may be

* a :class:`GuardrailFactory` subclass or instance (full control: it builds the reviewer), or
* a plain Python callable ``review(case: PublicCase) -> Decision | str`` (sync or async), which is
  wrapped in :class:`~authpairs.review.guardrails.pycallable.CallableGuardrail`.

A reviewer configuration may also name an import path ``"package.module:attribute"`` directly
(``authpairs run --guardrail mypkg.guard:review``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from authpairs.errors import ReviewerError
from authpairs.registry import Registry, RegistryError, load_object

if TYPE_CHECKING:
    from collections.abc import Callable

    from authpairs.backends.base import Backend
    from authpairs.backends.config import SamplingConfig
    from authpairs.review.reviewers import Reviewer


class GuardrailFactory:
    """Builds a reviewer for a guardrail. Subclass it and register the subclass."""

    output_contract: ClassVar[str] = "a decision (ALLOW/BLOCK/UNKNOWN)"
    needs_backend: ClassVar[bool] = False
    """True when the guardrail calls the configured model backend (e.g. NeMo self-check)."""

    def build(self, name: str, options: dict[str, Any], backend: Backend | None,
              sampling: SamplingConfig) -> Reviewer:
        """The reviewer for this guardrail with ``options`` (from ``guardrail_options``)."""
        raise NotImplementedError

    def resolve(self, options: dict[str, Any], sampling: SamplingConfig) -> dict[str, Any]:
        """The ``guardrail_options`` a run configuration stores: what would otherwise be
        implicit (a file read at run time, which settings come from where) stated, so the stored
        configuration says what runs. Called when the configuration is read and again on the
        stored one, so it must keep resolved options as they are. Default: unchanged."""
        return options

    def identity_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The (resolved) options that can change results, for the run identity; e.g. a
        folder's content hash but not its path. Default: all of them."""
        return options


def as_factory(raw: object) -> GuardrailFactory:
    """Turn a registered object into a :class:`GuardrailFactory` (see the module docstring)."""
    if isinstance(raw, type) and issubclass(raw, GuardrailFactory):
        return raw()
    if isinstance(raw, GuardrailFactory):
        return raw
    if isinstance(raw, type):
        # Class(case) is a call that "works", but it builds an object instead of reviewing.
        raise TypeError(f"{raw.__qualname__!r} is a class, not a guardrail: Class(case) builds "
                        "an object instead of reviewing the case; name its review function or "
                        "method (module:function), or subclass GuardrailFactory")
    if callable(raw):
        from authpairs.review.guardrails.pycallable import CallableGuardrail

        _check_one_argument(raw)
        return CallableGuardrail(raw)
    raise TypeError(f"{raw!r} is neither a GuardrailFactory nor a callable")


def _check_one_argument(func: Callable[..., Any]) -> None:
    """Refuse a callable that cannot be called as ``review(case)`` (e.g. ``os:getcwd``, or a
    class whose constructor needs other arguments), before any case is reviewed."""
    import inspect

    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):  # some builtins have no signature: let the call decide
        return
    try:
        signature.bind(object())
    except TypeError:
        raise TypeError(f"{getattr(func, '__qualname__', func)!r} cannot be called as "
                        f"review(case): its signature is {signature}; a callable guardrail "
                        "takes exactly one argument, the case") from None


GUARDRAILS: Registry[GuardrailFactory] = Registry("guardrails", as_factory)
"""Guardrail name -> factory (built-ins here; plugins through entry points)."""
GUARDRAILS.add_lazy("nemo-self-check", "authpairs.review.guardrails.nemo:NemoSelfCheckGuardrail")
GUARDRAILS.add_lazy("http", "authpairs.review.guardrails.http_service:HttpGuardrail")


def resolve_guardrail(name: str) -> GuardrailFactory:
    """A registered guardrail, or an import path ``module:attribute``; clear errors otherwise."""
    try:
        if name in GUARDRAILS or ":" not in name:
            return GUARDRAILS.get(name)
        return as_factory(load_object(name))
    except (RegistryError, TypeError) as exc:
        raise ReviewerError(f"guardrail '{name}': {exc}") from None
    except Exception as exc:  # third-party code failing while it is imported
        raise ReviewerError(f"guardrail '{name}' failed to load: "
                            f"{type(exc).__name__}: {exc}") from None


def _registered(name: str) -> GuardrailFactory | None:
    """A registered guardrail (built-in or plugin) that loads, else None; never imports an
    import path's module, so a stored configuration stays readable without the user's code."""
    if ":" in name or name not in GUARDRAILS:
        return None
    try:
        return GUARDRAILS.get(name)
    except Exception:  # a plugin that fails to load keeps its options as written
        return None


def resolve_guardrail_options(name: str, options: dict[str, Any], sampling: SamplingConfig
                              ) -> dict[str, Any]:
    """``options`` as the registered guardrail ``name`` resolves them (see
    :meth:`GuardrailFactory.resolve`); unchanged for other guardrails."""
    factory = _registered(name)
    return dict(options) if factory is None else factory.resolve(dict(options), sampling)


def guardrail_identity_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The part of ``options`` that belongs in the run identity (see
    :meth:`GuardrailFactory.identity_options`)."""
    factory = _registered(name)
    return dict(options) if factory is None else factory.identity_options(dict(options))


def option_overrides(pairs: list[str]) -> dict[str, Any]:
    """Configuration overrides from ``KEY=VALUE`` pairs (``authpairs run --guardrail-option``):
    ``reviewer.guardrail_options.KEY`` = VALUE read as YAML (``stop=["\\n"]`` is a list,
    ``config=rails`` a string); a dotted KEY sets a nested option."""
    if not pairs:
        return {}
    import yaml

    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ReviewerError(f"--guardrail-option '{pair}': expected KEY=VALUE",
                                hint="write the option as KEY=VALUE, e.g. --guardrail-option "
                                "config=rails (docs/guardrails.md lists each guardrail's "
                                "options)")
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError as exc:
            raise ReviewerError(f"--guardrail-option '{pair}': VALUE is not YAML: "
                                f"{str(exc).splitlines()[0]}") from None
        overrides[f"reviewer.guardrail_options.{key.strip()}"] = value
    return overrides
