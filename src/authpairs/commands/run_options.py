"""The options of a run, declared once for ``authpairs run`` (``--agent`` too) and ``authpairs
mcp serve``: the configuration file, the cases, the reviewer, enforcement and the records.

Each option is one :class:`RunOption`: its command-line parameter and the configuration key it
sets. :func:`with_run_options` adds every one of them to a command, which is called with the
:class:`~authpairs.runs.config.RunConfig` they describe (``--config`` with the options laid
over it, or else the main job with them) instead of the options themselves; an option with no
key is handed to the command as it is. A new option added to :data:`RUN_OPTIONS` is an option
of every such command. The defaults the help states are the main job's
(:mod:`authpairs.main_job`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import authpairs.main_job as main_job

if TYPE_CHECKING:
    from authpairs.runs.config import RunConfig


@dataclass(frozen=True)
class RunOption:
    """One option of a run: ``--name`` (dashes for underscores, or ``flags``), its value type,
    help, and the dotted configuration key it sets (None: the command takes the value)."""

    name: str
    key: str | None
    type: Any
    help: str
    flags: tuple[str, ...] = ()
    model: bool = False
    """Whether the option only applies to a model (``--baseline`` calls none)."""
    minimum: float | None = None

    def parameter(self) -> inspect.Parameter:
        """The command parameter typer reads: ``--name``, default None (not given)."""
        option = typer.Option(*self.flags, help=self.help, min=self.minimum)
        return inspect.Parameter(self.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[self.type | None, option])


_SAMPLING = "reviewer.sampling."
RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption("config_file", None, Path, "YAML run config; the options below override it (the "
              "defaults they list apply without --config).", ("--config",)),
    RunOption("dataset", "dataset", str, "'language', 'native', 'examples' or a .jsonl path. "
              f"Default: {main_job.DATASET}."),
    RunOption("split", "split", str, f"dev, test or all. Default: {main_job.SPLIT} (with "
              "another --dataset: that dataset's default; 'mcp serve --case' with no split: "
              "every split)."),
    RunOption("limit", "limit", int, "Only the first N cases of the split in file order (not "
              "balanced: see --sample). Default: all.", minimum=1),
    RunOption("sample", "sample", int, "A slice of N cases balanced by label "
              "(forbidden/lawful) and by family where N allows, chosen by --sample-seed; the "
              "same seed gives the same cases. Excludes --limit. Default: all.",
              minimum=1),
    RunOption("sample_seed", "sample_seed", int, "The seed that chooses --sample's cases (not "
              f"the model's --seed). Default: {main_job.SAMPLE_SEED}."),
    RunOption("interface", "reviewer.interface", str, "direct, structured or schema. Default: "
              f"{main_job.INTERFACE}.", model=True),
    RunOption("backend", "reviewer.backend.kind", str, "local (embedded SmolLM2), openai or "
              "replay. Default: local.", model=True),
    RunOption("base_url", "reviewer.backend.base_urls", list[str], "OpenAI-compatible base URL "
              "(repeat for several).", ("--base-url",), model=True),
    RunOption("model", "reviewer.backend.model", str, "Model name sent to the server.",
              model=True),
    RunOption("baseline", "reviewer.baseline", str, "always-allow or always-block instead of a "
              "model; no model options."),
    RunOption("guardrail", "reviewer.guardrail", str, "A guardrail instead of an interface: a "
              "name from 'authpairs guardrails' or package.module:callable."),
    RunOption("guardrail_option", None, list[str], "KEY=VALUE for the guardrail (repeatable; "
              "VALUE read as YAML), e.g. config=DIR: a NeMo rails folder for nemo-self-check.",
              ("--guardrail-option",)),
    RunOption("seed", _SAMPLING + "seed", int, f"Sampling seed. Default: {main_job.SEED}.",
              model=True),
    RunOption("temperature", _SAMPLING + "temperature", float, "Sampling temperature. Default: "
              f"{main_job.TEMPERATURE:g}.", model=True),
    RunOption("top_p", _SAMPLING + "top_p", float, "Nucleus sampling mass. Default: server's.",
              model=True),
    RunOption("top_k", _SAMPLING + "top_k", int, "Top-k sampling. Default: server's.",
              model=True),
    RunOption("min_p", _SAMPLING + "min_p", float, "Min-p sampling. Default: server's.",
              model=True),
    RunOption("presence_penalty", _SAMPLING + "presence_penalty", float, "Presence penalty. "
              "Default: server's.", model=True),
    RunOption("repetition_penalty", _SAMPLING + "repetition_penalty", float, "Repetition "
              f"penalty. Default: {main_job.LOCAL_REPETITION_PENALTY:g} with the local backend, "
              "else server's.", model=True),
    RunOption("max_tokens", _SAMPLING + "max_tokens", int, "Output token limit. Default: "
              f"{main_job.MAX_TOKENS}.", model=True),
    RunOption("enforce", "enforce", bool, "Execute ALLOWed effects (an agent's ALLOWed calls) "
              f"in a sandbox. Default: --{'' if main_job.ENFORCE else 'no-'}enforce.",
              ("--enforce/--no-enforce",)),
    RunOption("run_id", "run_id", str, "Run id. Default: run- plus the configuration hash (an "
              "agent run or a serve session: agent- or mcp- plus the start time and a random "
              "suffix)."),
    RunOption("records", "records", Path, f"SQLite records file. Default: {main_job.RECORDS}."),
    RunOption("preflight", "preflight", bool, "Check every endpoint (model server, HTTP "
              "guardrail, agent model) once before the first case: reachable, the model served. "
              "--no-preflight for a server without a models endpoint. Default: "
              f"--{'' if main_job.PREFLIGHT else 'no-'}preflight.",
              ("--preflight/--no-preflight",)),
    RunOption("deadline", "reviewer.backend.deadline_s", float,
              f"{main_job.DEADLINE_HELP} Default: {main_job.DEADLINE_S:g}.", minimum=0.001),
)
"""Every option of a run, in the order ``--help`` lists them."""

CONCURRENCY = RunOption("concurrency", "concurrency", int, "Cases in flight (an --agent run "
                        "takes its cases one after another). Default: "
                        f"{main_job.CONCURRENCY} (the main job decodes one case at a time).",
                        minimum=1)
"""Cases in flight: an option of ``authpairs run`` only (a serve session takes one call at a
time, an agent run one case at a time)."""


def config_of(values: dict[str, Any], options: tuple[RunOption, ...] = RUN_OPTIONS
              ) -> RunConfig:
    """The configuration the ``options``' ``values`` (parameter name -> value) describe: the
    ``config_file``'s, or else the main job's, with the options laid over it; options that
    exclude each other are a usage error naming them."""
    from authpairs.runs.config import config_from_dict, load_config

    if values.get("limit") is not None and values.get("sample") is not None:
        raise typer.BadParameter("--limit takes the first N cases, --sample a balanced N: "
                                 "give one of them.", param_hint="--sample")
    if values.get("sample_seed") is not None and values.get("sample") is None:
        raise typer.BadParameter("--sample-seed chooses the cases of --sample; give --sample N "
                                 "too.", param_hint="--sample-seed")
    if values.get("baseline") is not None:
        given = ["--" + option.name.replace("_", "-") for option in options
                 if option.model and values.get(option.name) is not None]
        if given:
            raise typer.BadParameter(
                f"{', '.join(given)} only apply to a model; --baseline {values['baseline']} "
                "calls no model. Drop one of them.", param_hint="--baseline")
    overrides = {option.key: str(value) if isinstance(value, Path) else value
                 for option in options
                 if option.key is not None and (value := values.get(option.name)) is not None}
    if values.get("guardrail_option"):
        from authpairs.review.guardrails.registry import option_overrides

        overrides.update(option_overrides(values["guardrail_option"]))
    if values.get("config_file") is not None:
        return load_config(values["config_file"], overrides)
    return config_from_dict({}, overrides, origin="command line")


_CONSUMED = {"config_file", "guardrail_option"}
"""Options without a key that :func:`config_of` reads itself."""


def _evaluated(annotation: Any, command: Callable[..., None]) -> Any:
    """An annotation as typer reads it: evaluated in the command's module when it is a string
    (``from __future__ import annotations``); ``config``'s type is never evaluated, so the
    command's module need not import the configuration model."""
    return eval(annotation, command.__globals__) if isinstance(annotation, str) else annotation


def with_run_options(*extra: RunOption) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator adding every run option (and ``extra`` ones) to a command's parameters,
    before its own; the command is called with ``config=`` the :class:`RunConfig` they
    describe, its own parameters, and by name each option that sets no configuration key (and
    that :func:`config_of` does not read)."""
    options = (*RUN_OPTIONS, *extra)

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = inspect.signature(command)
        shared = [option.parameter() for option in options]
        kept = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY,
                          annotation=_evaluated(p.annotation, command))
                for p in own.parameters.values() if p.name != "config"]

        @functools.wraps(command)
        def with_config(**values: Any) -> None:
            given = {option.name: values.pop(option.name) for option in options}
            passed = {option.name: given[option.name] for option in options
                      if option.key is None and option.name not in _CONSUMED}
            command(config=config_of(given, options), **passed, **values)

        parameters = [*shared, *kept]
        with_config.__signature__ = own.replace(  # type: ignore[attr-defined]
            parameters=parameters, return_annotation=None)
        with_config.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_config

    return decorate
