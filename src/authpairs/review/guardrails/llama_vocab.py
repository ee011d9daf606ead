"""Meta's Llama 3 and Llama 4 tokenizers, and Meta's chat format for one user turn, offline.

Both tokenizers ship inside Meta's ``llama-models`` distribution (``llama3/tokenizer.model`` and
``llama4/tokenizer.model``, read by its own ``Tokenizer`` class over tiktoken), so nothing is
downloaded. Message content is encoded the way Meta's ``ChatFormat`` encodes it: as plain text,
with no special token allowed, so the spelling of one (``<|eot_id|>``) stays characters.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from authpairs.errors import MissingDependencyError, ReviewerError

LLAMA_VERSIONS = (3, 4)


@cache
def llama_tokenizer(version: int) -> Any:
    """Meta's tokenizer of Llama ``version`` (3: Llama 3.x, 128,256 ids; 4: Llama 4)."""
    if version not in LLAMA_VERSIONS:
        raise ReviewerError(f"no Llama {version} tokenizer (known: 3, 4)")
    try:
        if version == 3:
            from llama_models.llama3.tokenizer import Tokenizer
        else:
            from llama_models.llama4.tokenizer import Tokenizer
    except ImportError:
        raise MissingDependencyError("llama-models", "guardrails",
                                     "the llama-guard interface") from None
    return Tokenizer.get_instance()


def user_turn_tokens(version: int, content: str) -> list[int]:
    """Meta's chat format for one user message, ready for the assistant's answer: begin of
    text, the user header, ``content`` as plain text, end of turn, the assistant header (each
    header followed by ``\\n\\n``).

    Llama 3 is rendered by ``llama-models``' own ``ChatFormat.encode_dialog_prompt``. Llama 4's
    ``ChatFormat`` module imports torch for images, so its layout (``llama4/chat_format.py``:
    ``<|header_start|>`` role ``<|header_end|>`` ``\\n\\n`` ... ``<|eot|>``) is written here over
    Meta's Llama 4 tokenizer; the tests compare it with Meta's ``ChatFormat``.
    """
    tokenizer = llama_tokenizer(version)
    if version == 3:
        from llama_models.datatypes import RawMessage
        from llama_models.llama3.chat_format import ChatFormat

        rendered = ChatFormat(tokenizer).encode_dialog_prompt(
            [RawMessage(role="user", content=content)])
        return list(rendered.tokens)
    special = tokenizer.special_tokens

    def header(role: str) -> list[int]:
        return [special["<|header_start|>"], *tokenizer.encode(role, bos=False, eos=False),
                special["<|header_end|>"], *tokenizer.encode("\n\n", bos=False, eos=False)]

    return [special["<|begin_of_text|>"], *header("user"),
            *tokenizer.encode(content, bos=False, eos=False), special["<|eot|>"],
            *header("assistant")]
