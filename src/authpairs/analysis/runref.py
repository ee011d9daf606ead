"""Addressing runs for analysis: ``RUN_ID`` in the default records file, or ``PATH::RUN_ID``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from authpairs.analysis.defaults import DEFAULT_RECORDS as DEFAULT_RECORDS
from authpairs.errors import RecordsError
from authpairs.runs.completeness import Completeness, completeness
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore


class RunNotFoundError(RecordsError, LookupError):
    """A run address names a missing records file or a run absent from it."""


@dataclass(frozen=True)
class RunRef:
    """A run id within a records SQLite file."""

    path: Path
    run_id: str

    @property
    def label(self) -> str:
        """A short display name: the run id."""
        return self.run_id


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


def load_records_and_info(ref: RunRef) -> tuple[RunInfo, list[CaseRecord]]:
    """The run header and all case records of the addressed run (read-only)."""
    if not ref.path.is_file():
        raise RunNotFoundError(f"{ref.path}: records file not found (run '{ref.run_id}')")
    with RecordStore(ref.path, readonly=True) as store:
        if store.get_run(ref.run_id) is None:
            known = [r.run_id for r in store.list_runs()]
            hint = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "")
            raise RunNotFoundError(
                f"{ref.path}: no run '{ref.run_id}'" + (f" (runs here: {hint})" if known
                                                        else " (the file holds no runs)"))
        info = store.get_run(ref.run_id)
        assert info is not None
        return info, store.case_records(ref.run_id)


def load_run(address: str, default_records: str | Path = DEFAULT_RECORDS
             ) -> tuple[RunRef, list[CaseRecord]]:
    """Parse an address and load its records."""
    ref = parse_run_ref(address, default_records)
    return ref, load_records(ref)


def load_run_checked(address: str, default_records: str | Path = DEFAULT_RECORDS
                     ) -> tuple[RunRef, list[CaseRecord], Completeness]:
    """Parse an address and load its records with their completeness (n of N expected)."""
    ref = parse_run_ref(address, default_records)
    info, records = load_records_and_info(ref)
    return ref, records, completeness(info, (r.case_id for r in records))
