"""Records built and stored by a second process, so a long run's own process only reviews.

:class:`RecordProcess` has the interface of :class:`~authpairs.runs.writer.RecordWriter`
(``rendered``, ``add_review``, ``flush``, ``flush_when_due``, ``finish``) and the same batching
policy: a batch of finished reviews goes to the records process when it holds ``batch_size``
cases or its oldest case is ``max_delay_s`` old. The records process (``python -m
authpairs.runs.record_process``, a fresh interpreter started at the beginning of the run, handed
the run's cases in an unlinked temporary file, talking over three pipes) builds each case's
records (:func:`~authpairs.runs.reviewed.build_records`: input hash, raw output, reference fields,
and the parse where no enforcement point needed the decision first), stores each batch in one
transaction through its own :class:`~authpairs.runs.store.RecordStore` connection, and answers
which cases it stored. The run counts a case as recorded only then.

**Rendering ahead.** When the reviewer's interface can travel too (a model reviewer), the records
process also renders the run's cases, in order, a few ahead of the run (a thread of its own
sends them down a third pipe, which holds them until the run reads them), and keeps each request
it rendered. The run takes a case's request from there when it is ready and renders the case
itself when it is not (at the start, while the records process starts up, or if rendering
there failed); a review whose request came from the records process crosses back without it.
What is sent is what is recorded either way: the records process hashes the very request it
handed over, and ``authpairs audit`` re-renders every input from the dataset.

Guarantees (``docs/reliability.md``): a batch is stored whole or not at all, as before. If the
run's process is killed, the records process still stores every batch it had received, then
exits (it reads end-of-file). If the records process dies or fails, the run stops with a
:class:`~authpairs.errors.RecordsError` that says so; the cases it had not stored stay
unrecorded and claimed by a dead process, and the same command reviews them again.

A run uses a records process when it has at least :data:`MIN_CASES` cases to review and at
least two CPUs to run on; ``AUTHPAIRS_RECORD_PROCESS=always`` or ``never`` overrides that.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import Case, PublicCase
from authpairs.errors import ConfigError, RecordsError
from authpairs.runs.records import AttemptRecord, CaseFacts, CaseRecord
from authpairs.runs.reviewed import Parser, Renderer, Review, WireReview, build_records
from authpairs.runs.store import RecordStore
from authpairs.runs.writer import DEFAULT_MAX_DELAY_S, Batches

#: Runs with at least this many cases to review store them through a records process (starting
#: one costs about 0.2 s of the other core; a short run stores its few batches itself).
MIN_CASES = 500

#: ``always``, ``never`` or ``auto`` (the default: :data:`MIN_CASES`).
ENVIRONMENT = "AUTHPAIRS_RECORD_PROCESS"

#: How often the run collects the records process's answers (for progress and counts).
ANSWER_POLL_S = 0.05

#: Bytes a pipe to the records process holds before a send waits (Linux lets a process ask for
#: up to 1 MiB): several batches, so neither the process's start nor a batch being stored
#: holds up the reviews.
PIPE_BYTES = 1 << 20

#: How much lower the records process's scheduling priority is than the run's.
NICENESS = 10

#: The records process renders cases ahead of the run this many at a time.
RENDER_CHUNK = 32

#: While reviews wait to be stored, the rendering thread waits this long at a time.
STORING_FIRST_S = 0.001

#: While no rendered requests wait, the run looks for them at most this often.
RENDER_POLL_S = 0.002

#: When the run, after taking requests rendered ahead, finds none ready for this many cases in a
#: row, rendering ahead stops: the reviewer answers faster than the records process renders.
BEHIND_LIMIT = 2 * RENDER_CHUNK

#: The records process copies the WAL into the database file every this many pages (4 MiB), so
#: the run's process, which closes the file last, has little left to copy at the end.
CHECKPOINT_PAGES = 1000

_END = b""


def portable(interface: Parser | Renderer) -> bool:
    """Whether ``interface`` can be sent to a records process (to render and parse there)."""
    try:
        pickle.dumps(interface, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # unpicklable state: the run's process renders and parses
        return False
    return True


def wanted(pending: int) -> bool:
    """Whether a run with ``pending`` cases to review uses a records process."""
    choice = os.environ.get(ENVIRONMENT, "auto").strip().lower()
    if choice not in ("auto", "always", "never"):
        raise ConfigError(f"{ENVIRONMENT}={choice!r}: use always, never or auto")
    if os.name != "posix":  # the pipes are handed to the records process by descriptor
        return False
    if choice == "auto":  # on a single CPU it would only take turns with the run
        return pending >= MIN_CASES and usable_cpus() >= 2
    return choice == "always" and pending > 0


def usable_cpus() -> int:
    """How many CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class RecordProcess(Batches[tuple[int, Review]]):
    """Stores finished reviews through a records process (see the module docstring).

    ``on_stored(case_id, stored)`` is called in the run's process for every case once its batch
    has committed; ``stored`` is False when another process had recorded the case first.
    """

    #: Answers are collected at least this often (for progress and counts).
    poll_s = ANSWER_POLL_S

    def __init__(self, store_path: Path, run_id: str, cases: Sequence[Case],
                 on_stored: Callable[[str, bool], None], *, batch_size: int = 16,
                 max_delay_s: float = DEFAULT_MAX_DELAY_S, parser: Parser | None = None,
                 renderer: Renderer | None = None) -> None:
        super().__init__(batch_size, max_delay_s)
        self.parser = parser
        #: Renders the cases ahead in the records process (None: the run renders them).
        self.renderer = renderer
        self.store_path = store_path
        self.run_id = run_id
        self.cases = cases
        self.on_stored = on_stored
        self._unanswered = 0
        self._failure: RecordsError | None = None  # once raised, raised again by finish()
        self._process: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None   # the run writes reviews here
        self._answers: Connection | None = None  # and reads what was stored here
        self._renders: Connection | None = None  # and the requests rendered ahead here
        self._ahead: deque[tuple[int, list[dict[str, Any]]]] = deque()  # chunks read, unused
        #: How many of the run's requests came rendered from the records process.
        self.rendered_ahead = 0
        self._rendering = False  # requests rendered ahead have started to come
        self._renders_poll: select.poll | None = None
        self._next_look = 0.0  # when to look for requests rendered ahead again
        self._behind = 0  # cases the run rendered in a row since then, none being ready

    def start(self) -> None:
        """Start the records process and hand it the run's cases."""
        # The cases' facts (and public parts, to render) as JSON: several times faster to write
        # and read than pickled tuples or models. They go in an unlinked temporary file, not
        # down a pipe: writing megabytes to a pipe would wait for the records process to start.
        facts = orjson.dumps([CaseFacts.of(c) for c in self.cases], default=tuple)
        publics = None
        if self.renderer is not None:
            publics = b"[" + b",".join(c.public.__pydantic_serializer__.to_json(c.public)
                                       for c in self.cases) + b"]"
        with tempfile.TemporaryFile() as header:
            pickle.dump((str(self.store_path), self.run_id, facts, self.parser, self.renderer,
                         publics), header, protocol=pickle.HIGHEST_PROTOCOL)
            header.flush()
            self._spawn(header.fileno())

    def _spawn(self, header: int) -> None:
        """Start the records process with its three pipes and the header file ``header``."""
        inbox_read, inbox_write = os.pipe()  # neither end is inherited by other children
        answers_read, answers_write = os.pipe()
        renders_read, renders_write = os.pipe()
        _enlarge(inbox_write)
        _enlarge(renders_write)
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)}
        try:  # OSError (no interpreter to start): the caller stores the records itself
            self._process = subprocess.Popen(
                [sys.executable, "-m", "authpairs.runs.record_process", str(header),
                 str(inbox_read), str(answers_write), str(renders_write)],
                pass_fds=(header, inbox_read, answers_write, renders_write),
                stdin=subprocess.DEVNULL, env=env)
        except OSError:
            for fd in (inbox_write, answers_read, renders_read):
                os.close(fd)
            raise
        finally:
            for fd in (inbox_read, answers_write, renders_write):
                os.close(fd)
        self._inbox = Connection(inbox_write, readable=False)
        self._answers = Connection(answers_read, writable=False)
        self._renders = Connection(renders_read, writable=False)
        self._renders_poll = select.poll()
        self._renders_poll.register(renders_read, select.POLLIN)

    def rendered(self, index: int) -> ChatRequest | None:
        """The request the records process rendered for ``self.cases[index]``, if it is ready
        (None: render it in this process). Indices must come in increasing order: requests for
        the cases passed over are dropped. When the records process, once rendering, cannot
        keep up with the run (none ready for :data:`BEHIND_LIMIT` cases in a row), it is told
        to stop."""
        ahead = self._ahead
        while True:
            while ahead and ahead[0][0] + len(ahead[0][1]) <= index:
                ahead.popleft()
            if ahead:
                start, requests = ahead[0]
                if index < start:  # that case was passed over there
                    return None
                self.rendered_ahead += 1
                self._behind = 0
                return ChatRequest(**requests[index - start])
            renders = self._renders
            if renders is None:
                return None
            if not self._renders_ready():
                if self._rendering:  # it has started, and is behind
                    self._behind += 1
                    if self._behind >= BEHIND_LIMIT:  # a fast reviewer: rendering here is
                        self._stop_rendering()      # cheaper than taking it from there
                return None
            try:
                ahead.append(pickle.loads(renders.recv_bytes()))
            except (EOFError, OSError):  # rendering there stopped: this process renders
                self._stop_rendering()
            else:
                self._rendering = True

    def _renders_ready(self) -> bool:
        """Whether requests rendered ahead wait in the pipe. Looks at most every
        :data:`RENDER_POLL_S` while none came (a look is a system call, and the run asks for
        every case it renders)."""
        now = time.monotonic()
        if now < self._next_look or self._renders_poll is None:
            return False
        if self._renders_poll.poll(0):
            return True
        self._next_look = now + RENDER_POLL_S
        return False

    def _stop_rendering(self) -> None:
        """Close the pipe of requests rendered ahead (the records process stops rendering)."""
        if self._renders is not None:
            self._renders.close()
            self._renders = None
            self._renders_poll = None

    def add_review(self, index: int, review: Review) -> None:
        """Buffer the review of ``self.cases[index]``; sends the batch when it is full."""
        self._buffered((index, review))

    def flush(self) -> None:
        """Send every buffered review to the records process now (one batch)."""
        self._collect(wait=False)
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        self._send([(index, review.to_wire()) for index, review in batch], len(batch))

    def _tick(self) -> None:
        self._collect(wait=False)

    def finish(self) -> None:
        """Send what is buffered, wait until the records process has stored everything, and
        let it exit. Raises :class:`RecordsError` if it could not store everything."""
        self._stop_rendering()  # no more cases to render: storing has the process to itself
        try:
            if self._failure is not None:  # the run is stopping because of it: say it again
                raise self._failure
            self.flush()
            self._collect(wait=True)
        finally:
            self._close()

    # -- internals ---------------------------------------------------------------------------
    def _send(self, message: object, cases: int) -> None:
        assert self._inbox is not None, "start() the records process first"
        self._unanswered += cases
        try:
            self._inbox.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:  # BrokenPipeError: the records process is gone
            self._collect(wait=True)  # raises, with the records process's own words if any
            raise self._stopped() from None

    def _collect(self, *, wait: bool) -> None:
        """Hand the records process's answers to ``on_stored``; with ``wait``, until every
        sent review is answered."""
        answers = self._answers
        while self._unanswered and answers is not None and (wait or answers.poll()):
            try:
                reply = pickle.loads(answers.recv_bytes())
            except (EOFError, OSError):
                raise self._stopped() from None
            if isinstance(reply, str):  # the records process failed and says why
                self._failure = RecordsError(
                    f"{self.store_path}: storing records: {reply} ({self._unanswered} finished "
                    f"cases were not stored; run the same command again to review them)")
                raise self._failure
            for index, stored in reply:
                self._unanswered -= 1
                self.on_stored(self.cases[index].case_id, stored)

    def _stopped(self) -> RecordsError:
        if self._failure is not None:
            return self._failure
        code = None
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5.0)
            code = self._process.returncode
        self._failure = RecordsError(
            f"{self.store_path}: the records process stopped (exit code {code}) before storing "
            f"{self._unanswered} finished cases; run the same command again to review them "
            f"(with {ENVIRONMENT}=never the run stores its records itself)")
        return self._failure

    def _close(self) -> None:
        self._stop_rendering()
        if self._inbox is not None:
            with contextlib.suppress(OSError):  # already gone
                self._inbox.send_bytes(_END)
            self._inbox.close()
            self._inbox = None
        if self._answers is not None:
            self._answers.close()
            self._answers = None
        if self._process is not None:
            try:
                self._process.wait(timeout=60.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


def _enlarge(fd: int) -> None:
    """Let the pipe hold :data:`PIPE_BYTES` (Linux; elsewhere it keeps its size)."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


def serve(header: BinaryIO, inbox: Connection, answers: Connection,
          renders: Connection) -> None:
    """The records process: read the run's ``header`` (its cases), store each batch it
    receives and answer what it stored, until the run says it is done or goes away; meanwhile
    render the run's cases ahead (when it sent a renderer) on ``renders``."""
    try:
        header.seek(0)  # the run wrote it through the same open file
        store_path, run_id, facts_json, parser, renderer, publics = pickle.load(header)
        header.close()
        facts = [CaseFacts(*row) for row in orjson.loads(facts_json)]
        store = RecordStore(store_path)
        store.checkpoint_every(CHECKPOINT_PAGES)
    except (EOFError, OSError):
        return
    except Exception as exc:
        _answer(answers, f"{type(exc).__name__}: {exc}")
        return
    ahead = RenderAhead(renderer, publics, renders, inbox)
    if renderer is not None and publics is not None:
        threading.Thread(target=ahead.run, daemon=True, name="render-ahead").start()
    else:
        renders.close()
    with store:
        while True:
            try:
                data = inbox.recv_bytes()
            except (EOFError, OSError):  # the run's process is gone: all it sent is stored
                return
            if data == _END:
                return
            batch: list[tuple[int, WireReview]] = pickle.loads(data)
            try:
                items: list[tuple[CaseRecord, list[AttemptRecord]]] = []
                for index, wire in batch:
                    review = Review.from_wire(wire, ahead.take(index))
                    record, attempts = build_records(run_id, facts[index], review, parser)
                    assert record is not None, "only answered reviews are sent"
                    items.append((record, attempts))
                stored = store.add_cases(items)
            except Exception as exc:
                _answer(answers, f"{type(exc).__name__}: {exc}")
                return
            _answer(answers, [(index, flag) for (index, _), flag in zip(batch, stored,
                                                                        strict=True)])


class RenderAhead:
    """The records process's rendering thread: renders the run's cases in order,
    :data:`RENDER_CHUNK` at a time, keeps each request and sends it to the run, until all are
    sent or the run stops reading (the pipe holds what the run has not read yet, so the thread
    is never far ahead). Storing comes first: while reviews wait in ``inbox``, it waits. Chunks
    the run has already passed (it rendered those cases itself, while this process started) are
    skipped. If rendering fails here, it stops: the run renders the rest itself, and meets the
    same error there."""

    def __init__(self, renderer: Renderer | None, publics_json: bytes | None,
                 renders: Connection, inbox: Connection) -> None:
        self.renderer = renderer
        self.publics_json = publics_json
        self.renders = renders
        self._inbox = select.poll()
        self._inbox.register(inbox.fileno(), select.POLLIN)
        self._known: dict[int, ChatRequest] = {}  # rendered here, handed to the run
        self._passed = -1  # the highest case index of any review received

    def take(self, index: int) -> ChatRequest | None:
        """The request rendered here for case ``index``, if it was (the review of that case
        has come back: the run is past it)."""
        self._passed = max(self._passed, index)
        return self._known.pop(index, None)

    def run(self) -> None:
        """Render and send until done (the thread's body)."""
        assert self.renderer is not None and self.publics_json is not None
        publics = orjson.loads(self.publics_json)
        try:
            for start in range(0, len(publics), RENDER_CHUNK):
                end = min(start + RENDER_CHUNK, len(publics))
                while self._inbox.poll(0):  # reviews to store: they go first
                    time.sleep(STORING_FIRST_S)
                if end <= self._passed:
                    continue
                chunk = []
                for index in range(start, end):
                    request = self.renderer.render(PublicCase.model_validate(publics[index]))
                    self._known[index] = request
                    chunk.append(vars(request))
                self.renders.send_bytes(pickle.dumps((start, chunk),
                                                     protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # a pipe the run closed, or a case that does not render here
            pass
        finally:
            self.renders.close()


def _answer(answers: Connection, reply: object) -> None:
    with contextlib.suppress(OSError):  # the run's process is gone; what was stored stays
        answers.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def main(argv: list[str]) -> None:
    """Entry point of the records process: ``python -m authpairs.runs.record_process HEADER IN
    OUT RENDERS`` (the descriptors of the header file and of the three pipes)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop
    with contextlib.suppress(OSError, AttributeError):
        # Background work: where it wakes up on the core the run is using, it waits for that
        # core or moves to another instead of preempting the run's process (which would hold up
        # the reviews). When the run waits for it, it gets the core all the same.
        os.nice(NICENESS)
    serve(os.fdopen(int(argv[0]), "rb"), Connection(int(argv[1]), writable=False),
          Connection(int(argv[2]), readable=False), Connection(int(argv[3]), readable=False))


if __name__ == "__main__":
    main(sys.argv[1:])
    # Everything is stored and the store closed: skip the interpreter's slow teardown, which
    # the run would otherwise wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
