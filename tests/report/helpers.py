"""Runs for report tests: real runs of the language dev split with baseline reviewers and a
seeded scripted reviewer (no model), recorded to SQLite like any other run."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from authpairs.backends.base import ChatRequest
from authpairs.backends.scripted import ScriptedBackend
from authpairs.errors import TransportError
from authpairs.review.interfaces import get_interface
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_async
from authpairs.runs.config import config_from_dict

SCRIPT = "tests.report.helpers:noisy"


def noisy_answer(request: ChatRequest, seed: int, allow: float = 0.55,
                 broken: float = 0.08) -> str:
    """A deterministic pseudo-reviewer: the decision is a hash of the input and the seed.

    It never sees a reference label (only the rendered public request).
    """
    digest = hashlib.sha256(f"{seed}:{request.sha256()}".encode()).digest()
    u = int.from_bytes(digest[:4], "big") / 2**32
    if u < broken:
        return "I think it is probably fine."  # not one clean decision: unavailable
    return '{"decision": "ALLOW"}' if u < broken + allow else '{"decision": "BLOCK"}'


def noisy(request: ChatRequest) -> str:
    """Seed 0 of :func:`noisy_answer` (importable as the configured script)."""
    return noisy_answer(request, 0)


def scripted(seed: int, allow: float = 0.55, flaky: float = 0.0
             ) -> Callable[[ChatRequest], str]:
    """A seeded noisy script; a share ``flaky`` of the inputs always fails in transport."""
    def script(request: ChatRequest) -> str:
        u = int(request.sha256()[:8], 16) / 16**8
        if u < flaky:
            raise TransportError("connection refused (scripted)")
        return noisy_answer(request, seed, allow)
    return script


def make_run(records: Path, run_id: str, *, baseline: str | None = None, seed: int = 0,
             allow: float = 0.55, split: str = "dev", enforce: bool = False,
             limit: int | None = None, dataset: str = "language", flaky: float = 0.0,
             concurrency: int | None = None) -> str:
    """Run (or resume) one run; a scripted run's configuration differs from another's only
    in its seed (and ``allow``, recorded as the backend model name). ``flaky`` > 0 leaves that
    share of the cases without a record (transport failures, no retry): an incomplete run.
    ``concurrency`` 1 reviews one case at a time, so enforced effects see the sandbox in one
    order (the verifier's count of resources checked depends on it)."""
    raw: dict[str, Any] = {"dataset": dataset, "split": split, "enforce": enforce,
                           "infra_retries": 0,
                           **({"concurrency": concurrency} if concurrency else {}),
                           "records": str(records), "run_id": run_id, "limit": limit,
                           "reviewer": {"interface": "direct"}}
    reviewer = None
    if baseline is not None:
        raw["reviewer"]["baseline"] = baseline
    else:
        raw["reviewer"]["backend"] = {"kind": "scripted", "script": SCRIPT,
                                      "model": f"noisy-{allow:g}"}
        raw["reviewer"]["sampling"] = {"seed": seed}
    config = config_from_dict(raw)
    if baseline is None:
        reviewer = ModelReviewer(get_interface("direct"),
                                 ScriptedBackend(scripted(seed, allow, flaky), label=SCRIPT),
                                 config.reviewer.sampling)
    asyncio.run(run_async(config, progress=False, reviewer=reviewer))
    return run_id
