"""``nemo-self-check``: the real NeMo Guardrails ``self_check_input`` action (extra ``nemo``).

NeMo Guardrails 0.24.1 runs its own action: it renders its ``self_check_input`` task prompt (here
carrying the authorization policy; template ``nemo_self_check.j2``) with the operation and
evidence as the user input, calls the LLM, and parses the answer with its own output parser,
which reads the first two normalised words with the registered priority safe, unsafe, yes, no.
The LLM NeMo calls is the run's configured backend, through a small adapter, so deadlines,
retries and infrastructure records are the same as for every model reviewer.

NeMo's Boolean controls dispatch. The record keeps three cases apart (paper A.2):

* **recognised** -- one of the registered words was found: a decision (ALLOW when NeMo allows);
* **fallback** -- text without a registered word: NeMo blocks by fallback; recorded unavailable
  with reason ``native_fallback``;
* **no output** -- an empty answer: unavailable with reason ``empty``.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, ClassVar

from authpairs.backends.base import Backend, ChatRequest, ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.models import PublicCase
from authpairs.errors import AuthpairsError, MissingDependencyError, ReviewerError
from authpairs.review.guardrails.labels import finish_problem
from authpairs.review.guardrails.registry import GuardrailFactory
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.templates import render, template_sha256

TASK = "self_check_input"
PROMPT_TEMPLATE = "nemo_self_check.j2"
REGISTERED_WORDS = ("safe", "unsafe", "yes", "no")
"""NeMo's ``is_content_safe`` words, in its priority order."""
_ENDRAW = re.compile(r"\{%-?\s*endraw\s*-?%\}")


def _import_nemo() -> Any:
    try:
        import nemoguardrails
    except ImportError:
        raise MissingDependencyError("nemoguardrails", "nemo",
                                     "the nemo-self-check guardrail") from None
    return nemoguardrails


def jinja_literal(text: str) -> str:
    """``text`` wrapped so that NeMo's Jinja rendering reproduces it verbatim."""
    escaped = _ENDRAW.sub(lambda m: "{% endraw %}{{ " + repr(m.group(0)) + " }}{% raw %}", text)
    return "{% raw %}" + escaped + "{% endraw %}"


def recognised_word(text: str) -> str | None:
    """The registered word NeMo's parser acts on, or None when it falls back.

    Same normalisation as NeMo's ``is_content_safe``: lower-case, runs of non-word characters to
    one space, then the first two space-separated words, checked in priority order.
    """
    words = re.sub(r"\W+", " ", text.lower().strip()).split(" ")[:2]
    return next((word for word in REGISTERED_WORDS if word in words), None)


class NemoResponse(ChatResponse):
    """A backend response plus what NeMo's action decided with it."""

    native_allowed: bool | None = None


class _BackendLLM:
    """NeMo ``LLMModel`` adapter over an authpairs backend; remembers the last response."""

    def __init__(self, backend: Backend, sampling: SamplingConfig) -> None:
        self.backend = backend
        self.sampling = sampling
        self.response: ChatResponse | None = None
        self.sent: ChatRequest | None = None
        self.error: BaseException | None = None

    @property
    def model_name(self) -> str:
        return str(self.backend.describe().get("model", self.backend.name))

    @property
    def provider_name(self) -> str | None:
        return "authpairs"

    @property
    def provider_url(self) -> str | None:
        return None

    async def generate_async(self, prompt: Any, *, stop: list[str] | None = None,
                             **kwargs: Any) -> Any:
        from nemoguardrails.types import LLMResponse

        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            messages = [{"role": str(getattr(m.role, "value", m.role)), "content": m.content or ""}
                        for m in prompt]
        self.sent = ChatRequest(messages=messages)
        try:
            # The run's sampling settings apply (not NeMo's lowest temperature / 1024 tokens),
            # so the configuration file states every generation setting.
            self.response = await self.backend.complete(self.sent, self.sampling)
        except BaseException as exc:
            self.error = exc
            raise
        return LLMResponse(content=self.response.text or "",
                           finish_reason=self.response.finish_reason)

    async def stream_async(self, prompt: Any, *, stop: list[str] | None = None,
                           **kwargs: Any) -> Any:
        raise NotImplementedError("authpairs does not stream")
        yield  # pragma: no cover


class NemoSelfCheckReviewer:
    """Runs NeMo's ``self_check_input`` action for each case."""

    def __init__(self, backend: Backend, sampling: SamplingConfig) -> None:
        _import_nemo()
        self.backend = backend
        self.sampling = sampling
        self._inputs: dict[str, tuple[str, str]] = {}
        """Request hash -> (NeMo prompt content, user input), filled by :meth:`render`."""

    def _rails(self, prompt_content: str) -> tuple[Any, Any]:
        from nemoguardrails import RailsConfig
        from nemoguardrails.llm.taskmanager import LLMTaskManager

        with warnings.catch_warnings():
            # NeMo 0.24.1 warns about its own deprecated jailbreak-detection field, which this
            # configuration never sets.
            warnings.simplefilter("ignore", DeprecationWarning)
            config = RailsConfig.from_content(config={
                "models": [],
                "rails": {"input": {"flows": ["self check input"]}},
                "prompts": [{"task": TASK, "content": prompt_content}],
            })
            return config, LLMTaskManager(config)

    def render(self, case: PublicCase) -> ChatRequest:
        """NeMo's own rendering of its task prompt: exactly the request NeMo will send, so the
        recorded input hash is the backend's (replay works); the inputs are kept for answer."""
        context = case.model_dump(mode="json")
        policy = render("policy.j2", **context).rstrip("\n")
        prompt_content = render(PROMPT_TEMPLATE, policy_block=jinja_literal(policy))
        user_input = render("operation.j2", **context).rstrip("\n")
        _config, manager = self._rails(prompt_content)
        rendered = manager.render_task_prompt(task=TASK, context={"user_input": user_input})
        if not isinstance(rendered, str):
            raise ReviewerError(f"NeMo rendered the {TASK} prompt as {type(rendered).__name__}")
        request = ChatRequest(messages=[{"role": "user", "content": rendered}])
        self._inputs[request.sha256()] = (prompt_content, user_input)
        return request

    async def answer(self, request: ChatRequest) -> NemoResponse:
        """Invoke NeMo's real action; its LLM call goes to the configured backend."""
        from nemoguardrails.library.self_check.input_check.actions import self_check_input

        inputs = self._inputs.get(request.sha256())
        if inputs is None:
            raise ReviewerError("nemo-self-check answered a request it did not render")
        prompt_content, user_input = inputs
        config, manager = self._rails(prompt_content)
        llm = _BackendLLM(self.backend, self.sampling)
        try:
            outcome = await self_check_input(llms={}, llm_task_manager=manager, llm=llm,
                                             config=config, user_message=user_input)
        except Exception as exc:
            if isinstance(llm.error, AuthpairsError):
                raise llm.error from exc  # TransportError is retried; BackendError stops
            raise ReviewerError(f"NeMo self_check_input failed: {exc}") from exc
        allowed = str(getattr(outcome.decision, "value", outcome.decision)) == "allow"
        if llm.sent is not None and llm.sent.sha256() != request.sha256():
            raise ReviewerError("NeMo sent a different prompt than the one rendered and "
                                "recorded for this case")
        base = llm.response or ChatResponse(text=None, finish_reason="stop")
        return NemoResponse(**base.model_dump(), native_allowed=allowed)

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Recognised -> NeMo's Boolean; fallback and no output -> unavailable, kept apart."""
        problem = finish_problem(response.finish_reason)
        if problem is not None:
            return problem
        text = response.text or ""
        if not text.strip():
            return ReviewOutcome.unavailable(ReasonCode.EMPTY, "NeMo: no output")
        allowed = getattr(response, "native_allowed", None)
        word = recognised_word(text)
        if word is None:
            return ReviewOutcome.unavailable(
                ReasonCode.NATIVE_FALLBACK,
                f"NeMo fell back (native Boolean {'allow' if allowed else 'block'}): "
                f"{text.strip()[:40]!r}")
        if allowed is None:  # a replayed or foreign response: apply NeMo's own parser
            from nemoguardrails.llm.output_parsers import is_content_safe

            allowed = bool(is_content_safe(text)[0])
        return ReviewOutcome.decided(Decision.ALLOW if allowed else Decision.BLOCK)

    def template_hashes(self) -> dict[str, str]:
        """The self-check prompt and the shared policy/operation templates."""
        return template_sha256([PROMPT_TEMPLATE, "policy.j2", "operation.j2"])

    def describe(self) -> dict[str, Any]:
        """NeMo's version and the backend."""
        import importlib.metadata

        return {"guardrail": "nemo-self-check", "action": TASK,
                "nemoguardrails": importlib.metadata.version("nemoguardrails"),
                "backend": self.backend.describe()}


class NemoSelfCheckGuardrail(GuardrailFactory):
    """Factory of :class:`NemoSelfCheckReviewer` (registered as ``nemo-self-check``)."""

    output_contract: ClassVar[str] = (
        "NeMo self_check_input: first two normalised words, priority safe/unsafe/yes/no; "
        "recognised -> NeMo's Boolean, fallback or no output -> unavailable")
    needs_backend: ClassVar[bool] = True

    def build(self, name: str, options: dict[str, Any], backend: Backend | None,
              sampling: SamplingConfig) -> NemoSelfCheckReviewer:
        """Needs the configured backend; takes no options."""
        if backend is None:
            raise ReviewerError("nemo-self-check needs a model backend")
        if options:
            raise ReviewerError(f"nemo-self-check takes no guardrail_options, got "
                                f"{', '.join(sorted(options))}")
        return NemoSelfCheckReviewer(backend, sampling)
