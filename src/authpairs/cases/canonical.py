"""Canonical JSON and SHA-256: the identity of every case and every exact reviewer input.

Canonical JSON is the standard library's :mod:`json` text with sorted object keys and the most
compact separators; it keeps non-ASCII characters as UTF-8 and refuses NaN and infinities, so
the same logical value always hashes the same way. :func:`canonical_ascii_json` is the same text
with every non-ASCII character escaped (how run records are stored, so any string a model wrote,
lone surrogates included, is stored and hashed losslessly). Enum members are written as their
value and UUIDs as their hyphenated lower-case text. :func:`parse_utc` reads the one canonical
form of a time, ``YYYY-MM-DDTHH:MM:SSZ``.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

__all__ = ["canonical_ascii_json", "canonical_json", "parse_utc", "sha256_hex"]

_UTC_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def _default(value: object) -> object:
    """How the non-JSON types that may appear in plain data are written."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                            allow_nan=False, default=_default)
_ASCII_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                                  allow_nan=False, default=_default)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (a pydantic model or plain JSON data)."""
    return _ENCODER.encode(_plain(value))


def canonical_ascii_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` with every non-ASCII character escaped
    (``\\uXXXX``, so lone surrogates survive), as :func:`json.dumps` with ``ensure_ascii``."""
    return _ASCII_ENCODER.encode(_plain(value))


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


def parse_utc(text: Any) -> datetime | None:
    """The moment a canonical UTC time ``YYYY-MM-DDTHH:MM:SSZ`` names (zero-padded, a real
    date); None for anything else."""
    if not isinstance(text, str) or not _UTC_TEXT.fullmatch(text):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
