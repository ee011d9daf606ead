"""Bring your own guardrail as a Python callable.

``review(case: PublicCase) -> Decision | str`` (plain or ``async``) is called once per case with
the public case only. A :class:`Decision` is used as is; a string goes through a named parser
(``guardrail_options.parser``, default ``label``). A callable that raises gives an *unavailable*
record with reason ``guardrail_error`` (its message kept as the output text), never a crash; a
:class:`~authpairs.errors.TransportError` it raises is retried like any infrastructure failure,
and so is a call that overruns ``guardrail_options.deadline_s``. Sync callables run in a worker
thread, so up to ``concurrency`` calls may be in flight at once.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, ClassVar

from authpairs.backends.base import Backend, ChatRequest, ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.canonical import sha256_hex
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError, TransportError
from authpairs.review.guardrails.answers import check_parser, parse_with
from authpairs.review.guardrails.registry import GuardrailFactory
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.reviewers import case_of, case_request

DECISION_FINISH = "decision"
"""finish_reason of a response that carries a :class:`Decision` object."""
ERROR_FINISH = "guardrail_error"
"""finish_reason of a response whose guardrail raised or returned a wrong type."""


class CallableReviewer:
    """Calls a Python guardrail with the public case."""

    def __init__(self, func: Callable[[PublicCase], Any], target: str, parser: str = "label",
                 deadline_s: float | None = None) -> None:
        self.func = func
        self.target = target
        self.parser = check_parser(parser)
        self.deadline_s = deadline_s

    def render(self, case: PublicCase) -> ChatRequest:
        """The canonical public case (the callable receives exactly this object)."""
        return case_request(f"guardrail:{self.target}", case)

    async def _call(self, case: PublicCase) -> Any:
        if inspect.iscoroutinefunction(self.func):
            return await self.func(case)
        result = await asyncio.to_thread(self.func, case)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def answer(self, request: ChatRequest) -> ChatResponse:
        """Call the guardrail; failures become a ``guardrail_error`` response."""
        case = case_of(request)
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(self._call(case), timeout=self.deadline_s)
        except TransportError:
            raise
        except TimeoutError as exc:
            raise TransportError(f"guardrail {self.target}: no answer within "
                                 f"{self.deadline_s} s") from exc
        except Exception as exc:
            text, finish = f"{type(exc).__name__}: {exc}", ERROR_FINISH
        else:
            if isinstance(result, Decision):
                text, finish = result.value, DECISION_FINISH
            elif isinstance(result, str):
                text, finish = result, "stop"
            else:
                text = f"returned {type(result).__name__}, not Decision or str: {result!r}"[:500]
                finish = ERROR_FINISH
        return ChatResponse(text=text, finish_reason=finish,
                            latency_s=time.perf_counter() - started, endpoint=self.target)

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """A Decision as is; a string through the named parser; an error as unavailable."""
        if response.finish_reason == ERROR_FINISH:
            return ReviewOutcome.unavailable(ReasonCode.GUARDRAIL_ERROR,
                                             (response.text or "")[:500])
        if response.finish_reason == DECISION_FINISH:
            return ReviewOutcome.decided(Decision(response.text or ""))
        return parse_with(self.parser, response.text or "")

    def template_hashes(self) -> dict[str, str]:
        """SHA-256 of the callable's source (when Python can find it), keyed by its path."""
        try:
            source = inspect.getsource(self.func)
        except (OSError, TypeError):
            return {}
        return {f"callable:{self.target}": sha256_hex(source)}

    def describe(self) -> dict[str, Any]:
        """The callable's import path and parser."""
        return {"guardrail": self.target, "kind": "callable", "parser": self.parser}


class CallableGuardrail(GuardrailFactory):
    """Factory for a plain ``review(case)`` function (registered or given by import path)."""

    output_contract: ClassVar[str] = ("review(case) -> Decision, or a string read by the named "
                                      "parser (default: exactly ALLOW/BLOCK/UNKNOWN)")

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

    def build(self, name: str, options: dict[str, Any], backend: Backend | None,
              sampling: SamplingConfig) -> CallableReviewer:
        """A :class:`CallableReviewer`; options: ``parser``, ``deadline_s``."""
        unknown = set(options) - {"parser", "deadline_s"}
        if unknown:
            raise ReviewerError(f"guardrail '{name}': unknown guardrail_options "
                                f"{', '.join(sorted(unknown))} (known: parser, deadline_s)")
        deadline = options.get("deadline_s")
        return CallableReviewer(self.func, name, str(options.get("parser", "label")),
                                float(deadline) if deadline is not None else None)
