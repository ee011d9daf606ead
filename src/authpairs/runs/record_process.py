"""Records built and stored by a second process, so a long run's own process only reviews.

:class:`RecordProcess` has the interface of :class:`~authpairs.runs.writer.RecordWriter`
(``add_review``, ``flush``, ``flush_when_due``, ``finish``) and the same batching policy: a batch
of finished reviews goes to the records process when it holds ``batch_size`` cases or its oldest
case is ``max_delay_s`` old. The records process (``python -m authpairs.runs.record_process``, a
fresh interpreter started at the beginning of the run, talking over two pipes) builds each case's
records (:func:`~authpairs.runs.reviewed.build_records`: input hash, raw output, reference fields,
and the parse where no enforcement point needed the decision first), stores each batch in one
transaction through its own :class:`~authpairs.runs.store.RecordStore` connection, and answers
which cases it stored. The run counts a case as recorded only then.

Guarantees (``docs/reliability.md``): a batch is stored whole or not at all, as before. If the
run's process is killed, the records process still stores every batch it had received, then
exits (it reads end-of-file). If the records process dies or fails, the run stops with a
:class:`~authpairs.errors.RecordsError` that says so; the cases it had not stored stay
unrecorded and claimed by a dead process, and the same command reviews them again.

A run uses a records process when it has at least :data:`MIN_CASES` cases to review;
``AUTHPAIRS_RECORD_PROCESS=always`` or ``never`` overrides that.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path

import orjson

from authpairs.cases.models import Case
from authpairs.errors import ConfigError, RecordsError
from authpairs.runs.records import AttemptRecord, CaseFacts, CaseRecord
from authpairs.runs.reviewed import Parser, Review, WireReview, build_records
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

#: The records process copies the WAL into the database file every this many pages (4 MiB), so
#: the run's process, which closes the file last, has little left to copy at the end.
CHECKPOINT_PAGES = 1000

_END = b""


def portable(parser: Parser) -> bool:
    """Whether ``parser`` can be sent to a records process (and parse there)."""
    try:
        pickle.dumps(parser, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # unpicklable state: it parses in the run's process
        return False
    return True


def wanted(pending: int) -> bool:
    """Whether a run with ``pending`` cases to review uses a records process."""
    choice = os.environ.get(ENVIRONMENT, "auto").strip().lower()
    if choice not in ("auto", "always", "never"):
        raise ConfigError(f"{ENVIRONMENT}={choice!r}: use always, never or auto")
    if os.name != "posix":  # the pipes are handed to the records process by descriptor
        return False
    if choice == "auto":
        return pending >= MIN_CASES
    return choice == "always" and pending > 0


class RecordProcess(Batches[tuple[int, Review]]):
    """Stores finished reviews through a records process (see the module docstring).

    ``on_stored(case_id, stored)`` is called in the run's process for every case once its batch
    has committed; ``stored`` is False when another process had recorded the case first.
    """

    #: Answers are collected at least this often (for progress and counts).
    poll_s = ANSWER_POLL_S

    def __init__(self, store_path: Path, run_id: str, cases: Sequence[Case],
                 on_stored: Callable[[str, bool], None], *, batch_size: int = 16,
                 max_delay_s: float = DEFAULT_MAX_DELAY_S, parser: Parser | None = None) -> None:
        super().__init__(batch_size, max_delay_s)
        self.parser = parser
        self.store_path = store_path
        self.run_id = run_id
        self.cases = cases
        self.on_stored = on_stored
        self._unanswered = 0
        self._failure: RecordsError | None = None  # once raised, raised again by finish()
        self._process: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None   # the run writes reviews here
        self._answers: Connection | None = None  # and reads what was stored here

    def start(self) -> None:
        """Start the records process and send it the run's cases."""
        inbox_read, inbox_write = os.pipe()  # neither end is inherited by other children
        answers_read, answers_write = os.pipe()
        _enlarge(inbox_write)
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)}
        try:  # OSError (no interpreter to start): the caller stores the records itself
            self._process = subprocess.Popen(
                [sys.executable, "-m", "authpairs.runs.record_process", str(inbox_read),
                 str(answers_write)], pass_fds=(inbox_read, answers_write),
                stdin=subprocess.DEVNULL, env=env)
        except OSError:
            os.close(inbox_write)
            os.close(answers_read)
            raise
        finally:
            os.close(inbox_read)
            os.close(answers_write)
        self._inbox = Connection(inbox_write, readable=False)
        self._answers = Connection(answers_read, writable=False)
        # The cases' facts as JSON: several times faster to write and read than pickled tuples.
        facts = orjson.dumps([CaseFacts.of(c) for c in self.cases], default=tuple)
        header = (str(self.store_path), self.run_id, facts, self.parser)
        self._send(header, 0)

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


def serve(inbox: Connection, answers: Connection) -> None:
    """The records process: store each batch it receives and answer what it stored, until the
    run says it is done or goes away."""
    try:
        store_path, run_id, facts_json, parser = pickle.loads(inbox.recv_bytes())
        facts = [CaseFacts(*row) for row in orjson.loads(facts_json)]
        store = RecordStore(store_path)
        store.checkpoint_every(CHECKPOINT_PAGES)
    except (EOFError, OSError):
        return
    except Exception as exc:
        _answer(answers, f"{type(exc).__name__}: {exc}")
        return
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
                    record, attempts = build_records(run_id, facts[index],
                                                     Review.from_wire(wire), parser)
                    assert record is not None, "only answered reviews are sent"
                    items.append((record, attempts))
                stored = store.add_cases(items)
            except Exception as exc:
                _answer(answers, f"{type(exc).__name__}: {exc}")
                return
            _answer(answers, [(index, flag) for (index, _), flag in zip(batch, stored,
                                                                        strict=True)])


def _answer(answers: Connection, reply: object) -> None:
    with contextlib.suppress(OSError):  # the run's process is gone; what was stored stays
        answers.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def main(argv: list[str]) -> None:
    """Entry point of the records process: ``python -m authpairs.runs.record_process IN OUT``
    (the descriptors of the two pipes)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop
    with contextlib.suppress(OSError, AttributeError):
        # Background work: where it wakes up on the core the run is using, it waits for that
        # core or moves to another instead of preempting the run's process (which would hold up
        # the reviews). When the run waits for it, it gets the core all the same.
        os.nice(NICENESS)
    serve(Connection(int(argv[0]), writable=False), Connection(int(argv[1]), readable=False))


if __name__ == "__main__":
    main(sys.argv[1:])
    # Everything is stored and the store closed: skip the interpreter's slow teardown, which
    # the run would otherwise wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
