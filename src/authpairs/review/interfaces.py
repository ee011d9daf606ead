"""Review interfaces: render a public case into a chat request and parse the answer strictly.

Built-in interfaces (docs/definitions.md "Reviewer configurations and interfaces"):

* ``direct`` -- asks for one decision.
* ``structured`` -- asks for a decision plus 1..12 checks (requirement, finding, <= 4 evidence).
* ``schema`` -- the structured prompt plus JSON-schema constrained decoding.

Native guardrail formats (``safeguard``, ``granite-guardian``, ``policyguard``, ``qwen3guard``,
``nemotron-safety``, ``llama-guard``) live in :mod:`authpairs.review.guardrails` and are registered
here lazily, so their optional libraries are imported only when one is used.

Add an interface by subclassing :class:`ReviewInterface` and decorating it with
:func:`register_interface`. An interface sees only :class:`~authpairs.cases.models.PublicCase`.
A run asks it for :meth:`ReviewInterface.request`, which refuses a case that would turn into
control tokens before it calls the interface's :meth:`~ReviewInterface.render`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import BackendConfigBase, SamplingConfig
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.registry import Registry, RegistryError, caller_module
from authpairs.review.control_tokens import refuse_control_tokens
from authpairs.review.outcome import ReviewOutcome
from authpairs.review.parsing import parse_json_decision
from authpairs.review.schemas import DIRECT_SCHEMA, STRUCTURED_SCHEMA
from authpairs.review.templates import render, template_sha256

RENDERING_KEY = "(rendering)"
"""The key, among a run header's template hashes, of the rendering an interface declares
(:meth:`ReviewInterface.rendering`); headers of interfaces that declare none lack it."""


class ReviewInterface:
    """Base class: a system template, a user template and an answer schema."""

    name: ClassVar[str]
    user_template: ClassVar[str]
    system_template: ClassVar[str] = "system.j2"
    answer_schema: ClassVar[dict[str, Any]]
    constrained: ClassVar[bool] = False
    output_contract: ClassVar[str] = "one JSON object with a decision"
    """One line: what output the strict parser accepts (shown by ``authpairs guardrails``)."""
    sends_text: bool = True
    """Whether the prompt reaches the server as text that it tokenises again (chat messages it
    puts through the model's chat template, or a raw prompt); False for token ids."""

    def finish(self, response: ChatResponse) -> ChatResponse:
        """Post-process a backend response before it is recorded (default: unchanged).

        Native formats use this to separate reasoning from the answer and count its tokens.
        """
        return response

    def check_backend(self, backend: BackendConfigBase) -> None:
        """Refuse, with a :class:`~authpairs.errors.ConfigError`, a backend whose model this
        interface cannot speak to (called before the backend starts; default: any backend)."""
        return None

    def check_served(self, names: list[str]) -> None:
        """Refuse, with a :class:`~authpairs.errors.ConfigError`, a model the servers' models
        endpoints name (``names``: its id and the path it was loaded from) that this interface
        cannot speak to (called by the run's preflight; default: any model)."""
        return None

    def settings_record(self, sampling: SamplingConfig) -> dict[str, Any] | None:
        """What the run's sampling follows (the vendor's recommendation, the paper's, or
        neither), for the run header; None when the interface has no vendor (default)."""
        return None

    def templates(self) -> list[str]:
        """Template files this interface renders (hashed into the run)."""
        return [self.system_template, self.user_template, "case.j2"]

    def rendering(self) -> str | None:
        """How this interface turns a case into a request and an answer into an outcome, where
        that changed after run headers first recorded template hashes: a name that changes with
        every such change (kept among the template hashes under :data:`RENDERING_KEY`, so a run
        is never resumed, nor audited, under another rendering). None (default): rendered and
        parsed as when template hashes were first recorded."""
        return None

    def template_hashes(self) -> dict[str, str]:
        """SHA-256 of each template file, and the interface's :meth:`rendering` if any."""
        hashes = template_sha256(self.templates())
        rendering = self.rendering()
        if rendering is not None:
            hashes[RENDERING_KEY] = rendering
        return hashes

    def as_recorded(self, template_hashes: dict[str, str]) -> ReviewInterface:
        """This interface as the version that wrote a run header's ``template_hashes`` rendered
        and parsed, so an audit re-checks records by the rules they were made under (default:
        itself). Never used to run: a run is only resumed under its own rendering."""
        return self

    def request(self, case: PublicCase) -> ChatRequest:
        """What a run sends for ``case``: :meth:`render`, after refusing (once) a case whose
        public text spells a control token when the prompt goes as text
        (:func:`~authpairs.review.control_tokens.refuse_control_tokens`). Subclasses override
        :meth:`render`, never this."""
        if self.sends_text:
            refuse_control_tokens(self.name, case)
        return self.render(case)

    def render(self, case: PublicCase) -> ChatRequest:
        """The exact reviewer input for ``case``, whatever its text spells (an audit renders
        recorded cases again with it): chat messages, which the server puts through the
        model's chat template and tokenises."""
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
    """Register a review interface under its ``name`` (usable as a class decorator)."""
    return INTERFACES.add(cls.name, cls, registered_by=caller_module(1))


def get_interface(name: str, options: dict[str, Any] | None = None) -> ReviewInterface:
    """Instantiate a registered interface with its ``options``; unknown names list the known
    ones, and options the interface does not take are a :class:`ReviewerError`."""
    try:
        cls = INTERFACES.get(name)
    except RegistryError as exc:
        raise ReviewerError(str(exc)) from None
    try:
        return cls(**(options or {}))
    except TypeError as exc:
        raise ReviewerError(f"interface '{name}': bad interface_options: {exc}") from None


@register_interface
class DirectInterface(ReviewInterface):
    """Direct review: a single decision."""

    name = "direct"
    user_template = "direct.j2"
    answer_schema = DIRECT_SCHEMA
    output_contract = 'one JSON object {"decision": ALLOW|BLOCK|UNKNOWN}'


@register_interface
class StructuredInterface(ReviewInterface):
    """Structured review: a decision plus checks with requirement, finding and evidence."""

    name = "structured"
    user_template = "structured.j2"
    answer_schema = STRUCTURED_SCHEMA
    output_contract = ('one JSON object {"checks": [1..12 {requirement, finding, evidence '
                       '(<= 4)}], "decision": ALLOW|BLOCK|UNKNOWN}')


@register_interface
class SchemaInterface(StructuredInterface):
    """Schema review: the structured prompt plus JSON-schema constrained decoding."""

    name = "schema"
    constrained = True
    output_contract = "the structured object, with JSON-schema constrained decoding"


_NATIVE = "authpairs.review.guardrails"
for _name, _target in {
    "safeguard": f"{_NATIVE}.safeguard:SafeguardInterface",
    "granite-guardian": f"{_NATIVE}.granite:GraniteGuardianInterface",
    "policyguard": f"{_NATIVE}.policyguard:PolicyGuardInterface",
    "qwen3guard": f"{_NATIVE}.qwen3guard:Qwen3GuardInterface",
    "nemotron-safety": f"{_NATIVE}.nemotron:NemotronSafetyInterface",
    "llama-guard": f"{_NATIVE}.llama_guard:LlamaGuardInterface",
}.items():
    INTERFACES.add_lazy(_name, _target)

