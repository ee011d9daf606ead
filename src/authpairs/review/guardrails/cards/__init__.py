"""Format cards: how each native guardrail talks to its model, and on what authority.

A card is a Markdown file in this package named after its interface, or a built-in guardrail
with a vendor (``nemo-self-check``): ``<name>.md``. It lists the primary sources with their
revisions, the exact prompt layout as sent, the answer grammar, the vendor's and the paper's
sampling and output limit (the table of :mod:`authpairs.review.guardrails.settings`) and the stop
tokens, the vendor parser it mirrors and every deliberate difference from that parser with its
reason. ``authpairs guardrails --card NAME`` prints one; each card is
also reproduced verbatim in ``docs/guardrails.md`` between ``<!-- card: NAME -->`` and
``<!-- /card: NAME -->`` (a test keeps the two equal).

This module reads package data only: it imports no interface and no vendor library.
"""

from __future__ import annotations

from importlib import resources

from authpairs.errors import ReviewerError

SUFFIX = ".md"


def card_names() -> list[str]:
    """The names of every interface that has a card, sorted."""
    folder = resources.files(__name__)
    return sorted(entry.name.removesuffix(SUFFIX) for entry in folder.iterdir()
                  if entry.name.endswith(SUFFIX))


def read_card(name: str) -> str:
    """The card of interface ``name``; a :class:`ReviewerError` listing the cards otherwise."""
    entry = resources.files(__name__).joinpath(name + SUFFIX)
    if "/" in name or not entry.is_file():
        known = ", ".join(card_names()) or "(none)"
        raise ReviewerError(f"no format card for '{name}' (cards: {known})")
    return entry.read_text(encoding="utf-8")
