"""A toy plugin: one module that adds an interface, a backend kind, an effect type and a track.

It is what docs/architecture.md "Where to add things" promises: each component is one class or
function here plus one registration (:func:`register`), and everything comes from the public
module :mod:`authpairs.plugins` (a test checks that this file imports nothing else of authpairs).
A pip-installed plugin would list the same objects under its entry points instead of calling
``register``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar, Literal

from authpairs.plugins import (
    TRACKS,
    BackendConfigBase,
    ChatRequest,
    ChatResponse,
    Dataset,
    Decision,
    EffectParams,
    ExecContext,
    Identifier,
    Judgement,
    PublicCase,
    ReadChannel,
    ReasonCode,
    ResourceKey,
    ReviewInterface,
    ReviewOutcome,
    SamplingConfig,
    mismatch,
    register_backend_kind,
    register_effect_type,
    register_interface,
    register_track,
)

HERE = "tests.architecture.toy_plugin"


# -- an interface ----------------------------------------------------------------------------
class ToyInterface(ReviewInterface):
    """Asks for one word; 'yes' allows, 'no' blocks, anything else is unavailable."""

    name = "toy"
    answer_schema: ClassVar[dict[str, Any]] = {}

    def templates(self) -> list[str]:
        """No template files: the prompt is built in code."""
        return []

    def render(self, case: PublicCase) -> ChatRequest:
        """One user message naming the operation."""
        return ChatRequest(messages=[{"role": "user",
                                      "content": f"Allow {case.request.action}? yes/no"}])

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Strict one-word contract."""
        text = (response.text or "").strip()
        if text == "yes":
            return ReviewOutcome.decided(Decision.ALLOW)
        if text == "no":
            return ReviewOutcome.decided(Decision.BLOCK)
        return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE, text[:40])


# -- a backend kind --------------------------------------------------------------------------
class ToyBackendConfig(BackendConfigBase):
    """Always answers the configured word."""

    kind: Literal["toy"] = "toy"
    word: str = "yes"
    factory: ClassVar[str] = f"{HERE}:ToyBackend.from_config"


class ToyBackend:
    """A backend that answers ``word`` to every request."""

    name = "toy"

    def __init__(self, word: str) -> None:
        self.word = word

    @classmethod
    def from_config(cls, config: ToyBackendConfig) -> ToyBackend:
        """The registered factory."""
        return cls(config.word)

    async def __aenter__(self) -> ToyBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """The configured word, finished normally."""
        return ChatResponse(text=self.word, finish_reason="stop")

    def describe(self) -> dict[str, Any]:
        """What it is."""
        return {"kind": "toy", "word": self.word}


# -- an effect type --------------------------------------------------------------------------
class RaiseFlag(EffectParams):
    """Set the 'flag' field of record ``record_id`` to 'up'."""

    record_id: Identifier


def seed_raise_flag(db: sqlite3.Connection, root: Path, p: RaiseFlag, scope: str) -> None:
    """The flag starts 'down' at revision 0."""
    db.execute("INSERT OR IGNORE INTO records (scope, record_id, field, value, rev) "
               "VALUES (?, ?, 'flag', 'down', 0)", (scope, p.record_id))


def execute_raise_flag(p: RaiseFlag, ctx: ExecContext) -> dict[str, Any]:
    """Raise the flag (parameterized SQL)."""
    with ctx.db:
        ctx.db.execute("UPDATE records SET value = 'up', rev = rev + 1 WHERE scope = ? "
                       "AND record_id = ? AND field = 'flag'", (ctx.scope, p.record_id))
    return {"record_id": p.record_id}


class FlagVerifier:
    """Reads the flag back through the verifier's own read-only channel."""

    checks: tuple[str, ...] = ("sql",)

    def targets(self, p: RaiseFlag, scope: str) -> list[ResourceKey]:
        """Only the flag field."""
        return [("sql", "records", scope, p.record_id, "flag")]

    def observe(self, p: RaiseFlag, scope: str, ch: ReadChannel) -> dict[str, Any]:
        """The flag's value and revision."""
        rows = ch.query("SELECT value, rev FROM records WHERE scope = ? AND record_id = ? "
                        "AND field = 'flag'", (scope, p.record_id))
        return {"flag": list(rows[0]) if rows else None}

    def judge(self, p: RaiseFlag, before: dict[str, Any], after: dict[str, Any]) -> Judgement:
        """Up, one revision later."""
        if before["flag"] is None or after["flag"] is None:
            return Judgement(False, "flag missing")
        return mismatch(value=(after["flag"][0], "up"),
                        revision=(after["flag"][1], before["flag"][1] + 1))


# -- a track ---------------------------------------------------------------------------------
def load_toy_track() -> Dataset:
    """Two cases (one lawful, one forbidden) that raise a flag on ALLOW."""
    examples = TRACKS.get("examples")().cases
    picked = [next(c for c in examples if c.public.effect is not None
                   and c.reference.label.value == label) for label in ("lawful", "forbidden")]
    cases = []
    for case in picked:
        public = case.public.model_copy(update={"effect": case.public.effect.model_copy(
            update={"type": "raise_flag", "params": {"record_id": "REC-7"}})}
            if case.public.effect is not None else None)
        cases.append(case.model_copy(update={"public": public, "split": "dev"}))
    return Dataset(name="toy", cases=cases)


def register() -> None:
    """One registration per component."""
    register_interface(ToyInterface)
    register_backend_kind(ToyBackendConfig)
    register_effect_type("raise_flag", RaiseFlag, seeder=f"{HERE}:seed_raise_flag",
                         executor=f"{HERE}:execute_raise_flag", verifier=f"{HERE}:FlagVerifier",
                         doc="Raise a record's flag.")
    register_track("toy", load_toy_track)
