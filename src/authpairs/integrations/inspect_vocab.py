"""tiktoken's ``o200k_base`` vocabulary for Inspect AI, from the copy authpairs already ships.

Inspect counts tokens with tiktoken's ``o200k_base`` wherever a model reports no usage (its
``mockllm`` model run from the command line, for one), and tiktoken downloads that vocabulary
on first use. No installed package ships it in tiktoken's own format, but ``quicktok-v1`` (an
authpairs dependency) ships the same ranks: :mod:`authpairs.review.guardrails.harmony_vocab`
rewrites them into tiktoken's text format and checks the result against the published SHA-256,
and this module writes that file where tiktoken looks first, its ``TIKTOKEN_CACHE_DIR``, under
the name tiktoken gives the download. tiktoken checks the same SHA-256 again when it reads it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from authpairs.review.guardrails.harmony_vocab import ensure_vocab

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken downloads ``o200k_base`` from; its cache names the file by this URL."""
CACHE_ENV = "TIKTOKEN_CACHE_DIR"


def cache_name(url: str = O200K_URL) -> str:
    """The file name tiktoken's cache gives a download (SHA-1 of its URL)."""
    return hashlib.sha1(url.encode()).hexdigest()


def use_packaged_vocabulary() -> Path:
    """Make tiktoken find ``o200k_base`` offline; returns tiktoken's cache folder.

    A ``TIKTOKEN_CACHE_DIR`` the user set is kept (the verified file is added to it when it is
    missing); otherwise it is set to the folder holding authpairs' verified copy.
    """
    folder = ensure_vocab()
    chosen = os.environ.get(CACHE_ENV)
    cache = ensure_vocab(Path(chosen) if chosen else folder, cache_name())
    if not chosen:
        os.environ[CACHE_ENV] = str(cache)
    return cache
