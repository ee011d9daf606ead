"""The main job's configuration: what ``authpairs run`` starts from when no ``--config`` is given,
and what ``RunConfig(...)`` / ``authpairs.run({...})`` start from in Python (one source of
defaults: :func:`over_main_job`).

These values equal ``configs/local-smollm2.yaml`` (a test keeps them equal). Some only make
sense for the embedded SmolLM2 server, so they apply only while the backend is the local one:
the backend's own settings (``n_ctx``, ``n_parallel``, ``n_threads``, ``speculative``) and
``repetition_penalty``
(which keeps the tiny model from looping inside the JSON schema). With ``--backend openai`` or
``--backend replay`` the backend section is just that kind and no repetition penalty is sent
unless ``--repetition-penalty`` is given. With another ``--dataset`` the split is the dataset's
default unless ``--split`` is given.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

MAIN_JOB: dict[str, Any] = {
    "dataset": "language",
    "split": "dev",
    "reviewer": {
        "interface": "schema",
        "backend": {"kind": "local", "n_ctx": 8192, "n_parallel": 1, "n_threads": 1,
                    "speculative": "ngram-map-k"},
        "sampling": {"temperature": 0.0, "seed": 7, "max_tokens": 2048,
                     "repetition_penalty": 1.3},
    },
    "enforce": True,
    "concurrency": 1,
    "records": "runs/authpairs.sqlite",
}
"""The main job (``configs/local-smollm2.yaml``) as plain data."""

LOCAL_ONLY = ("reviewer.backend.n_ctx", "reviewer.backend.n_parallel", "reviewer.backend.n_threads",
              "reviewer.backend.speculative", "reviewer.sampling.repetition_penalty")
"""Main-job settings that apply only with the embedded local backend."""


def cli_base_config(backend: str | None, dataset: str | None = None,
                    guardrail: str | None = None) -> dict[str, Any]:
    """The main job's configuration, adapted to another ``backend`` kind, ``dataset`` or a
    ``guardrail``.

    With another dataset the main job's split is left out, so the dataset's own default
    applies (a case file of your own may have no dev split). With a guardrail the main job's
    temperature and output limit are left out (their values are the defaults anyway): a
    guardrail with task settings of its own (a NeMo rails folder) keeps them unless
    ``--temperature`` / ``--max-tokens`` are given.
    """
    data = copy.deepcopy(MAIN_JOB)
    if guardrail is not None:
        for name in ("temperature", "max_tokens"):
            del data["reviewer"]["sampling"][name]
    if dataset is not None and dataset != MAIN_JOB["dataset"]:
        del data["split"]
    if backend is not None and backend != "local":
        data["reviewer"]["backend"] = {"kind": backend}
        del data["reviewer"]["sampling"]["repetition_penalty"]
    return data


def over_main_job(data: Mapping[str, Any]) -> dict[str, Any]:
    """The main job's configuration with ``data`` (plain, possibly nested values) laid over it.

    The main job is adapted as ``authpairs run`` adapts it to the flags given: to the backend
    kind, the dataset and the guardrail that ``data`` names (:func:`cli_base_config`), so that
    ``RunConfig(dataset="examples")`` is ``authpairs run --dataset examples``. Nested mappings
    are merged key by key; any other value replaces the main job's.
    """
    reviewer = data.get("reviewer")
    reviewer = reviewer if isinstance(reviewer, Mapping) else {}
    backend = reviewer.get("backend")
    kind = backend.get("kind") if isinstance(backend, Mapping) else None
    dataset = data.get("dataset")
    guardrail = reviewer.get("guardrail")
    base = cli_base_config(kind if isinstance(kind, str) else None,
                           dataset if isinstance(dataset, str) else None,
                           guardrail if isinstance(guardrail, str) and guardrail else None)
    return _merged(base, data)


def _merged(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, dict):
            merged[key] = _merged(below, value)
        else:
            merged[key] = value
    return merged
