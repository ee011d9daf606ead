"""A one-line hint when most answers of a run are unavailable for one reason."""

from __future__ import annotations

from authpairs.analysis.scoring import Score

_ADVICE = {
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
    "empty": "the model returned empty answers: check the model and its chat template",
    "filtered": "the server filtered the answers (content filter): try another model or server",
    "infrastructure": "the server could not be reached: check --base-url and re-run to retry",
}


def unavailable_hint(score: Score, *, max_tokens: int | None = None) -> str | None:
    """A hint when one reason code accounts for more than half of all cases, else None."""
    if not score.n or not score.unavailable_by_reason:
        return None
    reason, count = max(score.unavailable_by_reason.items(), key=lambda item: item[1])
    if 2 * count <= score.n:
        return None
    advice = _ADVICE.get(reason, "see the reason codes in docs/concepts.md")
    shown = "?" if max_tokens is None else str(max_tokens)
    return (f"hint: {count}/{score.n} answers are unavailable ({reason}); "
            + advice.format(max_tokens=shown))
