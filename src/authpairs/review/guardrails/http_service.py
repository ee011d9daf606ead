"""Bring your own guardrail as an HTTP service.

Each case is POSTed as JSON to ``url``: the public case itself (``send: case``, default) or the
prompt an interface renders for it (``send: prompt``: ``{"messages": [...]}`` or
``{"prompt": "..."}``). One field of the JSON reply (``field``, a dotted path, default
``decision``) is the verdict: mapped through ``values`` when given (e.g. ``{"safe": "ALLOW",
"unsafe": "BLOCK"}``), else read by the named ``parser`` (default ``label``).

Transport rules are the model backends': a refused connection, a timeout past ``deadline_s``,
HTTP 429 or 5xx raise :class:`~authpairs.errors.TransportError` (recorded as infrastructure and
retried); another 4xx raises :class:`~authpairs.errors.BackendError` and stops the run. The
service has a circuit breaker (:mod:`authpairs.backends.breaker`): refused for a few seconds, or
HTTP 401/403/404, it stops the run, and the run's preflight checks that the URL answers. A 2xx
reply that is not JSON, lacks the field, or holds an unknown value is an *unavailable* record
with a reason code, the raw reply kept as output text.

The reply is read strictly (:func:`~authpairs.review.parsing.parse_bare_json`): one bare JSON
value of at most ``MAX_RESPONSE_CHARS`` characters; duplicate keys, NaN/Infinity, nesting
deeper than ``MAX_DEPTH`` and oversized numbers are unavailable, never a decision. ``values``
keys are matched after ASCII case folding only.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, ClassVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from authpairs import main_job
from authpairs.backends.base import Backend, ChatRequest, ChatResponse
from authpairs.backends.breaker import Breaker, counted_failure, none_left
from authpairs.backends.config import SamplingConfig
from authpairs.backends.connections import ClientPool
from authpairs.backends.openai_http import check_status
from authpairs.backends.preflight import check_reachable
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.answers import check_parser, normalise, parse_with
from authpairs.review.guardrails.registry import GuardrailFactory
from authpairs.review.interfaces import ReviewInterface, get_interface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import ascii_upper, parse_bare_json
from authpairs.review.reviewers import case_request
from authpairs.yamlfiles import first_error


class HttpGuardrailOptions(BaseModel):
    """``guardrail_options`` of the ``http`` guardrail."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Where each case is POSTed.")
    send: str = Field(default="case", pattern="^(case|prompt)$",
                      description="'case' (the public case) or 'prompt' (an interface's prompt).")
    interface: str = Field(default="direct", description="Interface rendering the prompt.")
    field: str = Field(default="decision", description="Dotted path of the verdict field.")
    values: dict[str, str] | None = Field(
        default=None, description="Verdict value -> ALLOW/BLOCK/UNKNOWN (ASCII case ignored).")
    parser: str = Field(default="label", description="Named parser for a string verdict.")
    deadline_s: float = Field(default=main_job.DEADLINE_S, gt=0, description="Per request.")
    api_key_env: str | None = Field(default=None, description="Env var with a bearer token.")


class HttpGuardrailReviewer:
    """POSTs each case to a guardrail service and reads one field of its reply."""

    def __init__(self, options: HttpGuardrailOptions, *,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.options = options
        check_parser(options.parser)
        self.values: dict[str, Decision] | None = None
        if options.values is not None:
            try:
                self.values = {normalise(k): Decision(ascii_upper(v))
                               for k, v in options.values.items()}
            except ValueError as exc:
                raise ReviewerError(f"http guardrail: values: {exc}") from None
        self.interface: ReviewInterface | None = (
            get_interface(options.interface) if options.send == "prompt" else None)
        token = os.environ.get(options.api_key_env) if options.api_key_env else None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._clients = ClientPool(tls=options.url.startswith("https:"), headers=headers,
                                   transport=transport, timeout=httpx.Timeout(options.deadline_s))
        self.breaker = Breaker(options.url)

    async def __aenter__(self) -> HttpGuardrailReviewer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._clients.aclose()

    async def preflight(self) -> None:
        """Check before a run that the service's URL answers (see
        :func:`~authpairs.backends.preflight.check_reachable`)."""
        async with self._clients.client() as client:
            await check_reachable(client, self.options.url)

    def render(self, case: PublicCase) -> ChatRequest:
        """The public case, or the configured interface's prompt for it."""
        if self.interface is not None:
            return self.interface.request(case)
        return case_request(f"guardrail-http:{self.options.url}", case)

    def _body(self, request: ChatRequest) -> Any:
        if self.interface is None:
            return json.loads(request.messages[-1]["content"])
        if request.prompt is not None:
            return {"prompt": request.prompt}
        return {"messages": request.messages}

    async def answer(self, request: ChatRequest) -> ChatResponse:
        """POST within the deadline; transport failures raise, any 2xx body is returned."""
        url = self.options.url
        if self.breaker.is_open:
            raise none_left([self.breaker])
        started = time.perf_counter()
        try:
            async with self._clients.client() as client:
                reply = await asyncio.wait_for(client.post(url, json=self._body(request)),
                                               timeout=self.options.deadline_s)
        except (httpx.TransportError, TimeoutError) as exc:
            raise counted_failure(self.breaker, url, exc) from exc
        check_status(url, reply, self.breaker)
        return ChatResponse(text=reply.text, finish_reason="stop",
                            latency_s=time.perf_counter() - started, endpoint=url)

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """The verdict field of the strictly read reply, through ``values`` or the named
        parser."""
        body = parse_bare_json(response.text)
        if isinstance(body, ReviewOutcome):
            return body.model_copy(update={"detail": f"service reply: {body.detail}"})
        value = body
        for part in self.options.field.split("."):  # the dotted path of the verdict field
            if not isinstance(value, dict) or part not in value:
                return ReviewOutcome.unavailable(ReasonCode.MISSING_FIELD,
                                                 f"reply has no field '{self.options.field}'")
            value = value[part]
        if self.values is not None:
            key = normalise(value if isinstance(value, str) else json.dumps(value))
            if key not in self.values:
                return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                                 f"'{self.options.field}' = {key[:40]!r} is not "
                                                 "a configured value")
            return ReviewOutcome.decided(self.values[key])
        if not isinstance(value, str):
            return ReviewOutcome.unavailable(ReasonCode.WRONG_TYPE,
                                             f"'{self.options.field}' is not a string")
        return parse_with(self.options.parser, value)

    def template_hashes(self) -> dict[str, str]:
        """The prompt interface's template hashes (none when the case is sent)."""
        return self.interface.template_hashes() if self.interface is not None else {}

    def describe(self) -> dict[str, Any]:
        """The service URL and how its reply is read."""
        return {"guardrail": "http", "url": self.options.url, "send": self.options.send,
                "field": self.options.field, "parser": self.options.parser}


class HttpGuardrail(GuardrailFactory):
    """Factory of :class:`HttpGuardrailReviewer` (registered as ``http``)."""

    output_contract: ClassVar[str] = (
        "JSON reply; the configured field mapped through 'values' or read by the named parser")

    def build(self, name: str, options: dict[str, Any], backend: Backend | None,
              sampling: SamplingConfig) -> HttpGuardrailReviewer:
        """Validate ``options`` (see :class:`HttpGuardrailOptions`) and build the reviewer."""
        try:
            parsed = HttpGuardrailOptions.model_validate(options)
        except ValidationError as exc:
            where, message = first_error(exc)
            raise ReviewerError(f"guardrail '{name}': guardrail_options.{where or '(options)'}: "
                                f"{message}") from None
        return HttpGuardrailReviewer(parsed)
