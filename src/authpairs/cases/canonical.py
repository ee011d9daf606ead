"""Canonical JSON and SHA-256: the identity of every case and every exact reviewer input.

Canonical JSON sorts object keys, uses the most compact separators, keeps non-ASCII characters as
UTF-8, and refuses NaN and infinities, so the same logical value always hashes the same way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                            allow_nan=False)
"""One encoder, reused (it keeps the cycle check: YAML aliases can make plain data cyclic)."""


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (a pydantic model or plain JSON data)."""
    return _ENCODER.encode(_plain(value))


def sha256_hex(value: Any) -> str:
    """Return the SHA-256 hex digest of ``value``: bytes and str are hashed as-is (UTF-8),
    anything else through :func:`canonical_json`."""
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode("utf-8")
    else:
        data = canonical_json(value).encode("utf-8")
    return hashlib.sha256(data).hexdigest()
