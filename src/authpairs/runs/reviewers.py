"""Build the reviewer a :class:`~authpairs.runs.config.ReviewerConfig` describes.

Order: a baseline; else a guardrail (registered name or ``module:attribute``), given the backend
when it needs one; else an interface over the backend. Backends and reviewers that hold
connections are entered into ``stack`` so they are always closed.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from authpairs.backends.factory import make_backend
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.registry import resolve_guardrail
from authpairs.review.interfaces import get_interface
from authpairs.review.reviewers import BaselineReviewer, ModelReviewer, Reviewer
from authpairs.runs.config import ReviewerConfig


async def make_reviewer(config: ReviewerConfig, stack: AsyncExitStack) -> Reviewer:
    """The reviewer for ``config``; its resources are closed with ``stack``."""
    if config.baseline:
        return BaselineReviewer(config.baseline)
    if config.guardrail:
        factory = resolve_guardrail(config.guardrail)
        backend = None
        if factory.needs_backend:
            backend = await stack.enter_async_context(make_backend(config.backend))
        try:
            reviewer: Any = factory.build(config.guardrail, dict(config.guardrail_options),
                                          backend, config.sampling)
        except ReviewerError:
            raise
        except Exception as exc:
            raise ReviewerError(f"guardrail '{config.guardrail}' could not be built: "
                                f"{type(exc).__name__}: {exc}") from exc
        if hasattr(reviewer, "__aenter__"):
            reviewer = await stack.enter_async_context(reviewer)
        built: Reviewer = reviewer
        return built
    interface = get_interface(config.interface, config.interface_options)
    backend = await stack.enter_async_context(make_backend(config.backend))
    return ModelReviewer(interface, backend, config.sampling)
