"""Build the reviewer a :class:`~authpairs.runs.config.ReviewerConfig` describes.

Order: a baseline; else a guardrail (registered name or ``module:attribute``), given the backend
when it needs one; else an interface over the backend. Backends and reviewers that hold
connections are entered into ``stack`` so they are always closed. :func:`rebuilt_reviewer`
builds the same reviewer without its model, for re-parsing stored outputs.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from authpairs.backends.base import Backend, ChatRequest, ChatResponse, NoResources
from authpairs.backends.config import SamplingConfig
from authpairs.errors import BackendError, ReviewerError
from authpairs.review.guardrails.registry import resolve_guardrail
from authpairs.review.interfaces import get_interface
from authpairs.review.reviewers import BaselineReviewer, ModelReviewer, Reviewer
from authpairs.runs.config import ReviewerConfig


class NoModel(NoResources):
    """A backend stand-in for a reviewer rebuilt to render and parse only (an audit re-parsing
    stored outputs): it is never entered for a model and refuses every call."""

    name = "no-model"

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """Refuse: a rebuilt reviewer renders and parses, it never asks a model."""
        raise BackendError("this reviewer was rebuilt to re-parse stored outputs; it calls no "
                           "model")

    def describe(self) -> dict[str, Any]:
        """Facts for a record (never stored: nothing is run with it)."""
        return {"kind": self.name}


def _build_guardrail(config: ReviewerConfig, backend: Backend | None) -> Reviewer:
    """The guardrail reviewer ``config`` names, built by its factory with ``backend``."""
    assert config.guardrail is not None
    factory = resolve_guardrail(config.guardrail)
    try:
        return factory.build(config.guardrail, dict(config.guardrail_options), backend,
                             config.sampling)
    except ReviewerError:
        raise
    except Exception as exc:
        raise ReviewerError(f"guardrail '{config.guardrail}' could not be built: "
                            f"{type(exc).__name__}: {exc}") from exc


def rebuilt_reviewer(config: ReviewerConfig) -> Reviewer:
    """The reviewer ``config`` describes, built as :func:`make_reviewer` builds it but without
    a model backend (:class:`NoModel` where the guardrail needs one): its ``render``, ``parse``
    and ``template_hashes`` are the run's, and it calls nothing. A guardrail that holds
    connections (``__aenter__``) is never entered, so none are opened."""
    if config.baseline:
        return BaselineReviewer(config.baseline)
    if config.guardrail:
        needs = resolve_guardrail(config.guardrail).needs_backend
        return _build_guardrail(config, NoModel() if needs else None)
    return ModelReviewer(get_interface(config.interface, config.interface_options), NoModel(),
                         config.sampling)


async def make_reviewer(config: ReviewerConfig, stack: AsyncExitStack) -> Reviewer:
    """The reviewer for ``config``; its resources are closed with ``stack``."""
    if config.baseline:
        return BaselineReviewer(config.baseline)
    if config.guardrail:
        backend = None
        if resolve_guardrail(config.guardrail).needs_backend:
            backend = await stack.enter_async_context(config.backend.create())
        reviewer = _build_guardrail(config, backend)
        if isinstance(reviewer, AbstractAsyncContextManager):
            reviewer = await stack.enter_async_context(reviewer)
        return reviewer
    interface = get_interface(config.interface, config.interface_options)
    interface.check_backend(config.backend)
    backend = await stack.enter_async_context(config.backend.create())
    return ModelReviewer(interface, backend, config.sampling)
