"""JSON schemas of the review answers. They fix the format and carry no permission information."""

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
        "requirement": {"type": "string"},
        "finding": {"type": "string"},
        "evidence": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
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
