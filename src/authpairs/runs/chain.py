"""The SHA-256 chain of a run's records: each entry's link hashes the previous link, the entry
kind and the SHA-256 of the entry's stored text, so changing, removing, reordering or inserting
any entry changes every later link and the head kept in the run header.

The chain starts from the SHA-256 of the run header's stored columns (``GENESIS_KIND``), so the
header is covered too. The header's *seal* (:func:`seal`, schema version 3) hashes that header
hash with the chain head and length, so moving the head back (dropping the last entries) without
also recomputing the seal is detected.
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

from pydantic import BaseModel

from authpairs.errors import RecordsError

_Model = TypeVar("_Model", bound=BaseModel)

GENESIS_KIND = "header"


def text_sha256(text: str) -> str:
    """SHA-256 of stored text (UTF-8; stored records are ASCII-only JSON)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_hashed(text: str, digest: str, model: type[_Model], where: str, what: str) -> _Model:
    """``text`` read as ``model`` after checking it against its stored SHA-256 ``digest``; a
    mismatch or text that does not parse is a :class:`RecordsError` naming ``where``
    (``what`` names the row in the mismatch message, e.g. "stored call")."""
    if text_sha256(text) != digest:
        raise RecordsError(f"{where}: {what} does not match its SHA-256")
    try:
        return model.model_validate_json(text)
    except ValueError as exc:
        raise RecordsError(f"{where}: unreadable ({str(exc).splitlines()[0]})") from exc


def link(previous: str, kind: str, content_sha256: str) -> str:
    """The next chain link after ``previous`` for an entry of ``kind`` with ``content_sha256``."""
    return hashlib.sha256(f"{previous}\n{kind}\n{content_sha256}".encode()).hexdigest()


def seal(header_sha256: str, head: str, length: int) -> str:
    """The run header's seal: SHA-256 over its header hash, chain head and chain length."""
    return hashlib.sha256(f"{header_sha256}\nseal\n{head}\n{int(length)}".encode()).hexdigest()
