"""The templates' environment reads ``obj.name`` on plain dicts exactly as Jinja2 does."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from authpairs.cases.dataset import load_dataset
from authpairs.review import templates
from authpairs.review.interfaces import INTERFACES, get_interface

TEMPLATES = Path(templates.__file__).parent / "templates"
EXAMPLES = Path(templates.__file__).parents[1] / "cases" / "data" / "examples.jsonl"


def _plain() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             undefined=jinja2.StrictUndefined, autoescape=False,
                             keep_trailing_newline=False, trim_blocks=False)
    env.filters["tojson_sorted"] = templates._tojson_sorted
    return env


@pytest.mark.parametrize("name", ["format", "items", "keys", "get", "x", "missing", "__class__"])
def test_getattr_on_a_dict_matches_jinja(name: str) -> None:
    value = {"format": "text", "items": [1, 2], "x": None, "keys": "k"}
    ours, theirs = templates.environment().getattr(value, name), _plain().getattr(value, name)
    if isinstance(theirs, jinja2.Undefined):
        assert isinstance(ours, jinja2.Undefined) and ours._undefined_name == name
    else:
        assert ours == theirs


def test_a_state_key_named_like_a_dict_method_renders_as_jinja_renders_it() -> None:
    case = load_dataset(EXAMPLES).cases[0].public.model_dump(mode="json")
    case["evidence"]["state"] = {"items": ["a", "b"], "keys": {"k": 1}, "plain": 3}
    assert (templates.environment().get_template("case.j2").render(**case)
            == _plain().get_template("case.j2").render(**case))


@pytest.mark.parametrize("interface", INTERFACES.names())
def test_every_interface_renders_the_examples_as_plain_jinja_does(
        interface: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reviewer = get_interface(interface)
    cases = load_dataset(EXAMPLES).cases
    ours = [reviewer.render(case.public) for case in cases]
    plain = _plain()
    monkeypatch.setattr(templates, "environment", lambda: plain)
    monkeypatch.setattr(templates, "_render_constant",
                        lambda name: plain.get_template(name).render().strip() + "\n")
    assert [reviewer.render(case.public) for case in cases] == ours
