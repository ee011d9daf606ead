"""Child process of the embedded server: ``python -m authpairs.backends.llama_server_main``.

Runs an ``xllamacpp`` (llama.cpp) OpenAI-compatible server on 127.0.0.1 until it is told to stop
(SIGTERM/SIGINT) or its parent process dies (even by ``kill -9``): it never outlives the run.
The settings it is not given are the main job's (:mod:`authpairs.main_job`).
"""

from __future__ import annotations

import argparse
import os
import signal
import threading

import authpairs.main_job as main_job

#: ``--speculative`` choices -> llama.cpp's speculative decoding types (no draft model needed).
SPECULATIVE_TYPES = {"none": "COMMON_SPECULATIVE_TYPE_NONE",
                     "ngram-simple": "COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE",
                     "ngram-map-k": "COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K",
                     "ngram-mod": "COMMON_SPECULATIVE_TYPE_NGRAM_MOD"}


def _watch_parent(parent_pid: int, stop: threading.Event) -> None:
    while not stop.wait(0.5):
        if os.getppid() != parent_pid:
            stop.set()


def main() -> None:
    """Parse arguments, start the server, block until told to stop, then exit at once."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=main_job.N_CTX)
    parser.add_argument("--n-parallel", type=int, default=main_job.N_PARALLEL)
    parser.add_argument("--threads", type=int, default=main_job.N_THREADS)
    parser.add_argument("--poll", type=int, default=0,
                        help="llama.cpp's busy-polling level (0-100) for waiting worker threads; "
                             "0 sleeps instead of spinning, leaving shared cores to other jobs")
    parser.add_argument("--no-prompt-cache", action="store_true",
                        help="never reuse a previous request's KV cache (neither the slot's "
                             "own prefix nor the host-memory prompt cache): every request is "
                             "computed from an empty cache, independent of what ran before")
    parser.add_argument("--speculative", default=main_job.SPECULATIVE,
                        choices=sorted(SPECULATIVE_TYPES),
                        help="draft-free speculative decoding from n-grams of the prompt and the "
                             "output so far (greedy output is unchanged in kind: every drafted "
                             "token is checked by the model)")
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threading.Thread(target=_watch_parent, args=(os.getppid(), stop), daemon=True).start()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.n_parallel = args.n_parallel
    for cpu in (params.cpuparams, params.cpuparams_batch):  # generation, and prompt batches
        cpu.n_threads = args.threads
        cpu.poll = args.poll
    if args.no_prompt_cache:
        params.cache_prompt = False
        params.cache_ram_mib = 0
    if args.speculative != "none":
        kind = getattr(xllamacpp.common_speculative_type, SPECULATIVE_TYPES[args.speculative])
        params.speculative.types = [kind]
    server = xllamacpp.Server(params)
    stop.wait()
    # In-flight generations are abandoned on purpose: the run has ended or died. The server's
    # destructor would wait for busy slots while holding the GIL, so exit the process at once
    # and let the OS release the port, threads and memory.
    os._exit(0 if server is not None else 1)


if __name__ == "__main__":
    main()
