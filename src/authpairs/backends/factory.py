"""Build a backend from its configuration (the registry of backend kinds)."""

from __future__ import annotations

from authpairs.backends.base import Backend, BackendError
from authpairs.runs.config import BackendConfig


def make_backend(config: BackendConfig) -> Backend:
    """Instantiate the backend named by ``config.kind``."""
    if config.kind == "openai":
        from authpairs.backends.openai_http import OpenAIBackend

        if not config.model:
            raise BackendError("backend.model is required for the openai backend")
        return OpenAIBackend.from_env(
            config.base_urls, config.model, config.api_key_env,
            concurrency_per_endpoint=config.concurrency_per_endpoint,
            deadline_s=config.deadline_s, extra_body=config.extra_body)
    if config.kind == "local":
        from authpairs.backends.local_server import LocalServerBackend

        return LocalServerBackend(config.gguf_path, n_ctx=config.n_ctx,
                                  n_parallel=config.n_parallel, n_threads=config.n_threads,
                                  deadline_s=config.deadline_s, extra_body=config.extra_body)
    if config.kind == "replay":
        from authpairs.backends.replay import ReplayBackend

        if not config.replay_store or not config.replay_run_id:
            raise BackendError("backend.replay_store and backend.replay_run_id are required")
        return ReplayBackend(config.replay_store, config.replay_run_id)
    if config.kind == "scripted":
        from authpairs.backends.scripted import ScriptedBackend, load_script

        if not config.script:
            raise BackendError("backend.script ('module:function') is required for 'scripted'")
        return ScriptedBackend(load_script(config.script), label=config.script)
    raise BackendError(f"unknown backend kind {config.kind!r}")
