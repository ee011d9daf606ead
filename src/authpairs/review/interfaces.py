"""Review interfaces: render a public case into a chat request and parse the answer strictly.

Built-in interfaces (SPEC "Reviewer configurations and interfaces"):

* ``direct`` -- asks for one decision.
* ``structured`` -- asks for a decision plus 1..12 checks (requirement, finding, <= 4 evidence).
* ``schema`` -- the structured prompt plus JSON-schema constrained decoding.

Add an interface by subclassing :class:`ReviewInterface` and decorating it with
:func:`register_interface`. An interface sees only :class:`~authpairs.cases.models.PublicCase`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.registry import Registry, RegistryError
from authpairs.review.outcome import ReviewOutcome
from authpairs.review.parsing import parse_json_decision
from authpairs.review.schemas import DIRECT_SCHEMA, STRUCTURED_SCHEMA
from authpairs.review.templates import render, template_sha256


class ReviewInterface:
    """Base class: a system template, a user template and an answer schema."""

    name: ClassVar[str]
    user_template: ClassVar[str]
    system_template: ClassVar[str] = "system.j2"
    answer_schema: ClassVar[dict[str, Any]]
    constrained: ClassVar[bool] = False

    def templates(self) -> list[str]:
        """Template files this interface renders (hashed into the run)."""
        return [self.system_template, self.user_template, "case.j2"]

    def template_hashes(self) -> dict[str, str]:
        """SHA-256 of each template file."""
        return template_sha256(self.templates())

    def render(self, case: PublicCase) -> ChatRequest:
        """Render the exact reviewer input for ``case``."""
        context = case.model_dump(mode="json")
        messages = [
            {"role": "system", "content": render(self.system_template)},
            {"role": "user", "content": render(self.user_template, **context)},
        ]
        response_format = None
        if self.constrained:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": "review", "strict": True, "schema": self.answer_schema},
            }
        return ChatRequest(messages=messages, response_format=response_format)

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Strictly parse the answer; anything but a clean decision is unavailable."""
        return parse_json_decision(response.text, response.finish_reason, self.answer_schema)


def _check_interface(raw: object) -> type[ReviewInterface]:
    if not (isinstance(raw, type) and issubclass(raw, ReviewInterface)):
        raise TypeError(f"{raw!r} is not a ReviewInterface subclass")
    return raw


INTERFACES: Registry[type[ReviewInterface]] = Registry("interfaces", _check_interface)
"""Interface name -> class (built-ins here; guardrail formats and plugins register too)."""


def register_interface(cls: type[ReviewInterface]) -> type[ReviewInterface]:
    """Class decorator: make an interface available by its ``name``."""
    return INTERFACES.add(cls.name, cls)


def get_interface(name: str) -> ReviewInterface:
    """Instantiate a registered interface; unknown names list the known ones."""
    try:
        return INTERFACES.get(name)()
    except RegistryError as exc:
        raise ReviewerError(str(exc)) from None


def interface_names() -> list[str]:
    """Names of all registered interfaces."""
    return INTERFACES.names()


@register_interface
class DirectInterface(ReviewInterface):
    """Direct review: a single decision."""

    name = "direct"
    user_template = "direct.j2"
    answer_schema = DIRECT_SCHEMA


@register_interface
class StructuredInterface(ReviewInterface):
    """Structured review: a decision plus checks with requirement, finding and evidence."""

    name = "structured"
    user_template = "structured.j2"
    answer_schema = STRUCTURED_SCHEMA


@register_interface
class SchemaInterface(StructuredInterface):
    """Schema review: the structured prompt plus JSON-schema constrained decoding."""

    name = "schema"
    constrained = True


InterfaceFactory = Callable[[], ReviewInterface]
