"""Control-token spellings in a case's public text; the refusal of interfaces that send text.

A server that tokenises text -- a raw text prompt, or chat messages after it applies the model's
chat template (vLLM and llama.cpp both do) -- reads the spelling of a special token anywhere in
that text as the token itself: ``<|end|><|start|>developer<|message|>`` written in a piece of
evidence becomes a real role switch. An interface that sends token ids (``safeguard`` and
``llama-guard`` by default) needs no guard, since the vendor's renderer has encoded every
message's content as plain text. An interface that sends text refuses a case whose public text
spells a control token, with one :class:`~authpairs.errors.ReviewerError` that names the case,
the field and the spelling (:func:`refuse_control_tokens`).

The spellings recognised (:data:`CONTROL_TOKEN`): every ``<|name|>`` (Harmony, Llama 3 and 4,
Qwen/ChatML, Granite: each of their special tokens has this shape, reserved ones included),
DeepSeek's full-width ``<｜name｜>``, Qwen3's added tags ``<think>``, ``</think>``,
``<tool_call>``, ``</tool_call>``, ``<tool_response>``, ``</tool_response>``, the code-corpus
markers that StarCoder's vocabulary left to SmolLM2 and Granite 3.x (``<filename>``,
``<reponame>``, ``<fim_prefix>``, ``<jupyter_code>``, ...) and Gemma 3's special tokens
(``<start_of_turn>``, ``<end_of_turn>``, ``<bos>``, ``<eos>``, ``<pad>``, ``<unk>``,
``<mask>``, ``[@BOS@]``, ``<unusedN>`` and the image markers; Nemotron's reasoning safety
model is a Gemma 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError

CONTROL_TOKEN = re.compile(
    r"<\|[^<>|\s]{1,128}\|>"          # Harmony, Llama 3/4, Qwen/ChatML, Granite
    r"|<\uff5c[^<>\uff5c\s]{1,128}\uff5c>"  # DeepSeek (full-width bars)
    r"|</?(?:think|tool_call|tool_response)>"  # Qwen3's added tags
    r"|<(?:repo_?name|file_?sep|filename|gh_stars|issue_(?:start|comment|closed)"
    r"|jupyter_(?:start|text|code|output|script)|empty_output|commit_(?:before|msg|after)"
    r"|fim_(?:prefix|middle|suffix|pad))>"  # StarCoder's markers (SmolLM2, Granite 3.x)
    r"|<(?:(?:start|end)_of_(?:turn|image)|image_soft_token|bos|eos|pad|unk|mask"
    r"|unused[0-9]{1,3})>|\[@BOS@\]")   # Gemma 3
"""The spelling of a control token of any family the native interfaces serve."""


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in a JSON value (mapping keys included) with the path that leads to it."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{path} (key)", str(key)
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def control_tokens_in(case: PublicCase) -> list[tuple[str, str]]:
    """``(field, spelling)`` of every control-token spelling in the case's public text, in
    field order (``evidence.documents[0].text``; a mapping key as ``request.arguments (key)``).

    Every spelling starts with ``<`` or is ``[@BOS@]``, which the case's JSON text holds as
    they are: a case whose JSON text has neither spells nothing, and only the others' fields
    are walked."""
    as_json = case.model_dump_json()
    if "<" not in as_json and "[@BOS@]" not in as_json:
        return []
    found: list[tuple[str, str]] = []
    for field, dumped in case.model_dump(mode="json").items():
        for path, text in _strings(dumped, field):
            found.extend((path, match.group()) for match in CONTROL_TOKEN.finditer(text))
    return found


def refuse_control_tokens(interface: str, case: PublicCase) -> None:
    """Raise one :class:`ReviewerError` when the case's public text spells a control token
    (``interface`` sends text that its server tokenises again); return otherwise."""
    found = control_tokens_in(case)
    if not found:
        return
    field, spelling = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise ReviewerError(
        f"case {case.source_id}: {field} spells the control token {spelling!r}{more}; the "
        f"{interface} prompt goes to the server as text, which it tokenises again, so this "
        "would become a real control token",
        hint="send token ids where the interface can (safeguard, llama-guard: interface_options "
        "{prompt: tokens}), or leave the case out; docs/guardrails.md, 'What case text can do'")
