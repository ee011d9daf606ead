"""``nemo-self-check``: the real NeMo Guardrails ``self_check_input`` action (extra ``nemo``).

NeMo Guardrails 0.24.1 runs its own action: it renders its ``self_check_input`` task prompt with
the operation and evidence as the user input, calls the LLM, and parses the answer with its own
output parser, which reads the first two normalised words with the registered priority safe,
unsafe, yes, no. The LLM NeMo calls is the run's configured backend, through a small adapter, so
deadlines, retries and infrastructure records are the same as for every model reviewer.

Two sources of the task prompt:

* **built-in** (no options): authpairs' own prompt (template ``nemo_self_check.j2``, the
  authorization policy written into it); the run's sampling settings apply;
* **a rails folder** (``guardrail_options: {config: DIR}``): a NeMo user's own ``config.yml`` +
  ``prompts.yml``, loaded by NeMo's ``RailsConfig.from_path``. Its ``self_check_input`` prompt may
  use ``{{ user_input }}`` (the operation and evidence), ``{{ authorization_policy }}`` (the
  case's policy) and ``{{ public_case }}`` (the whole case as the direct, structured and schema
  interfaces show it: policy, request, evidence, effect). NeMo's task settings apply --
  ``stop`` and ``max_tokens`` of the task (NeMo's default 1024) and the folder's
  ``lowest_temperature`` -- unless the run's ``sampling`` states ``max_tokens`` /
  ``temperature`` (or ``guardrail_options.stop`` is given). The run
  configuration stores the folder's content hash (the identity, never the path) and which settings
  come from the run; the reviewer description records every value sent and where it came from.

NeMo's Boolean controls dispatch. The record keeps three cases apart (paper A.2):

* **recognised** -- one of the registered words was found: a decision (ALLOW when NeMo allows),
  also when the answer was cut at the token limit (NeMo parses a cut answer; the record keeps
  finish reason ``length`` beside the decision);
* **fallback** -- text without a registered word: NeMo blocks by fallback; recorded unavailable
  with reason ``native_fallback``;
* **no output** -- an empty answer: unavailable with reason ``empty`` (``length`` when the
  token limit was spent before any text, the case NeMo itself warns about).

NeMo's ``llm_call`` removes ``<think>`` blocks from the content before its parser reads it, when
the server reported no reasoning of its own (:func:`nemo_content`). authpairs reads the answer the
same way, live and in replay: the record keeps the answer as the server sent it, and the parser
sees what NeMo's parser saw. Runs recorded before (no rendering among the header's template hashes)
are audited as they were read then
(:class:`~authpairs.review.guardrails.earlier.EarlierNemoSelfCheck`).
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from authpairs.backends.base import Backend, ChatRequest, ChatResponse, preflight
from authpairs.backends.config import SamplingConfig
from authpairs.cases.canonical import sha256_hex
from authpairs.cases.models import PublicCase
from authpairs.errors import AuthpairsError, MissingDependencyError, ReviewerError
from authpairs.review.control_tokens import refuse_control_tokens
from authpairs.review.guardrails.registry import GuardrailFactory
from authpairs.review.guardrails.settings import VENDOR, Recommended, settings_record
from authpairs.review.interfaces import RENDERING_KEY
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import LENGTH_STOPS, finish_outcome, guarded, text_problem
from authpairs.review.templates import render, template_sha256

GUARDRAIL = "nemo-self-check"
TASK = "self_check_input"
FLOW = "self check input"
PROMPT_TEMPLATE = "nemo_self_check.j2"
REGISTERED_WORDS = ("safe", "unsafe", "yes", "no")
"""NeMo's ``is_content_safe`` words, in its priority order."""
NEMO_DEFAULT_MAX_TOKENS = 1024
"""The output limit NeMo's ``run_self_check_task`` uses when the task prompt sets none."""
RUN_SETTINGS = ("max_tokens", "temperature")
"""Task settings a run's ``sampling`` section can take over from the rails folder."""
POLICY_VARIABLE = "authorization_policy"
"""The prompt-context variable holding the case's policy in a rails folder's prompt."""
CASE_VARIABLE = "public_case"
"""The prompt-context variable holding the whole case as the JSON interfaces show it."""
OPTIONS = ("config", "config_sha256", "use_run_sampling", "stop")
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


def nemo_content(text: str, reasoning: str | None) -> str:
    """The content NeMo's output parser reads for a model answer ``text``: NeMo 0.24.1's
    ``llm_call`` keeps a server's separate ``reasoning`` as it is, and otherwise removes every
    complete ``<think>...</think>`` block and trims the rest (its
    ``_extract_and_remove_think_tags``, called here, so the two cannot drift apart)."""
    from nemoguardrails.llm.call import _extract_and_remove_think_tags
    from nemoguardrails.types import LLMResponse

    response = LLMResponse(content=text, reasoning=reasoning or None)
    if not response.reasoning:
        _extract_and_remove_think_tags(response)
    return str(response.content)


def rails_files(folder: Path) -> list[Path]:
    """The files of a rails folder that go into its content hash: every regular file below it,
    sorted, except hidden ones and ``__pycache__``."""
    return [path for path in sorted(folder.rglob("*")) if path.is_file() and not any(
        p.startswith(".") or p == "__pycache__" for p in path.relative_to(folder).parts)]


def rails_sha256(folder: str | Path) -> str:
    """SHA-256 over a rails folder's files (relative path and bytes of each), not its location."""
    root = Path(folder)
    if not root.is_dir():
        raise ReviewerError(f"nemo-self-check: rails folder '{folder}' is not a directory")
    digest = hashlib.sha256()
    for path in rails_files(root):
        name = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _messages(prompt: Any) -> list[dict[str, str]]:
    """Chat messages from what NeMo hands its LLM: a string (one user message) or messages
    (``ChatMessage`` objects, or the dicts its task manager renders)."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    from nemoguardrails.types import ChatMessage

    out = []
    for message in prompt:
        if isinstance(message, dict):
            message = ChatMessage.from_dict(message)
        out.append({"role": str(getattr(message.role, "value", message.role)),
                    "content": message.content if isinstance(message.content, str) else ""})
    return out


@dataclass(frozen=True)
class TaskSettings:
    """What NeMo's action asks for (``nemo``) and what is sent (``sent``), with where each sent
    value comes from (``sources``)."""

    nemo: dict[str, Any]
    sent: dict[str, Any]
    sources: dict[str, str]

    def describe(self) -> dict[str, Any]:
        """Every setting with the value sent and where it came from."""
        return {name: {"sent": self.sent[name], "nemo": self.nemo[name],
                       "from": self.sources[name]} for name in self.sent}

    def request(self, prompt: Any) -> ChatRequest:
        """The request of NeMo's rendered ``prompt`` (:func:`_messages`) with the stop sent."""
        stop = self.sent["stop"]
        return ChatRequest(messages=_messages(prompt), options={"stop": stop} if stop else None)


class NemoResponse(ChatResponse):
    """A backend response plus what NeMo's action decided with it."""

    native_allowed: bool | None = None


class _BackendLLM:
    """NeMo ``LLMModel`` adapter over an authpairs backend; remembers the last response."""

    def __init__(self, backend: Backend, sampling: SamplingConfig,
                 settings: TaskSettings) -> None:
        self.backend = backend
        self.sampling = sampling
        self.settings = settings
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

        asked = {"max_tokens": kwargs.get("max_tokens"), "temperature": kwargs.get("temperature"),
                 "stop": stop}
        if asked != self.settings.nemo:
            self.error = ReviewerError(f"NeMo asked for task settings {asked}, not the "
                                       f"recorded {self.settings.nemo}")
            raise self.error
        sent = self.settings.sent
        self.sent = self.settings.request(prompt)
        sampling = self.sampling.model_copy(
            update={"max_tokens": sent["max_tokens"], "temperature": sent["temperature"]})
        try:
            self.response = await self.backend.complete(self.sent, sampling)
        except BaseException as exc:
            self.error = exc
            raise
        # The server's reasoning goes with the content, as NeMo's own OpenAI client hands it
        # over (``reasoning_content``): llm_call then strips <think> blocks only without it.
        return LLMResponse(content=self.response.text or "",
                           reasoning=self.response.reasoning or None,
                           finish_reason=self.response.finish_reason)

    async def stream_async(self, prompt: Any, *, stop: list[str] | None = None,
                           **kwargs: Any) -> Any:
        raise NotImplementedError("authpairs does not stream")
        yield  # pragma: no cover


class RailsFolder:
    """A NeMo user's rails folder, loaded by NeMo and checked for what the action needs."""

    def __init__(self, folder: str | Path, expected_sha256: str | None = None) -> None:
        self.path = Path(folder)
        self.sha256 = rails_sha256(self.path)
        if expected_sha256 is not None and expected_sha256 != self.sha256:
            raise ReviewerError(
                f"nemo-self-check: rails folder '{folder}' changed since the run configuration "
                f"was resolved (content {self.sha256[:12]}, configured {expected_sha256[:12]})")
        self.files = [p.relative_to(self.path).as_posix() for p in rails_files(self.path)]
        self.config = self._load()
        from nemoguardrails.llm.prompts import get_prompt

        try:
            self.prompt = get_prompt(self.config, TASK)
        except ValueError:
            raise ReviewerError(f"nemo-self-check: rails folder '{folder}' has no "
                                f"'{TASK}' prompt (prompts.yml)") from None
        if self.prompt.output_parser not in (None, "is_content_safe"):
            raise ReviewerError(
                f"nemo-self-check: the '{TASK}' prompt in '{folder}' uses output parser "
                f"'{self.prompt.output_parser}'; authpairs records NeMo's is_content_safe words")

    def _load(self) -> Any:
        import yaml
        from nemoguardrails import RailsConfig

        for name in self.files:
            if name.endswith((".yml", ".yaml")):
                raw = yaml.safe_load((self.path / name).read_text(encoding="utf-8"))
                if isinstance(raw, dict) and raw.get("import_paths"):
                    raise ReviewerError(
                        f"nemo-self-check: {self.path / name} sets import_paths; the rails "
                        "folder's content hash would not cover the imported folders")
        try:
            with warnings.catch_warnings(action="ignore", category=DeprecationWarning):
                config = RailsConfig.from_path(str(self.path))
        except Exception as exc:
            raise ReviewerError(f"nemo-self-check: NeMo could not load the rails folder "
                                f"'{self.path}': {type(exc).__name__}: {exc}") from exc
        flows = list(getattr(config.rails.input, "flows", []) or [])
        if FLOW not in flows:
            raise ReviewerError(f"nemo-self-check: rails folder '{self.path}' does not list "
                                f"'{FLOW}' in rails.input.flows (found: {flows or 'none'})")
        return config

    def describe(self) -> dict[str, Any]:
        """Content hash, files, the prompt's hash and the models NeMo's config names."""
        content = self.prompt.content if self.prompt.content is not None else [
            m.model_dump(mode="json") for m in self.prompt.messages or []]
        return {"path": str(self.path), "config_sha256": self.sha256, "files": self.files,
                "prompt_sha256": sha256_hex(content),
                "models_not_used": [f"{m.type}: {m.engine}/{m.model}"
                                    for m in self.config.models]}


class NemoSelfCheckReviewer:
    """Runs NeMo's ``self_check_input`` action for each case."""

    def __init__(self, backend: Backend, sampling: SamplingConfig,
                 rails: RailsFolder | None = None, *,
                 from_run: tuple[str, ...] = RUN_SETTINGS,
                 stop: list[str] | None = None, stop_given: bool = False) -> None:
        _import_nemo()
        self.backend = backend
        self.sampling = sampling
        self.rails = rails
        if rails is None:
            # The built-in prompt: the run's settings, no stop (NeMo asks for its defaults).
            from nemoguardrails import RailsConfig

            nemo = {"max_tokens": NEMO_DEFAULT_MAX_TOKENS,
                    "temperature": RailsConfig.model_fields["lowest_temperature"].default,
                    "stop": None}
            from_run, stop_given = RUN_SETTINGS, False
        else:  # what NeMo's action asks its LLM for with the folder's task
            nemo = {"max_tokens": rails.prompt.max_tokens or NEMO_DEFAULT_MAX_TOKENS,
                    "temperature": rails.config.lowest_temperature, "stop": rails.prompt.stop}
        sent = dict(nemo)
        sources = dict.fromkeys(nemo, "NeMo task")
        for name in from_run:
            sent[name] = getattr(sampling, name)
            sources[name] = "run sampling"
        if stop_given:
            sent["stop"] = stop
            sources["stop"] = "guardrail_options.stop"
        self.settings = TaskSettings(nemo=nemo, sent=sent, sources=sources)
        self._inputs: dict[str, tuple[str, dict[str, str], str]] = {}
        """Request hash -> (built-in prompt content, rails prompt variables, user input)."""

    def _task(self, content: str, variables: dict[str, str]) -> tuple[Any, Any]:
        """NeMo's config and a task manager of its own for one case: the built-in prompt
        ``content``, or a rails folder's prompt with the case's ``variables`` as NeMo prompt
        context."""
        from nemoguardrails import RailsConfig
        from nemoguardrails.llm.taskmanager import LLMTaskManager

        if self.rails is None:
            # NeMo 0.24.1 warns about its own deprecated jailbreak-detection field, which this
            # configuration never sets.
            with warnings.catch_warnings(action="ignore", category=DeprecationWarning):
                config = RailsConfig.from_content(config={
                    "models": [],
                    "rails": {"input": {"flows": [FLOW]}},
                    "prompts": [{"task": TASK, "content": content}],
                })
                return config, LLMTaskManager(config)
        manager = LLMTaskManager(self.rails.config)
        for name, value in variables.items():
            manager.register_prompt_context(name, value)
        return self.rails.config, manager

    def render(self, case: PublicCase) -> ChatRequest:
        """NeMo's own rendering of its task prompt: exactly the request NeMo will send, so the
        recorded input hash is the backend's (replay works); the inputs are kept for answer.
        The prompt goes to the server as chat messages it templates and tokenises, so a case
        whose public text spells a control token is refused."""
        refuse_control_tokens(GUARDRAIL, case)
        return self.task_request(case)

    def task_request(self, case: PublicCase) -> ChatRequest:
        """NeMo's rendering of its task prompt for ``case`` as the request it will send (the
        inputs kept for :meth:`answer`), whatever the case's text spells."""
        context = case.model_dump(mode="json")
        policy = render("policy.j2", **context).rstrip("\n")
        user_input = render("operation.j2", **context).rstrip("\n")
        if self.rails is None:
            content, variables = render(PROMPT_TEMPLATE, policy_block=jinja_literal(policy)), {}
        else:
            content = ""
            variables = {POLICY_VARIABLE: policy,
                         CASE_VARIABLE: render("case.j2", **context).rstrip("\n")}
        _config, manager = self._task(content, variables)
        try:
            rendered = manager.render_task_prompt(task=TASK, context={"user_input": user_input})
        except Exception as exc:  # e.g. the prompt's max_length, a template error
            raise ReviewerError(f"NeMo could not render the {TASK} prompt: "
                                f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(rendered, str | list):
            raise ReviewerError(f"NeMo rendered the {TASK} prompt as {type(rendered).__name__}")
        request = self.settings.request(rendered)
        self._inputs[request.sha256()] = (content, variables, user_input)
        return request

    async def preflight(self) -> None:
        """Check the model's endpoints before a run (the backend NeMo's call goes to)."""
        await preflight([self.backend])

    async def answer(self, request: ChatRequest) -> NemoResponse:
        """Invoke NeMo's real action; its LLM call goes to the configured backend."""
        from nemoguardrails.library.self_check.input_check.actions import self_check_input

        inputs = self._inputs.get(request.sha256())
        if inputs is None:
            raise ReviewerError("nemo-self-check answered a request it did not render")
        content, variables, user_input = inputs
        config, manager = self._task(content, variables)
        llm = _BackendLLM(self.backend, self.sampling, self.settings)
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
        """Recognised -> NeMo's Boolean (a cut answer too); fallback and no output ->
        unavailable, kept apart."""
        finish = response.finish_reason
        stopped = finish_outcome(finish, length_ok=True)
        if stopped is not None:
            return stopped
        cut = finish in LENGTH_STOPS
        text = response.text or ""
        problem = text_problem(text)
        if problem is not None:
            return problem
        if not text.strip():
            if cut:
                return ReviewOutcome.unavailable(
                    ReasonCode.LENGTH, "NeMo: no output before the token limit")
            return ReviewOutcome.unavailable(ReasonCode.EMPTY, "NeMo: no output")
        allowed = getattr(response, "native_allowed", None)
        content = self.parsed_content(text, response.reasoning)
        if isinstance(content, ReviewOutcome):
            return content
        word = recognised_word(content)
        if word is None:
            shown = content.strip()[:40] if content.strip() else "nothing after the <think> block"
            return ReviewOutcome.unavailable(
                ReasonCode.NATIVE_FALLBACK,
                f"NeMo fell back (native Boolean {'allow' if allowed else 'block'}): "
                f"{shown!r}")
        if allowed is None:  # a replayed or foreign response: apply NeMo's own parser
            from nemoguardrails.llm.output_parsers import is_content_safe

            verdict = guarded(lambda: bool(is_content_safe(content)[0]), "NeMo is_content_safe")
            if isinstance(verdict, ReviewOutcome):
                return verdict
            allowed = verdict
        outcome = ReviewOutcome.decided(Decision.ALLOW if allowed else Decision.BLOCK)
        if cut:
            return outcome.model_copy(update={
                "detail": f"NeMo recognised {word!r} in an answer cut at the token limit"})
        return outcome

    def parsed_content(self, text: str, reasoning: str | None) -> str | ReviewOutcome:
        """What NeMo's output parser reads of an answer (:func:`nemo_content`), or the
        unavailable outcome when NeMo's own code fails on it."""
        return guarded(lambda: nemo_content(text, reasoning), "NeMo llm_call")

    def rendering(self) -> str | None:
        """``<think>`` blocks read as NeMo's ``llm_call`` reads them, and a case that spells a
        control token refused."""
        return "nemo-self-check 2: <think> read as NeMo's llm_call reads it"

    def as_recorded(self, template_hashes: dict[str, str]) -> NemoSelfCheckReviewer:
        """A header without :meth:`rendering`'s name was written before ``<think>`` handling:
        its records are re-checked by
        :class:`~authpairs.review.guardrails.earlier.EarlierNemoSelfCheck`."""
        if RENDERING_KEY in template_hashes:
            return self
        from authpairs.review.guardrails.earlier import EarlierNemoSelfCheck

        return EarlierNemoSelfCheck(self)

    def template_hashes(self) -> dict[str, str]:
        """The self-check prompt (built-in template or the rails folder), the shared
        policy/operation templates and the :meth:`rendering`, if any."""
        if self.rails is None:
            hashes = template_sha256([PROMPT_TEMPLATE, "policy.j2", "operation.j2"])
        else:
            hashes = {"nemo_rails": self.rails.sha256,
                      **template_sha256(["policy.j2", "operation.j2", "case.j2"])}
        rendering = self.rendering()
        if rendering is not None:
            hashes[RENDERING_KEY] = rendering
        return hashes

    def describe(self) -> dict[str, Any]:
        """NeMo's version, the prompt's source, every task setting sent and the backend."""
        import importlib.metadata

        return {"guardrail": GUARDRAIL, "action": TASK,
                "nemoguardrails": importlib.metadata.version("nemoguardrails"),
                "prompt": PROMPT_TEMPLATE if self.rails is None else "rails folder",
                **({} if self.rails is None else {"rails": self.rails.describe()}),
                "task_settings": self.settings.describe(),
                "settings": self.settings_record(),
                "backend": self.backend.describe()}

    def settings_record(self) -> dict[str, Any] | None:
        """The sampling sent against NeMo's own task settings (the vendor's, for this prompt)
        and the paper's, as the run header records it for every guardrail."""
        nemo = self.settings.nemo
        vendor = VENDOR[GUARDRAIL]
        asked = Recommended(vendor.label, vendor.source,
                            {"temperature": nemo["temperature"], "max_tokens": nemo["max_tokens"]})
        sent = self.settings.sent
        used = {"temperature": sent["temperature"], "top_p": self.sampling.top_p,
                "max_tokens": sent["max_tokens"]}
        return settings_record(GUARDRAIL, used, vendor=asked)


class NemoSelfCheckGuardrail(GuardrailFactory):
    """Factory of :class:`NemoSelfCheckReviewer` (registered as ``nemo-self-check``)."""

    output_contract: ClassVar[str] = (
        "NeMo self_check_input: first two normalised words, priority safe/unsafe/yes/no; "
        "recognised -> NeMo's Boolean (a cut answer too), fallback or no output -> unavailable")
    needs_backend: ClassVar[bool] = True

    def resolve(self, options: dict[str, Any], sampling: SamplingConfig) -> dict[str, Any]:
        """With a rails folder (``config``): its content hash and which task settings the
        run's sampling takes over (those the run states), so the stored configuration says what
        will run. Without one: no options."""
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise ReviewerError(f"nemo-self-check: unknown guardrail_options "
                                f"{', '.join(sorted(unknown))} (known: {', '.join(OPTIONS)})")
        if "config" not in options:
            if options:
                raise ReviewerError(f"nemo-self-check: guardrail_options "
                                    f"{', '.join(sorted(options))} need 'config' (a rails folder)")
            return {}
        out = dict(options)
        if not isinstance(out["config"], str) or not out["config"]:
            raise ReviewerError("nemo-self-check: guardrail_options.config must be a folder path")
        if "config_sha256" not in out:
            out["config_sha256"] = rails_sha256(out["config"])
        chosen = out.setdefault("use_run_sampling",
                                [n for n in RUN_SETTINGS if n in sampling.model_fields_set])
        if not isinstance(chosen, list) or not set(chosen) <= set(RUN_SETTINGS):
            raise ReviewerError(f"nemo-self-check: use_run_sampling must list some of "
                                f"{', '.join(RUN_SETTINGS)}, got {chosen!r}")
        out["use_run_sampling"] = [n for n in RUN_SETTINGS if n in chosen]
        stop = out.get("stop")
        if "stop" in out and not (stop is None or (isinstance(stop, list)
                                                  and all(isinstance(s, str) for s in stop))):
            raise ReviewerError(f"nemo-self-check: guardrail_options.stop must be a list of "
                                f"strings or null, got {stop!r}")
        return out

    def identity_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options without the rails folder's path (its content hash stays)."""
        return {k: v for k, v in options.items() if k != "config" or "config_sha256" not in options}

    def build(self, name: str, options: dict[str, Any], backend: Backend | None,
              sampling: SamplingConfig) -> NemoSelfCheckReviewer:
        """Needs the configured backend; options: ``config`` (a rails folder) and what
        :meth:`resolve` adds (``config_sha256``, ``use_run_sampling``), ``stop``."""
        if backend is None:
            raise ReviewerError("nemo-self-check needs a model backend")
        resolved = self.resolve(options, sampling)
        if not resolved:
            return NemoSelfCheckReviewer(backend, sampling)
        _import_nemo()
        rails = RailsFolder(resolved["config"], resolved["config_sha256"])
        return NemoSelfCheckReviewer(backend, sampling, rails,
                                     from_run=tuple(resolved["use_run_sampling"]),
                                     stop=resolved.get("stop"), stop_given="stop" in resolved)
