"""The runs a report reads: records, run metadata, completeness and configuration identity."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from authpairs.analysis.agent_runs import AgentRunScore, load_agent_score
from authpairs.analysis.runref import (
    DEFAULT_RECORDS,
    RunRef,
    UnverifiedRun,
    check_verified,
    open_store,
    parse_run_ref,
    run_header,
)
from authpairs.cases.canonical import sha256_hex
from authpairs.report.reviewer_name import name_run
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore


class ReportInputError(ValueError):
    """Runs that cannot be reported together as asked; the message names the runs."""


@dataclass(frozen=True)
class ReportRun:
    """One recorded run with its metadata, as the report reads it."""

    ref: RunRef
    info: RunInfo
    records: list[CaseRecord]
    unverified: UnverifiedRun | None = None
    """Set when the run's records fail the integrity check and were used as allowed."""
    attempts: dict[str, list[AttemptRecord]] = field(default_factory=dict)
    """Every attempt of each recorded case (by case id, in order): the exact input and raw
    answer of the formal one, the transport errors of the others."""

    @property
    def name(self) -> str:
        """Display name: the run id."""
        return self.ref.run_id

    @property
    def expected(self) -> int | None:
        """Cases the run's dataset selection holds (from the stored manifest)."""
        n = self.info.manifest.get("n_cases")
        return n if isinstance(n, int) else None

    @property
    def missing(self) -> int:
        """Selected cases without a record (0 when complete or unknown; an agent run's cases
        without a record were declined by the agent, not missing)."""
        if self.info.is_agent_run:
            return 0
        return max(0, (self.expected or 0) - len(self.records))

    @property
    def complete(self) -> bool:
        """True when every selected case has a record."""
        return self.missing == 0

    @property
    def resolved_config(self) -> dict[str, Any]:
        """The resolved run configuration stored with the run ({} when absent)."""
        resolved = self.info.config.get("resolved")
        return resolved if isinstance(resolved, dict) else {}

    @property
    def dataset(self) -> str:
        """The dataset selection's name from the manifest, e.g. 'language:dev'."""
        return str(self.info.manifest.get("name", "?"))

    @property
    def seed(self) -> int | None:
        """The sampling seed of the reviewer, if any."""
        seed = self.resolved_config.get("reviewer", {}).get("sampling", {}).get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def reviewer(self) -> str:
        """One-line name of the reviewer that ran, from the stored configuration
        (:attr:`~authpairs.report.reviewer_name.ReviewerName.label`): interface, guardrail or
        baseline, how it was asked, and the model it called."""
        return name_run(self.info.config).label

    @cached_property
    def agent_score(self) -> AgentRunScore | None:
        """An agent run's stack score (every offered case's
        :class:`~authpairs.analysis.agent_runs.StackCase`, declined ones too); None for a
        guardrail run."""
        return (load_agent_score(f"{self.ref.path}::{self.ref.run_id}")
                if self.info.is_agent_run else None)

    def configuration_key(self) -> str:
        """Identity of the configuration without its seed: runs sharing it are seeds of one
        configuration (same dataset manifest, same settings otherwise)."""
        config = {k: v for k, v in self.resolved_config.items() if k not in ("run_id", "records")}
        reviewer = dict(config.get("reviewer", {}))
        sampling = dict(reviewer.get("sampling", {}))
        sampling.pop("seed", None)
        reviewer["sampling"] = sampling
        config["reviewer"] = reviewer
        if not self.resolved_config:  # no stored configuration: every run stands alone
            config = {"config_sha256": self.info.config_sha256}
        return sha256_hex({"config": config, "manifest": self.info.manifest_sha256})[:12]


def load_report_runs(addresses: Iterable[str], default_records: str | Path = DEFAULT_RECORDS
                     ) -> list[ReportRun]:
    """Load every addressed run (``RUN_ID`` or ``PATH::RUN_ID``), each once, in order.

    Raises :class:`RunNotFoundError` naming the run and file when one does not exist, and
    :class:`~authpairs.analysis.runref.UnverifiedRunError` when one fails the integrity check
    (unless allowed, :func:`~authpairs.analysis.runref.unverified_allowed`). The records file is
    opened read-only, never created or changed by reading it.
    """
    runs: list[ReportRun] = []
    stores: dict[Path, RecordStore] = {}
    try:
        for address in addresses:
            ref = parse_run_ref(address, default_records)
            if any(run.ref == ref for run in runs):  # named twice: loaded once
                continue
            if ref.path not in stores:
                stores[ref.path] = open_store(ref)
            store = stores[ref.path]
            info = run_header(store, ref)
            unverified = check_verified(store, ref.path, ref.run_id)
            attempts: dict[str, list[AttemptRecord]] = defaultdict(list)
            for attempt in store.attempts(ref.run_id):
                attempts[attempt.case_id].append(attempt)
            runs.append(ReportRun(ref, info, store.case_records(ref.run_id),
                                  unverified, dict(attempts)))
    finally:
        for store in stores.values():
            store.close()
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ReportInputError(f"run id(s) {dupes} appear in several records files; report "
                               "runs with distinct ids")
    return runs


def same_dataset(a: ReportRun, b: ReportRun, what: str) -> None:
    """Raise :class:`ReportInputError` unless both runs reviewed the same dataset manifest."""
    if a.info.manifest_sha256 != b.info.manifest_sha256:
        raise ReportInputError(
            f"{what}: runs '{a.name}' ({a.dataset}, manifest {a.info.manifest_sha256[:12]}) and "
            f"'{b.name}' ({b.dataset}, manifest {b.info.manifest_sha256[:12]}) reviewed "
            "different datasets; compare runs on the same cases")


class RunIndex:
    """The loaded runs, addressable by the argument that named them."""

    def __init__(self, runs: Sequence[ReportRun], default: Path) -> None:
        self.runs = list(runs)
        self.default = default
        self._by_ref = {(r.ref.path, r.ref.run_id): r for r in runs}

    def get(self, address: str) -> ReportRun:
        """The run an address (``RUN_ID`` or ``PATH::RUN_ID``) names."""
        ref: RunRef = parse_run_ref(address, self.default)
        return self._by_ref[(ref.path, ref.run_id)]
