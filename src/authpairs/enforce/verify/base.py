"""The verifier contract: which resources an effect may change, how to observe them, and how to
judge a before/after pair against the descriptor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from authpairs.enforce.verify.channel import ReadChannel

ResourceKey = tuple[str, ...]
"""A resource: ``("sql", table, *primary key)`` or ``("file", *path parts)``. A *target* is a
key prefix: every resource under it may change."""


@dataclass(frozen=True)
class Judgement:
    """Whether the observed before/after pair is exactly the described effect."""

    ok: bool
    detail: str


class Verifier(Protocol):
    """Independent check of one effect type."""

    checks: tuple[str, ...]
    """Kinds of read-back this verifier performs ('sql', 'balance', 'byte', 'signature',
    'live-site'); the unrelated-resource check is added by the enforcement point."""

    def targets(self, p: Any, scope: str) -> list[ResourceKey]:
        """Key prefixes of the resources this effect is allowed to change."""
        ...

    def observe(self, p: Any, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """Read the targeted resources back (JSON data, no raw payloads)."""
        ...

    def judge(self, p: Any, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """True when ``after`` is ``before`` plus exactly the described effect."""
        ...


def mismatch(**fields: tuple[Any, Any]) -> Judgement:
    """A judgement from named (observed, expected) pairs; ok when all are equal."""
    bad = {k: v for k, v in fields.items() if v[0] != v[1]}
    if not bad:
        return Judgement(True, "effect observed as described")
    return Judgement(False, "; ".join(f"{k}: observed {o!r}, expected {e!r}"
                                      for k, (o, e) in bad.items()))
