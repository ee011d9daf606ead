"""Addressing runs for analysis: ``RUN_ID`` in the default records file, or ``PATH::RUN_ID``.

This is also where every run is checked before anything is decided on it: the loaders here (and
:func:`authpairs.report.runset.load_report_runs`, which uses :func:`check_verified`) recompute the
run's SHA-256 chain (:func:`authpairs.runs.audit.verify_chain`) and refuse a run that fails it
(:class:`UnverifiedRunError`, naming the run, the file and the first failing record). Inside
:func:`unverified_allowed` such a run is loaded instead and collected, so that the command can say
so in every output (:func:`unverified_notice`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authpairs.analysis.defaults import DEFAULT_RECORDS as DEFAULT_RECORDS
from authpairs.errors import AnalysisError, RecordsError
from authpairs.runs.chain import seal
from authpairs.runs.completeness import Completeness, completeness
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore, header_sha256


class RunNotFoundError(RecordsError, LookupError):
    """A run address names a missing records file or a run absent from it."""


class AgentRunError(AnalysisError):
    """A run cannot be analysed as the kind of run asked for: an agent run where a guardrail
    run's case records are analysed (they leave out every case the agent declined), a guardrail
    run where an agent run is needed, or an agent run whose calls or dataset cannot be read."""

    hint = ("'authpairs score RUN' and 'authpairs compare A B' score agent runs as a stack "
            "(authpairs.agent_score / agent_compare in Python; docs/agents.md); gate, compose "
            "and contrasts take guardrail runs")


def agent_runs(kinds: Mapping[str, bool],
               together: str = "compare two agent runs (stacks) or two guardrail runs") -> bool:
    """Whether the runs named in ``kinds`` (name -> whether it is an agent run) are agent runs;
    an :class:`AgentRunError` naming one of each kind (and saying what to do, ``together``)
    when agent runs and guardrail runs are mixed."""
    agent = next((name for name, kind in kinds.items() if kind), None)
    other = next((name for name, kind in kinds.items() if not kind), None)
    if agent is not None and other is not None:
        raise AgentRunError(f"'{agent}' is an agent run and '{other}' is not: {together}")
    return agent is not None


class UnverifiedRunError(RecordsError):
    """A run's records fail the integrity check, and unverified runs were not allowed."""


@dataclass(frozen=True)
class UnverifiedRun:
    """A run whose records failed the integrity check but were used as allowed."""

    path: Path
    run_id: str
    findings: int
    first: str

    def describe(self) -> str:
        """One line: which run, that it is unverified, and its first finding."""
        return (f"run {self.run_id} ({self.path}) is UNVERIFIED: its records fail the integrity "
                f"check ({self.findings} finding(s), first: {self.first})")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON outputs."""
        return {"run_id": self.run_id, "records": str(self.path), "findings": self.findings,
                "first": self.first}


@dataclass
class _Permit:
    """Unverified runs are allowed: those loaded so far, and whom to tell about each."""

    seen: list[UnverifiedRun] = field(default_factory=list)
    notify: Callable[[UnverifiedRun], None] | None = None


_PERMIT: ContextVar[_Permit | None] = ContextVar("authpairs_unverified_permit", default=None)


@contextmanager
def unverified_allowed(allow: bool = True, notify: Callable[[UnverifiedRun], None] | None = None
                       ) -> Iterator[list[UnverifiedRun]]:
    """Within the block, runs whose records fail the integrity check are loaded (when
    ``allow``) instead of refused; each is passed to ``notify`` when first loaded and collected
    in the yielded list. With ``allow=False`` they are refused, as outside any block."""
    permit = _Permit(notify=notify) if allow else None
    token = _PERMIT.set(permit)
    try:
        yield permit.seen if permit is not None else []
    finally:
        _PERMIT.reset(token)


def unverified_loaded() -> list[UnverifiedRun]:
    """The unverified runs loaded so far inside :func:`unverified_allowed` (else none)."""
    permit = _PERMIT.get()
    return list(permit.seen) if permit is not None else []


def unverified_notice() -> dict[str, list[str]]:
    """``{"unverified_runs": [run ids]}`` while unverified runs are in use, else ``{}``: what
    every JSON and CSV file written then carries."""
    runs = unverified_loaded()
    return {"unverified_runs": [r.run_id for r in runs]} if runs else {}


def check_verified(store: RecordStore, path: Path, run_id: str,
                   on_case: Callable[[CaseRecord], None] | None = None, *,
                   written: tuple[str, int] | None = None) -> UnverifiedRun | None:
    """Recompute the run's chain; None when it holds. A failing run raises
    :class:`UnverifiedRunError` unless :func:`unverified_allowed` is in force; then it is
    returned (and collected). ``on_case`` sees every readable case record on the way (see
    :func:`authpairs.runs.audit.verify_chain`): use them only when None is returned.

    ``written`` is the chain head and length that this process left when it created the run
    and wrote every entry itself (:attr:`authpairs.runs.orchestrator.RunProgress.written_chain`,
    e.g. for the summary right after a run). When the header still holds its own hash and
    ends there under a valid seal, the chain is the one this process just computed, and the
    case records are read as stored instead of being re-hashed; otherwise the whole chain is
    recomputed as without ``written``."""
    if written is not None and _ends_as_written(store, run_id, written):
        if on_case is not None:
            for record in store.iter_case_records(run_id):
                on_case(record)
        return None
    from authpairs.runs.audit import verify_chain  # the audit code only where it is used

    report = verify_chain(store, run_id, on_case)
    if report.ok:
        return None
    found = UnverifiedRun(path, run_id, len(report.findings), str(report.findings[0]))
    permit = _PERMIT.get()
    if permit is None:
        raise UnverifiedRunError(
            f"{path}: run '{run_id}' fails the integrity check of its records "
            f"({found.findings} finding(s), first: {found.first}); nothing is decided on "
            f"unverified records. Run 'authpairs audit {run_id} --records {path}' for every "
            "finding, or pass --allow-unverified to use the run anyway (every output then says "
            "so)")
    if found not in permit.seen:
        permit.seen.append(found)
        if permit.notify is not None:
            permit.notify(found)
    return found


def _ends_as_written(store: RecordStore, run_id: str, written: tuple[str, int]) -> bool:
    """Whether the run's header is unchanged (its hash) and its sealed chain ends at the head
    and length ``written``."""
    header = store.run_row(run_id)
    if header is None or header.get("header_sha256") != header_sha256(header):
        return False
    head, length = written
    return (header.get("chain_head") == head and header.get("chain_length") == length
            and store.schema_version >= 3
            and header.get("seal_sha256") == seal(header_sha256(header), head, length))


@dataclass(frozen=True)
class RunRef:
    """A run id within a records SQLite file."""

    path: Path
    run_id: str


def parse_run_ref(address: str, default_records: str | Path = DEFAULT_RECORDS) -> RunRef:
    """Parse ``RUN_ID`` or ``PATH::RUN_ID`` (the path may itself contain single colons)."""
    if "::" in address:
        path, _, run_id = address.rpartition("::")
        if not path or not run_id:
            raise RunNotFoundError(f"run address '{address}': expected PATH::RUN_ID")
        return RunRef(Path(path), run_id)
    if not address:
        raise RunNotFoundError("empty run address")
    return RunRef(Path(default_records), address)


def load_records(ref: RunRef) -> list[CaseRecord]:
    """All case records of the addressed run; a clear error when the file or run is missing.

    The records file is never created or changed by reading it (it may be read-only).
    """
    return load_records_and_info(ref)[1]


def open_store(ref: RunRef) -> RecordStore:
    """The addressed run's records file, opened read-only (never created or changed by
    reading it); :class:`RunNotFoundError` when there is no such file."""
    if not ref.path.is_file():
        raise RunNotFoundError(f"{ref.path}: records file not found (run '{ref.run_id}')")
    return RecordStore(ref.path, readonly=True)


def run_header(store: RecordStore, ref: RunRef) -> RunInfo:
    """The addressed run's header; :class:`RunNotFoundError` naming the runs the file holds
    when it has no such run."""
    info = store.get_run(ref.run_id)
    if info is None:
        known = [r.run_id for r in store.list_runs()]
        hint = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "")
        raise RunNotFoundError(f"{ref.path}: no run '{ref.run_id}'" + (
            f" (runs here: {hint})" if known else " (the file holds no runs)"))
    return info


def load_records_and_info(ref: RunRef) -> tuple[RunInfo, list[CaseRecord]]:
    """The run header and all case records of the addressed run (read-only), after its chain
    is verified (:func:`check_verified`)."""
    with open_store(ref) as store:
        info = run_header(store, ref)
        records: list[CaseRecord] = []
        if check_verified(store, ref.path, ref.run_id, records.append) is not None:
            return info, store.case_records(ref.run_id)  # unverified: read as stored
        return info, sorted(records, key=lambda r: r.case_id)  # the order case_records gives


def load_run(address: str, default_records: str | Path = DEFAULT_RECORDS
             ) -> tuple[RunRef, list[CaseRecord]]:
    """Parse an address and load its records (a guardrail run: an agent run is refused)."""
    ref, records, _ = load_run_checked(address, default_records)
    return ref, records


def load_run_checked(address: str, default_records: str | Path = DEFAULT_RECORDS
                     ) -> tuple[RunRef, list[CaseRecord], Completeness]:
    """Parse an address and load its records with their completeness (n of N expected); an
    agent run is refused: its case records leave out the cases the agent declined."""
    ref = parse_run_ref(address, default_records)
    info, records = load_records_and_info(ref)
    if info.is_agent_run:
        raise AgentRunError(f"'{ref.run_id}' is an agent run: its case records leave out the "
                            "cases the agent declined, so they are not analysed as a "
                            "guardrail run's")
    return ref, records, completeness(info, (r.case_id for r in records))
