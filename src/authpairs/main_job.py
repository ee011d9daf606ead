"""The main job: what ``authpairs run`` does without ``--config``, and so the default of every
setting of a run configuration.

The field defaults of :class:`~authpairs.runs.config.RunConfig` and of the models it holds (the
embedded server's :class:`~authpairs.backends.config.LocalBackendConfig`, the
:class:`~authpairs.backends.config.SamplingConfig`) are these values, so ``RunConfig()``,
``RunConfig.model_validate({})``, ``authpairs.run({})`` and ``authpairs run`` are one
configuration; ``configs/local-smollm2.yaml`` writes it out (a test keeps them equal) and the
command line's help states them. This module imports nothing of the package, so the help can
name the defaults without loading pydantic.

Two settings depend on another one: the split is the main job's only for its dataset (another
dataset has its own default, since a case file may have no dev split), and the repetition
penalty applies only with the embedded server (it keeps the tiny SmolLM2 from looping inside the
JSON schema; another backend gets none unless the run sets one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal, TypeAlias

DATASET: Final = "language"
SPLIT: Final = "dev"
"""The split of the main job's dataset."""
INTERFACE: Final = "schema"
CONCURRENCY: Final = 1
"""Cases in flight: the main job decodes one case at a time, in the same order in every run."""
AgentServer: TypeAlias = Literal["in-process", "stdio"]
"""How an agent run's agent reaches the MCP server: in this process, or an ``authpairs mcp
serve`` child process over stdio."""
AGENT_SERVER: Final[AgentServer] = "in-process"
MCP_PORT: Final = 8765
"""The port ``authpairs mcp serve --transport http`` listens on (on 127.0.0.1)."""
RECORDS: Final = "runs/authpairs.sqlite"
"""The records file: where a run writes and where a bare ``RUN_ID`` is looked up."""
SAMPLE_SEED: Final = 0
"""The seed that chooses the cases of ``sample: N`` (the main job reviews the whole split)."""
ENFORCE: Final = True
PREFLIGHT: Final = True
INFRA_RETRIES: Final = 3
"""Retries of an attempt that failed in transport (the server, not the answer)."""
DEADLINE_S: Final = 600.0
"""The longest an attempt waits for progress (:data:`DEADLINE_HELP`): long enough for a small
model on CPU to process its prompt, short enough to notice a hung server. The paper's GPU runs
used 3,600 s (``configs/paper/``)."""
DEADLINE_HELP: Final = (
    "Seconds an attempt waits for progress before it is abandoned as an infrastructure timeout: "
    "the whole reply, or for a streaming backend (the embedded server, stream: true) the next "
    "streamed token, so a slow but progressing generation is never cut off.")
"""What ``deadline_s`` means, in one sentence (its field description and ``--deadline`` help)."""

TEMPERATURE: Final = 0.0
SEED: Final = 7
MAX_TOKENS: Final = 2048
LOCAL_REPETITION_PENALTY: Final = 1.3
"""The repetition penalty with the embedded server (``reviewer.backend.kind: local``)."""

# The embedded server (configs/local-smollm2.yaml says why each is pinned): llama.cpp's CPU
# answers depend on the thread count, on which sequences share a batch and on speculative
# decoding, so one slot, one thread and n-gram drafting make every run give the same answers.
N_CTX: Final = 8192
N_PARALLEL: Final = 1
N_THREADS: Final = 1
SPECULATIVE: Final = "ngram-map-k"


CACHE_ENV: Final = "AUTHPAIRS_CACHE"
"""The environment variable naming the folder authpairs keeps fetched and derived files in."""


def cache_root() -> Path:
    """The folder authpairs keeps fetched and derived files in: ``$AUTHPAIRS_CACHE``, else
    ``$XDG_CACHE_HOME/authpairs``, else ``~/.cache/authpairs``."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "authpairs")
    return Path(root)
