"""A one-line hint when most answers of a run are unavailable for one reason.

The advice depends on the reviewer (:mod:`authpairs.report.reviewer_name`): a model behind a JSON
interface can switch interface or raise its output limit; a NeMo rails folder has its own task
settings; a Python function or an HTTP service calls no model, so no sampling or interface option
is ever offered for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authpairs.analysis.scoring import Score
from authpairs.report.reviewer_name import ReviewerName, name_reviewer

_JSON_ADVICE = {
    "length": "the answers hit the output token limit: raise --max-tokens (now {max_tokens}) "
              "or use --interface schema (constrained decoding keeps answers short)",
    "not_json": "the model did not answer in JSON: use --interface schema (constrained "
                "decoding) or a larger model",
    "extra_prose": "the model wrote prose around its JSON: use --interface schema or --interface "
                   "direct",
    "multiple_objects": "the model wrote several JSON objects: use --interface schema",
    "missing_field": "answers lacked required fields: use --interface schema, or --interface "
                     "direct (one field)",
    "extra_field": "answers had fields the interface does not define: use --interface schema",
    "wrong_type": "answer fields had the wrong type: use --interface schema",
    "invalid_value": "answer values were outside the allowed set: use --interface schema",
}
"""Advice for a model behind one of the JSON interfaces (direct, structured, schema)."""

_MODEL_ADVICE = {
    "length": "the answers hit the output token limit: raise --max-tokens (now {max_tokens})",
    "empty": "the model returned empty answers: check the model and its chat template",
    "filtered": "the server filtered the answers (content filter): try another model or server",
    "infrastructure": "the server could not be reached: check --base-url and re-run to retry",
}
"""Advice for any reviewer that calls a model."""

_NEMO_ADVICE = {
    "length": "the answers hit the output token limit before NeMo could read a word: raise "
              "--max-tokens (now {max_tokens}) or the self_check_input task's max_tokens in the "
              "rails folder",
    "native_fallback": "NeMo found none of safe/unsafe/yes/no in the first two words of the "
                       "answers: the self_check_input prompt should ask for Yes or No",
}
"""Advice for ``nemo-self-check``."""

_FUNCTION_ADVICE = {
    "guardrail_error": "the guardrail raised or returned something other than a Decision or a "
                       "string: see the records' output text ('authpairs export')",
    "infrastructure": "the guardrail did not answer in time (or could not be reached): re-run "
                      "to retry",
}
"""Advice for a guardrail that calls no model (a Python function, an HTTP service)."""

_PARSER_REASONS = ("no_label", "invalid_value", "not_json", "extra_prose", "missing_field",
                   "extra_field", "wrong_type", "multiple_objects", "empty")

_HTTP_ADVICE = {
    "infrastructure": "the guardrail service could not be reached or did not answer in time: "
                      "check its url (--guardrail-option url=...) and re-run to retry",
}

_GENERIC = "see the reason codes in docs/concepts.md"


_SCHEMA_BROKEN = ("the answers broke the JSON schema although decoding was constrained: check "
                  "that the server applies response_format (JSON-schema guided decoding)")


def _advice(name: ReviewerName, reason: str) -> str:
    if name.kind == "interface":
        if "--interface" not in name.options or reason not in _JSON_ADVICE:
            return _MODEL_ADVICE.get(reason, _GENERIC)
        if name.reviewer == "schema":  # never suggest the interface the run already used
            return _MODEL_ADVICE["length"] if reason == "length" else _SCHEMA_BROKEN
        if name.reviewer == "direct" and reason in ("extra_prose", "missing_field"):
            return _JSON_ADVICE[reason].split(":")[0] + ": use --interface schema"
        return _JSON_ADVICE[reason]
    if name.reviewer == "nemo-self-check":
        return _NEMO_ADVICE.get(reason) or _MODEL_ADVICE.get(reason, _GENERIC)
    if name.reviewer == "http" and reason in _HTTP_ADVICE:
        return _HTTP_ADVICE[reason]
    if reason in _FUNCTION_ADVICE and "--max-tokens" not in name.options:
        return _FUNCTION_ADVICE[reason]
    if reason in _PARSER_REASONS and "--max-tokens" not in name.options:
        return ("the guardrail's answers are not what its parser reads: return a Decision, or "
                "choose the parser with --guardrail-option parser=NAME")
    if "--max-tokens" in name.options:
        return _MODEL_ADVICE.get(reason, _GENERIC)
    return _GENERIC


def _limit(reviewer: Mapping[str, Any]) -> str:
    """The output limit the reviewer ran with, as the hint shows it."""
    options = reviewer.get("guardrail_options") or {}
    if (reviewer.get("guardrail") == "nemo-self-check" and options.get("config")
            and "max_tokens" not in (options.get("use_run_sampling") or [])):
        return "the rails task's"
    max_tokens = (reviewer.get("sampling") or {}).get("max_tokens")
    return "?" if max_tokens is None else str(max_tokens)


def unavailable_hint(score: Score, reviewer: Mapping[str, Any]) -> str | None:
    """A hint when one reason code accounts for more than half of all cases, else None.

    ``reviewer`` is the run's resolved reviewer configuration section; the advice names only
    options that apply to that reviewer. A baseline gets no hint (it answers no question).
    """
    if not score.n or not score.unavailable_by_reason:
        return None
    name = name_reviewer(reviewer)
    if name.kind == "baseline":
        return None
    reason, count = max(score.unavailable_by_reason.items(), key=lambda item: item[1])
    if 2 * count <= score.n:
        return None
    shown = _limit(reviewer)
    return (f"hint: {count}/{score.n} answers are unavailable ({reason}); "
            + _advice(name, reason).format(max_tokens=shown))
