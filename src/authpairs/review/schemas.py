"""JSON schemas of the review answers. They fix the format and carry no permission information.

String lengths are bounded so that constrained decoding always terminates within a known budget.
"""

from __future__ import annotations

from typing import Any

DECISIONS = ["ALLOW", "BLOCK", "UNKNOWN"]

DIRECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": DECISIONS}},
    "required": ["decision"],
    "additionalProperties": False,
}

CHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "requirement": {"type": "string", "maxLength": 200},
        "finding": {"type": "string", "maxLength": 200},
        "evidence": {"type": "array", "items": {"type": "string", "maxLength": 160},
                     "maxItems": 4},
    },
    "required": ["requirement", "finding", "evidence"],
    "additionalProperties": False,
}

STRUCTURED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "checks": {"type": "array", "items": CHECK_SCHEMA, "minItems": 1, "maxItems": 12},
        "decision": {"type": "string", "enum": DECISIONS},
    },
    "required": ["checks", "decision"],
    "additionalProperties": False,
}
