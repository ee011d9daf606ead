"""Naming the reviewer of a run from its stored configuration, the same way in every view.

``authpairs runs``, ``authpairs score``, the HTML report and ``authpairs export`` all name a run's
reviewer with :func:`name_reviewer`: what reviewed (an interface, a guardrail's name or
``module:function``, a baseline), how it was asked and read, and which model it called -- none
for a Python function or an HTTP service, whatever backend section the configuration carries.
The end-of-run hints use the same name to offer only options that apply to the reviewer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

NO_MODEL = "-"
"""The model of a reviewer that calls none."""
JSON_INTERFACES = ("direct", "structured", "schema")
"""Interfaces that answer in authpairs' JSON and can stand in for each other (``--interface``)."""
MODEL_OPTIONS = ("--max-tokens", "--temperature", "--base-url", "--model")
"""``authpairs run`` options that change how a model is called."""


@dataclass(frozen=True)
class ReviewerName:
    """A run's reviewer, as every view names it."""

    kind: str
    """``interface``, ``guardrail`` or ``baseline``."""
    reviewer: str
    """The interface name, the guardrail's name or ``module:function``, or the baseline."""
    interface: str
    """How the reviewer is asked and its answer read (``-`` for a baseline)."""
    model: str
    """The model called (backend kind and model), or ``-`` when the reviewer calls none."""
    options: tuple[str, ...]
    """The ``authpairs run`` options that apply to this reviewer (for hints)."""

    @property
    def label(self) -> str:
        """One line: ``schema / local SmolLM2-135M (embedded)``, ``guardrail
        examples.guard:review / Python function, parser label``, ``baseline always-allow``."""
        if self.kind == "baseline":
            return f"baseline {self.reviewer}"
        if self.kind == "interface":
            parts = [self.interface]
        else:
            parts = [f"guardrail {self.reviewer}", self.interface]
        if self.model != NO_MODEL:
            parts.append(self.model)
        return " / ".join(parts)

    def to_dict(self) -> dict[str, str]:
        """Plain data for JSON exports."""
        return {"kind": self.kind, "reviewer": self.reviewer, "interface": self.interface,
                "model": self.model, "label": self.label}


def backend_label(backend: Mapping[str, Any]) -> str:
    """``kind model`` of a stored backend section, e.g. ``openai Qwen/Qwen3.5-9B``."""
    kind = str(backend.get("kind", "?"))
    if kind == "local":
        gguf = backend.get("gguf_path")
        model = backend.get("model") or (PurePath(str(gguf)).name if gguf
                                         else "SmolLM2-135M (embedded)")
    elif kind == "replay":
        model = f"of {backend.get('run_id', '?')}"
    elif kind == "scripted":
        model = str(backend.get("model") or backend.get("script") or "")
    else:
        model = str(backend.get("model") or "")
    return f"{kind} {model}".strip()


def _options_text(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items()))


def _guardrail(name: str, options: Mapping[str, Any], model: str,
               calls_model: bool | None) -> ReviewerName:
    if name == "nemo-self-check":
        sha = options.get("config_sha256")
        prompt = f"rails folder {str(sha)[:12]}" if sha else "built-in prompt"
        return ReviewerName("guardrail", name, f"NeMo self_check_input, {prompt}", model,
                            (*MODEL_OPTIONS, "--guardrail-option"))
    if name == "http":
        send = options.get("send", "case")
        how = f"POST {send} to {options.get('url', '?')}"
        if send == "prompt":
            how += f" (interface {options.get('interface', 'direct')})"
        return ReviewerName("guardrail", name, how, NO_MODEL, ("--guardrail-option",))
    if ":" in name:
        return ReviewerName("guardrail", name,
                            f"Python function, parser {options.get('parser', 'label')}",
                            NO_MODEL, ("--guardrail-option",))
    # A plugin: its description says whether it called the backend.
    how = f"plugin ({_options_text(options)})" if options else "plugin"
    if calls_model:
        return ReviewerName("guardrail", name, how, model,
                            (*MODEL_OPTIONS, "--guardrail-option"))
    return ReviewerName("guardrail", name, how, NO_MODEL if calls_model is False else "?",
                        ("--guardrail-option",))


def name_reviewer(reviewer: Mapping[str, Any],
                  described: Mapping[str, Any] | None = None) -> ReviewerName:
    """The name of the reviewer a resolved ``reviewer`` configuration section describes.

    ``described`` is the reviewer's own description stored with the run (``config.reviewer``),
    used only where the configuration cannot tell whether a plugin guardrail called a model.
    """
    baseline = reviewer.get("baseline")
    if baseline:
        return ReviewerName("baseline", str(baseline), NO_MODEL, NO_MODEL, ())
    model = backend_label(reviewer.get("backend") or {})
    guardrail = reviewer.get("guardrail")
    if guardrail:
        calls = None if described is None else "backend" in described
        return _guardrail(str(guardrail), reviewer.get("guardrail_options") or {}, model, calls)
    interface = str(reviewer.get("interface", "?"))
    options = reviewer.get("interface_options") or {}
    shown = f"{interface} ({_options_text(options)})" if options else interface
    takes = (*MODEL_OPTIONS, "--interface") if interface in JSON_INTERFACES else MODEL_OPTIONS
    return ReviewerName("interface", interface, shown, model, takes)


def name_run(config: Mapping[str, Any]) -> ReviewerName:
    """The reviewer of a stored run, from its ``RunInfo.config`` (``resolved`` + ``reviewer``)."""
    resolved = config.get("resolved")
    section = resolved.get("reviewer", {}) if isinstance(resolved, Mapping) else {}
    described = config.get("reviewer")
    return name_reviewer(section, described if isinstance(described, Mapping) else None)
