"""The enforcement-point seam used by the run orchestrator.

An :class:`Enforcer` receives *only* the case id (public source id), the public effect descriptor
and the dispatch decision -- never the reference label -- and returns an
:class:`~authpairs.enforce.effect_record.EffectRecord`. The run orchestrator opens it as a
context manager for the whole run (a sandbox per run) and calls :meth:`Enforcer.enforce` once per
case.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from authpairs.cases.models import EffectDescriptor
from authpairs.enforce.effect_record import EffectRecord
from authpairs.review.outcome import Dispatch


@runtime_checkable
class Enforcer(Protocol):
    """Executes ALLOWed operations and verifies what actually changed."""

    def __enter__(self) -> Enforcer: ...

    def __exit__(self, *exc: object) -> None: ...

    def enforce(self, case_id: str, effect: EffectDescriptor | None,
                dispatch: Dispatch) -> EffectRecord:
        """Execute on ALLOW, leave unexecuted otherwise, then verify independently."""
        ...
