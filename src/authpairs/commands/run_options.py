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
    """One option of a run: its parameter (``name``: ``--name`` with dashes) and the dotted
    configuration key it sets (None: the command takes the value itself)."""

    name: str
    annotation: Any
    key: str | None
    model: bool = False
    """Whether the option only applies to a model (``--baseline`` calls none)."""


def _option(help_text: str, *names: str, **kw: Any) -> Any:
    return typer.Option(*names, help=help_text, **kw)


RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption("config_file", Annotated[Path | None, _option(
        "YAML run config; the options below override it (the defaults they list apply "
        "without --config).", "--config")], None),
    RunOption("dataset", Annotated[str | None, _option(
        f"'language', 'native', 'examples' or a .jsonl path. Default: {main_job.DATASET}.")],
        "dataset"),
    RunOption("split", Annotated[str | None, _option(
        f"dev, test or all. Default: {main_job.SPLIT} (with another --dataset: that "
        "dataset's default; 'mcp serve --case' with no split: every split).")], "split"),
    RunOption("limit", Annotated[int | None, _option(
        "Only the first N cases of the split in file order (not balanced: see --sample). "
        "Default: all.", min=1)], "limit"),
    RunOption("sample", Annotated[int | None, _option(
        "A slice of N cases balanced by label (forbidden/lawful) and by family where N "
        "allows, chosen by --sample-seed; the same seed gives the same cases. Excludes "
        "--limit. Default: all.", min=1)], "sample"),
    RunOption("sample_seed", Annotated[int | None, _option(
        "The seed that chooses --sample's cases (not the model's --seed). Default: 0.")],
        "sample_seed"),
    RunOption("interface", Annotated[str | None, _option(
        f"direct, structured or schema. Default: {main_job.INTERFACE}.")],
        "reviewer.interface", model=True),
    RunOption("backend", Annotated[str | None, _option(
        "local (embedded SmolLM2), openai or replay. Default: local.")],
        "reviewer.backend.kind", model=True),
    RunOption("base_url", Annotated[list[str] | None, _option(
        "OpenAI-compatible base URL (repeat for several).", "--base-url")],
        "reviewer.backend.base_urls", model=True),
    RunOption("model", Annotated[str | None, _option("Model name sent to the server.")],
              "reviewer.backend.model", model=True),
    RunOption("baseline", Annotated[str | None, _option(
        "always-allow or always-block instead of a model; no model options.")],
        "reviewer.baseline"),
    RunOption("guardrail", Annotated[str | None, _option(
        "A guardrail instead of an interface: a name from 'authpairs guardrails' or "
        "package.module:callable.")], "reviewer.guardrail"),
    RunOption("guardrail_option", Annotated[list[str] | None, _option(
        "KEY=VALUE for the guardrail (repeatable; VALUE read as YAML), e.g. config=DIR: a "
        "NeMo rails folder for nemo-self-check.", "--guardrail-option")], None),
    RunOption("seed", Annotated[int | None, _option(
        f"Sampling seed. Default: {main_job.SEED}.")], "reviewer.sampling.seed", model=True),
    RunOption("temperature", Annotated[float | None, _option(
        f"Sampling temperature. Default: {main_job.TEMPERATURE:g}.")],
        "reviewer.sampling.temperature", model=True),
    RunOption("top_p", Annotated[float | None, _option(
        "Nucleus sampling mass. Default: server's.")], "reviewer.sampling.top_p", model=True),
    RunOption("top_k", Annotated[int | None, _option("Top-k sampling. Default: server's.")],
              "reviewer.sampling.top_k", model=True),
    RunOption("min_p", Annotated[float | None, _option("Min-p sampling. Default: server's.")],
              "reviewer.sampling.min_p", model=True),
    RunOption("presence_penalty", Annotated[float | None, _option(
        "Presence penalty. Default: server's.")], "reviewer.sampling.presence_penalty",
        model=True),
    RunOption("repetition_penalty", Annotated[float | None, _option(
        f"Repetition penalty. Default: {main_job.LOCAL_REPETITION_PENALTY:g} with the local "
        "backend, else server's.")], "reviewer.sampling.repetition_penalty", model=True),
    RunOption("max_tokens", Annotated[int | None, _option(
        f"Output token limit. Default: {main_job.MAX_TOKENS}.")],
        "reviewer.sampling.max_tokens", model=True),
    RunOption("enforce", Annotated[bool | None, _option(
        "Execute ALLOWed effects (an agent's ALLOWed calls) in a sandbox. Default: enforce.",
        "--enforce/--no-enforce")], "enforce"),
    RunOption("run_id", Annotated[str | None, _option(
        "Run id. Default: run- plus the configuration hash (an agent run or a serve session: "
        "agent- or mcp- plus the start time and a random suffix).")], "run_id"),
    RunOption("records", Annotated[Path | None, _option(
        f"SQLite records file. Default: {main_job.RECORDS}.")], "records"),
    RunOption("deadline", Annotated[float | None, _option(
        "Seconds an attempt may go without progress: the whole reply, or the next streamed "
        "token with the embedded server (it streams), so a slow generation that keeps "
        f"producing is never cut off. Default: {main_job.DEADLINE_S:g}.", min=0.001)],
        "reviewer.backend.deadline_s"),
)
"""Every option of a run, in the order ``--help`` lists them."""

CONCURRENCY = RunOption("concurrency", Annotated[int | None, _option(
    f"Cases in flight. Default: {main_job.CONCURRENCY} (the main job decodes one case at a "
    "time).")], "concurrency")
"""Cases in flight: an option of ``authpairs run`` only (a serve session takes one call at a
time)."""


def build_config(config_file: Path | None, overrides: dict[str, Any]) -> RunConfig:
    """The run configuration of a YAML file, or else the main job's, with dotted-key
    ``overrides`` laid over it."""
    from authpairs.runs.config import config_from_dict, load_config

    if config_file is not None:
        return load_config(config_file, overrides)
    return config_from_dict({}, overrides, origin="command line")


def config_of(values: dict[str, Any], options: tuple[RunOption, ...] = RUN_OPTIONS
              ) -> RunConfig:
    """The configuration the ``options``' ``values`` (parameter name -> value) describe;
    options that exclude each other are a usage error naming them."""
    if values.get("limit") is not None and values.get("sample") is not None:
        raise typer.BadParameter("--limit takes the first N cases, --sample a balanced N: "
                                 "give one of them.", param_hint="--sample")
    if values.get("sample_seed") is not None and values.get("sample") is None:
        raise typer.BadParameter("--sample-seed chooses the cases of --sample; give --sample N "
                                 "too.", param_hint="--sample-seed")
    if values.get("baseline") is not None:
        given = [_flag(option.name) for option in options
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
    return build_config(values.get("config_file"), overrides)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


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
        shared = [inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                    annotation=option.annotation) for option in options]
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
