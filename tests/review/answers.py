"""Answers as a server returns them: the text, and for a Harmony answer (``safeguard``) the token
ids it was generated as.

``harmony_ids`` encodes every special-token spelling as the special token: the answer of a model
that wrote its markers as markers. ``harmony_parts`` builds ids piece by piece, so a test can
have the model write a marker as ordinary characters (the text is the same, the ids are not).
"""

from __future__ import annotations

from authpairs.backends.base import ChatResponse
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.safeguard import MAX_HARMONY_CHARS


def harmony_ids(text: str) -> list[int]:
    """``text`` as Harmony token ids, every special-token spelling a special token."""
    ids: list[int] = harmony_encoding().encode(text, allowed_special="all")
    return ids


def harmony_parts(*parts: tuple[str, bool]) -> list[int]:
    """Token ids of ``(text, special)`` pieces: ``special`` pieces with their special tokens,
    the others as ordinary characters (a marker spelled, not emitted)."""
    encoding = harmony_encoding()
    ids: list[int] = []
    for text, special in parts:
        ids += (encoding.encode(text, allowed_special="all") if special
                else encoding.encode(text, disallowed_special=()))
    return ids


def harmony_response(ids: list[int], finish: str | None = "stop") -> ChatResponse:
    """A completion whose token ids are ``ids`` (its text their decoding)."""
    return ChatResponse(text=harmony_encoding().decode(ids), output_token_ids=ids,
                        finish_reason=finish)


def response(name: str, text: str, finish: str | None = "stop") -> ChatResponse:
    """The response of interface ``name`` with answer ``text``: a Harmony answer carries its
    token ids (markers emitted as special tokens) when the text can be encoded; anything else is
    text alone."""
    if name == "safeguard" and len(text) <= MAX_HARMONY_CHARS:
        try:
            return ChatResponse(text=text, finish_reason=finish, output_token_ids=harmony_ids(text))
        except (ValueError, UnicodeError):  # text tiktoken cannot encode (a lone surrogate)
            pass
    return ChatResponse(text=text, finish_reason=finish)
