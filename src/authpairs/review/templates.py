"""Prompt templates: Jinja2 files shipped in ``review/templates/``, hashed into every run."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2

from authpairs.cases.canonical import sha256_hex

_TEMPLATE_PACKAGE = "authpairs.review"


def _tojson_sorted(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class _Environment(jinja2.Environment):
    """Jinja2's environment with a cheaper ``obj.name`` on plain dicts (the template contexts
    are JSON dumps): Jinja looks up the attribute first and the key when that fails, and a
    failed attribute lookup raises and catches an exception. A dict instance has only its
    class's attributes, so the key is read directly when ``dict`` has no such attribute --
    the same result as Jinja's rule."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute`` in a template (see the class docstring)."""
        if type(obj) is dict and not hasattr(dict, attribute):
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment over the packaged templates (strict: undefined names fail)."""
    env = _Environment(
        loader=jinja2.PackageLoader(_TEMPLATE_PACKAGE, "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
        auto_reload=False,  # packaged files: no stat() of the template on every render
    )
    env.filters["tojson_sorted"] = _tojson_sorted
    return env


def template_sha256(names: list[str]) -> dict[str, str]:
    """SHA-256 of each named template file (of its text as packaged)."""
    folder = resources.files(_TEMPLATE_PACKAGE) / "templates"
    return {name: sha256_hex((folder / name).read_text(encoding="utf-8")) for name in names}


def render(name: str, **context: Any) -> str:
    """Render a packaged template."""
    if not context:
        return _render_constant(name)
    return environment().get_template(name).render(**context).strip() + "\n"


@cache
def _render_constant(name: str) -> str:
    """A packaged template rendered without variables (e.g. a system prompt): the same text
    every time, so it is rendered once per process."""
    return environment().get_template(name).render().strip() + "\n"
