"""Canonical JSON and SHA-256: the identity of every case and every exact reviewer input.

Canonical JSON sorts object keys, uses the most compact separators, keeps non-ASCII characters as
UTF-8, and refuses NaN and infinities, so the same logical value always hashes the same way.
:func:`canonical_ascii_json` is the same text with every non-ASCII character escaped (how run
records are stored).

The text is defined by the standard library's :mod:`json` encoder. orjson writes the same bytes
about seven times faster for almost all data, so it is tried first and its output is used only
when it is sure to be identical; otherwise :mod:`json` writes the text. orjson differs from
:mod:`json` in four places, each caught here:

* floats below 1e-4 in magnitude: orjson may write ``0.00001`` or ``1e-9`` where :mod:`json`
  writes ``1e-05`` and ``1e-09`` (any ``0.0000`` or a digit before ``e-`` in the output);
* NaN and infinities: orjson writes ``null`` where :mod:`json` refuses them (checked whenever
  the output holds a ``null``);
* ASCII-only text: orjson never escapes non-ASCII characters or DEL (``\\x7f``);
* what orjson refuses (integers beyond 64 bits, non-string keys, lone surrogates, ``str``/
  ``dict``/``list``/``float`` subclasses, nesting deeper than 254 levels, cycles).

Enum members and UUIDs, which orjson encodes natively, are encoded the same way by the fallback
(their value, and the hyphenated lower-case text), so both paths always agree.
"""

from __future__ import annotations

import enum
import hashlib
import json
import marshal
import uuid
from typing import Any

import orjson
from pydantic import BaseModel

__all__ = ["canonical_ascii_json", "canonical_json", "sha256_hex", "sha256_hex_and_member"]


def _default(value: object) -> object:
    """What the fallback encoder writes for the non-JSON types orjson encodes natively."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _refuse(value: object) -> object:
    raise TypeError(type(value).__name__)


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                            allow_nan=False, default=_default)
"""The fallback, reused (it keeps the cycle check: YAML aliases can make plain data cyclic)."""

_ASCII_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                                  allow_nan=False, default=_default)

_ORJSON_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS
                   | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS)
"""Sorted keys; subclasses, dates and dataclasses go to :func:`_refuse` (the fallback decides)."""


def _may_hold_non_finite(value: Any) -> bool:
    """True unless ``value`` surely holds no NaN or infinite float.

    marshal writes every float as its 8 IEEE-754 bytes, little-endian; a non-finite one ends in
    a byte ``0xf?`` then ``0x7f`` or ``0xff`` (all exponent bits set). Text never holds that
    pair (UTF-8 never puts ``0x7f`` or ``0xff`` after a lead byte ``0xf0``-``0xf4``), so a miss
    is impossible; a false alarm (say, a length byte) only sends the value to the fallback."""
    try:
        data = marshal.dumps(value, 4)
    except ValueError:
        return True
    return _pair_after_lead(data, b"\x7f") or _pair_after_lead(data, b"\xff")


def _pair_after_lead(data: bytes, tail: bytes) -> bool:
    at = data.find(tail, 1)
    while at != -1:
        if data[at - 1] >= 0xF0:
            return True
        at = data.find(tail, at + 1)
    return False


def _small_float_layout(text: bytes) -> bool:
    """True when ``text`` may hold a float that orjson lays out unlike :mod:`json`."""
    if b"0.0000" in text:
        return True
    at = text.find(b"e-")
    while at != -1:
        if at and 0x30 <= text[at - 1] <= 0x39:
            return True
        at = text.find(b"e-", at + 2)
    return False


def _fast(data: Any, *, ascii_only: bool, finite: bool = False) -> bytes | None:
    """orjson's canonical bytes of ``data`` when they are identical to :mod:`json`'s, else None.
    ``finite``: the caller vouches that ``data`` holds no NaN or infinity (not checked)."""
    try:
        text = orjson.dumps(data, default=_refuse, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    if ascii_only and (not text.isascii() or b"\x7f" in text):
        return None
    if _small_float_layout(text):
        return None
    if not finite and b"null" in text and _may_hold_non_finite(data):
        return None
    return text


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (a pydantic model or plain JSON data)."""
    data = _plain(value)
    text = _fast(data, ascii_only=False)
    return text.decode("utf-8") if text is not None else _ENCODER.encode(data)


def canonical_ascii_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` with every non-ASCII character escaped
    (``\\uXXXX``, so lone surrogates survive), as :func:`json.dumps` with ``ensure_ascii``."""
    data = _plain(value)
    text = _fast(data, ascii_only=True)
    return text.decode("ascii") if text is not None else _ASCII_ENCODER.encode(data)


def _canonical_bytes(value: Any) -> bytes:
    """:func:`canonical_json` of ``value`` as UTF-8 bytes (orjson's bytes as they are)."""
    data = _plain(value)
    fast = _fast(data, ascii_only=False)
    return fast if fast is not None else _ENCODER.encode(data).encode("utf-8")


def sha256_hex_and_member(value: dict[str, Any], key: str, *,
                          finite: bool = False) -> tuple[str, str]:
    """:func:`sha256_hex` of ``value`` (plain JSON data) and of its member ``value[key]``.

    When orjson's text of the whole passes the checks, the member's text is a part of it and
    passes them too, so it is written without checking again. ``finite``: the caller vouches
    that ``value`` holds no NaN or infinity, which saves looking for one (the same digests)."""
    whole = _fast(value, ascii_only=False, finite=finite)
    if whole is None:
        return sha256_hex(value), sha256_hex(value[key])
    if isinstance(value[key], str | bytes):  # hashed as-is, not as JSON (see sha256_hex)
        return hashlib.sha256(whole).hexdigest(), sha256_hex(value[key])
    member = orjson.dumps(value[key], default=_refuse, option=_ORJSON_OPTIONS)
    return hashlib.sha256(whole).hexdigest(), hashlib.sha256(member).hexdigest()


def sha256_hex(value: Any) -> str:
    """Return the SHA-256 hex digest of ``value``: bytes and str are hashed as-is (UTF-8),
    anything else through :func:`canonical_json`."""
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode("utf-8")
    else:
        data = _canonical_bytes(value)
    return hashlib.sha256(data).hexdigest()
