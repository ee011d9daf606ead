"""Reviewers: what a run consults for each case.

* :class:`ModelReviewer` -- an interface renders the public case, a backend answers, the interface's
  strict parser decides.
* :class:`BaselineReviewer` -- always-allow or always-block; calls no model, but its records have
  the same shape (an input hash and a formal attempt) so analysis treats every run alike.

Guardrail reviewers (NeMo self-check, Python callables, HTTP services, plugins) live in
:mod:`authpairs.review.guardrails` and follow the same :class:`Reviewer` protocol.
"""

from __future__ import annotations

from typing import Any, Protocol

from authpairs.backends.base import Backend, ChatRequest, ChatResponse, preflight
from authpairs.backends.config import SamplingConfig
from authpairs.cases.canonical import canonical_json
from authpairs.cases.models import PublicCase
from authpairs.review.interfaces import ReviewInterface
from authpairs.review.outcome import Decision, ReviewOutcome


class Reviewer(Protocol):
    """Render -> answer -> parse. ``answer`` may raise TransportError (retried by the run)."""

    def render(self, case: PublicCase) -> ChatRequest:
        """The exact reviewer input."""
        ...

    async def answer(self, request: ChatRequest) -> ChatResponse:
        """Obtain a response for the input."""
        ...

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Classify the response."""
        ...

    def template_hashes(self) -> dict[str, str]:
        """Hashes of the prompt templates used."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts for the run record."""
        ...


class ModelReviewer:
    """An interface over a backend."""

    def __init__(self, interface: ReviewInterface, backend: Backend,
                 sampling: SamplingConfig) -> None:
        self.interface = interface
        self.backend = backend
        self.sampling = sampling

    def render(self, case: PublicCase) -> ChatRequest:
        """The interface's request for ``case`` (refused when it would spell control tokens)."""
        return self.interface.request(case)

    async def preflight(self) -> None:
        """Check the backend's endpoints before a run (when it has any to check), then let the
        interface refuse a model the servers say it cannot speak to
        (:meth:`~authpairs.review.interfaces.ReviewInterface.check_served`)."""
        await preflight([self.backend])
        self.interface.check_served(list(getattr(self.backend, "served_names", [])))

    async def answer(self, request: ChatRequest) -> ChatResponse:
        """Ask the backend; the interface may separate reasoning from the answer."""
        return self.interface.finish(await self.backend.complete(request, self.sampling))

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Parse with the interface's strict parser."""
        return self.interface.parse(response)

    def template_hashes(self) -> dict[str, str]:
        """The interface's template hashes."""
        return self.interface.template_hashes()

    def describe(self) -> dict[str, Any]:
        """Interface and backend facts; for a guardrail format, also the sampling sent and
        whether it follows the vendor's recommendation, the paper's or neither."""
        facts = {"interface": self.interface.name, "backend": self.backend.describe(),
                 "output_contract": self.interface.output_contract}
        settings = self.interface.settings_record(self.sampling)
        if settings is not None:
            facts["settings"] = settings
        return facts


def case_request(tag: str, case: PublicCase) -> ChatRequest:
    """The reviewer input of a reviewer that receives the public case itself (as JSON): a
    baseline, a Python or HTTP guardrail."""
    return ChatRequest(messages=[{"role": "system", "content": tag},
                                 {"role": "user", "content": canonical_json(case)}])


def case_of(request: ChatRequest) -> PublicCase:
    """The public case carried by a :func:`case_request`."""
    return PublicCase.model_validate_json(request.messages[-1]["content"])


class BaselineReviewer:
    """A constant reviewer: ``always-allow`` or ``always-block``."""

    def __init__(self, name: str) -> None:
        decisions = {"always-allow": Decision.ALLOW, "always-block": Decision.BLOCK}
        if name not in decisions:
            raise ValueError(f"unknown baseline {name!r} (known: {', '.join(decisions)})")
        self.name = name
        self.decision = decisions[name]

    def render(self, case: PublicCase) -> ChatRequest:
        """The baseline's 'input' is the canonical public case (it is not read)."""
        return case_request(f"baseline:{self.name}", case)

    async def answer(self, request: ChatRequest) -> ChatResponse:
        """The constant answer."""
        return ChatResponse(text=f'{{"decision": "{self.decision.value}"}}',
                            finish_reason="stop", endpoint="baseline")

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Always the constant decision."""
        return ReviewOutcome.decided(self.decision)

    def template_hashes(self) -> dict[str, str]:
        """Baselines use no templates."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The baseline's name."""
        return {"baseline": self.name}
