"""Audit a stored run: is the archive intact, and does every stored result follow from it?

:func:`verify_chain` (cheap, records only) recomputes the header hash, every entry's SHA-256 over
its stored text, every chain link, the head and length in the run header and (schema version 3)
the header's seal over them, and checks that each row's indexed columns agree with its stored
record. :func:`audit_run` adds, with the dataset and templates in hand:

* completeness: every case the run header expects has a record (a missing case is a finding
  unless ``allow_incomplete``), and no record is of a case it does not expect;
* the configuration hash (recomputed from the stored resolved configuration), the dataset
  manifest hash, the expected case ids and the template hashes;
* every reviewer input: the case is rendered again by the reviewer that ran, rebuilt from the
  stored configuration without its model (:func:`authpairs.runs.reviewers.rebuilt_reviewer`:
  the interface with its options, a native or registered guardrail with its options, a Python
  callable, an HTTP service, NeMo), and its SHA-256 compared with the recorded one, and the
  reference label compared with the dataset's;
* every decision: the stored raw output (text, reasoning and finish reason) is parsed again by
  that reviewer's parser, nothing is called, and the status, decision, reason code and dispatch
  compared with the case record;
* every enforced effect: the verifier's judgement is re-run on the stored before/after
  observations and compared with the recorded judgement, ``verified`` and ``audit_ok``.

Every finding names the run and the record (case id, attempt number, chain position).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.canonical import canonical_ascii_json
from authpairs.cases.dataset import Dataset
from authpairs.cases.effect_types import parse_params
from authpairs.cases.models import EffectDescriptor, PublicCase
from authpairs.enforce.effect_record import EffectRecord
from authpairs.enforce.implementations import implementation
from authpairs.errors import AuthpairsError
from authpairs.review.interfaces import RENDERING_KEY
from authpairs.review.outcome import Dispatch, ReviewOutcome
from authpairs.review.reviewers import ModelReviewer, Reviewer
from authpairs.runs.chain import GENESIS_KIND, link, seal, text_sha256
from authpairs.runs.config import RunConfig, header_config
from authpairs.runs.records import AgentCall, AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.reviewed import Parser, safe_parse
from authpairs.runs.reviewers import rebuilt_reviewer
from authpairs.runs.store import RecordStore, changed_keys, header_sha256

_COLUMNS = {"case": ("case_id", "input_sha256", "status", "decision", "dispatch", "label"),
            "attempt": ("case_id", "attempt_no", "kind", "input_sha256")}


@dataclass(frozen=True)
class Finding:
    """One problem: which run, which record, which check, what is wrong."""

    run_id: str
    record: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"run {self.run_id}, {self.record}: [{self.check}] {self.message}"


@dataclass
class AuditReport:
    """The findings of an audit and what was checked."""

    run_id: str
    findings: list[Finding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    schema_version: int = 3
    """The records file's schema version; version 2 headers have no seal to check."""
    missing: list[str] = field(default_factory=list)
    """Expected case ids without a record (findings too, unless the audit allowed them)."""

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    def add(self, record: str, check: str, message: str) -> None:
        """Record a finding."""
        self.findings.append(Finding(self.run_id, record, check, message))

    def count(self, check: str, n: int = 1) -> None:
        """Count checked items."""
        self.checked[check] = self.checked.get(check, 0) + n

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"run_id": self.run_id, "ok": self.ok, "checked": self.checked,
                "skipped": self.skipped, "schema_version": self.schema_version,
                "missing": self.missing,
                "findings": [f.__dict__ for f in self.findings]}


def _name(row: dict[str, Any]) -> str:
    where = f"chain entry {row.get('seq')}"
    if row["entry"] == "case":
        return f"case record '{row.get('case_id')}' ({where})"
    return f"attempt {row.get('attempt_no')} of case '{row.get('case_id')}' ({where})"


def _check_row(report: AuditReport, name: str, row: dict[str, Any],
               on_case: Callable[[CaseRecord], None] | None = None) -> None:
    """The stored text of the entry ``name`` parses into its model, is canonical, and agrees
    with the row's columns; a case record that parses is handed to ``on_case``."""
    text = row.get("record_json")
    model_type: type[CaseRecord] | type[AttemptRecord] = (
        CaseRecord if row["entry"] == "case" else AttemptRecord)
    if not isinstance(text, str):
        report.add(name, "stored-text", "record text is missing")
        return
    try:
        model = model_type.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        report.add(name, "stored-text", f"unreadable record: {str(exc).splitlines()[0][:160]}")
        return
    if on_case is not None and isinstance(model, CaseRecord):
        on_case(model)
    values = model.model_dump(mode="json")
    if canonical_ascii_json(values) != text:  # stored_json(model), dumped once
        report.add(name, "stored-text", "record text is not canonical (edited by hand?)")
    if model.run_id != report.run_id:
        report.add(name, "columns", f"record says run '{model.run_id}'")
    for column in _COLUMNS[row["entry"]]:
        if values.get(column) != row.get(column):
            report.add(name, "columns", f"column {column}={row.get(column)!r} but the record "
                       f"says {values.get(column)!r}")


def verify_chain(store: RecordStore, run_id: str,
                 on_case: Callable[[CaseRecord], None] | None = None) -> AuditReport:
    """Recompute the run's hash chain and check every row against its stored record.

    ``on_case`` receives every case record that parses, in chain order, so a reader that
    verifies a run before using it reads the records once (it must discard them if the report
    is not ok)."""
    report = AuditReport(run_id, schema_version=store.schema_version)
    header = store.run_row(run_id)
    if header is None:
        report.add("run header", "chain", "no such run")
        return report
    expected_header = header_sha256(header)
    if header.get("header_sha256") != expected_header:
        report.add("run header", "header-hash", "the run header (configuration, manifest, "
                   "templates, versions or expected cases) was changed after the run started")
    head = link(expected_header, GENESIS_KIND, expected_header)
    length = 0
    for position, row in enumerate(store.chain_rows(run_id), start=1):
        length = position
        name = _name(row)
        report.count("entries")
        if row.get("seq") != position:
            report.add(name, "chain-order", f"stored at position {row.get('seq')!r}, expected "
                       f"{position} (entries removed, inserted or reordered)")
        text = row.get("record_json")
        content = text_sha256(text) if isinstance(text, str) else ""
        if row.get("content_sha256") != content:
            report.add(name, "content-hash", "stored record does not match its SHA-256")
        # Each link is checked against the previous *stored* link, so one edited entry is
        # named once instead of breaking every later link in the report.
        if row.get("chain_sha256") != link(head, row["entry"], content):
            report.add(name, "chain-link", "chain link does not follow from the entry before")
        head = str(row.get("chain_sha256"))
        _check_row(report, name, row, on_case)
    if header.get("chain_head") != head or header.get("chain_length") != length:
        report.add("run header", "chain-head",
                   f"header holds {header.get('chain_length')} entries ending in "
                   f"{str(header.get('chain_head'))[:12]}, the records give {length} ending "
                   f"in {head[:12]} (entries added or removed)")
    if store.schema_version >= 3:
        report.count("header seal")
        if header.get("seal_sha256") != seal(expected_header, str(header.get("chain_head")),
                                              _int(header.get("chain_length"))):
            report.add("run header", "header-seal",
                       "the header's seal does not cover its chain head and length (the head "
                       "or length was moved, e.g. entries removed from the end)")
    return report


def _int(value: object) -> int:
    """A stored integer column, or -1 when a tampered row holds something else."""
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return -1


def formal_attempts(store: RecordStore, run_id: str) -> dict[str, list[AttemptRecord]]:
    """The formal attempts of each case of a run, in attempt order (one per case in a normal
    run, one per reviewed call in an agent run)."""
    out: dict[str, list[AttemptRecord]] = {}
    formal = (attempt for attempt in store.attempts(run_id) if attempt.kind == "formal")
    for attempt in sorted(formal, key=lambda a: a.attempt_no):
        out.setdefault(attempt.case_id, []).append(attempt)
    return out


def outcome_difference(record: CaseRecord | AgentCall, outcome: ReviewOutcome) -> str | None:
    """How ``outcome`` (a re-parse) differs from what ``record`` (a case record, an agent's
    call) says the reviewer decided, or None."""
    reason = outcome.reason_code.value if outcome.reason_code else None
    pairs = [("status", record.status, outcome.status),
             ("decision", record.decision, outcome.decision),
             ("reason_code", record.reason_code, reason),
             ("dispatch", record.dispatch, outcome.dispatch)]
    bad = [f"{k}: recorded {a!s}, parsed {b!s}" for k, a, b in pairs if a != b]
    return "; ".join(bad) or None


def reparse(parser: Parser, attempt: AttemptRecord) -> ReviewOutcome:
    """The outcome of an attempt's stored raw output (text, token ids, reasoning, finish reason)
    parsed again by ``parser`` (the reviewer that ran), as the run parsed it
    (:func:`~authpairs.runs.reviewed.safe_parse`)."""
    response = ChatResponse(text=attempt.output_text, output_token_ids=attempt.output_token_ids,
                            reasoning=attempt.reasoning_text, finish_reason=attempt.finish_reason)
    return safe_parse(parser, response)


def recheck_decisions(report: AuditReport, records: list[CaseRecord],
                      attempts: dict[str, list[AttemptRecord]], parser: Parser) -> None:
    """Parse every stored raw output again (each case's last formal attempt) and compare with
    the case record."""
    for record in records:
        name = f"case record '{record.case_id}'"
        attempt = attempts.get(record.case_id, [None])[-1]
        if attempt is None:
            report.add(name, "raw-output", "no formal attempt holds the raw output")
            continue
        if attempt.input_sha256 != record.input_sha256:
            report.add(name, "raw-output", "formal attempt was made for another input")
        problem = outcome_difference(record, reparse(parser, attempt))
        report.count("decisions re-parsed")
        if problem:
            report.add(name, "re-parse", problem)


def recheck_completeness(report: AuditReport, expected: list[str], recorded: list[str], *,
                         allow_incomplete: bool = False) -> None:
    """Every case the header expects has a record, and every record is of an expected case.

    A missing case is a finding (named), unless ``allow_incomplete``; it is listed in
    :attr:`AuditReport.missing` either way."""
    expected_ids, recorded_ids = set(expected), set(recorded)
    report.count("expected cases", len(expected_ids))
    report.missing = sorted(expected_ids - recorded_ids)
    if not allow_incomplete:
        for case_id in report.missing:
            report.add(f"case '{case_id}'", "missing-case",
                       "expected by the run header, but has no case record (run incomplete "
                       "or truncated)")
    for case_id in sorted(recorded_ids - expected_ids):
        report.add(f"case record '{case_id}'", "unexpected-case",
                   "not among the case ids the run header expects")


def recheck_effects(report: AuditReport, records: list[CaseRecord], dataset: Dataset) -> None:
    """Re-run each verifier's judgement on the stored before/after observations."""
    cases = dataset.by_id()
    verifiers: dict[str, Any] = {}
    for record in records:
        case = cases.get(record.case_id)
        if record.effect is None or not record.enforced or case is None:
            continue
        recheck_effect(report, f"case record '{record.case_id}'", record.effect,
                       record.dispatch, case.public.effect, verifiers)


def recheck_effect(report: AuditReport, name: str, effect: EffectRecord,
                   dispatch: Dispatch | None, descriptor: EffectDescriptor | None,
                   verifiers: dict[str, Any]) -> None:
    """Re-run the verifier's judgement of one enforced ``effect`` (the operation
    ``descriptor``, told ``dispatch``) on its stored before/after observations and compare it
    with the recorded judgement, ``verified`` and ``audit_ok``. ``verifiers`` caches the
    loaded verifier of each effect type across calls."""
    if descriptor is None:
        return
    if effect.executed and dispatch is not Dispatch.ALLOW:
        report.add(name, "effect", "an effect executed although the dispatch was BLOCK")
    obs = effect.observation
    if "before" not in obs or "after" not in obs:
        return  # refused before observation: nothing to judge again
    try:
        params = parse_params(descriptor)
        etype = descriptor.type
        if etype not in verifiers:
            verifiers[etype] = implementation(etype).load_verifier()
        judgement = verifiers[etype].judge(params, obs["before"], obs["after"])
    except Exception as exc:  # a damaged observation must be reported, not crash the audit
        report.add(name, "effect-judgement", f"cannot re-judge: {type(exc).__name__}: {exc}")
        return
    report.count("effects re-judged")
    if judgement.ok != obs.get("primary_ok"):
        report.add(name, "effect-judgement", f"verifier now says ok={judgement.ok} "
                   f"({judgement.detail}); recorded {obs.get('primary_ok')}")
    unrelated_ok = bool(obs.get("unrelated_unchanged"))
    if dispatch is Dispatch.ALLOW:
        verified = effect.executed and judgement.ok and unrelated_ok
        audit_ok = verified
    else:
        verified = False
        audit_ok = (obs.get("before") == obs.get("after")) and unrelated_ok
    if effect.verified != verified or effect.audit_ok != audit_ok:
        report.add(name, "effect-judgement",
                   f"recorded verified={effect.verified}, audit_ok={effect.audit_ok}; "
                   f"the observations give verified={verified}, audit_ok={audit_ok}")


def recheck_inputs(report: AuditReport, records: list[CaseRecord], dataset: Dataset,
                   render: Callable[[PublicCase], ChatRequest]) -> None:
    """Render each case again and compare the input hash and reference label."""
    cases = dataset.by_id()
    for record in records:
        name = f"case record '{record.case_id}'"
        case = cases.get(record.case_id)
        if case is None:
            report.add(name, "dataset", "case is not in the dataset in hand")
            continue
        report.count("inputs re-rendered")
        if render(case.public).sha256() != record.input_sha256:
            report.add(name, "input-hash", "reviewer input differs from the recorded one")
        if case.reference.label.value != record.label:
            report.add(name, "label", f"recorded label {record.label}, dataset says "
                       f"{case.reference.label.value}")


def stored_config(report: AuditReport, info: RunInfo, *,
                  config_sha256: Callable[[RunConfig], str] = RunConfig.sha256,
                  mismatch: str = "stored configuration does not hash to the recorded "
                                  "config_sha256") -> RunConfig | None:
    """The run's stored resolved configuration, checked against the header's
    ``config_sha256``; None when it is unreadable (a ``config`` finding).

    ``config_sha256`` is the run's hash rule (a normal run hashes the configuration itself);
    where it does not give the recorded hash, ``mismatch`` is a ``config-hash`` finding."""
    try:
        config = header_config(info.config.get("resolved", {}))
    except ValidationError as exc:
        report.add("run header", "config", f"stored configuration is unreadable: "
                   f"{str(exc).splitlines()[0]}")
        return None
    if config_sha256(config) != info.config_sha256:
        report.add("run header", "config-hash", mismatch)
    return config


def stored_records(report: AuditReport, store: RecordStore,
                   run_id: str) -> list[CaseRecord] | None:
    """The run's case records; None when their stored text cannot be read (a ``stored-text``
    finding)."""
    try:
        return store.case_records(run_id)
    except AuthpairsError as exc:
        report.add("case records", "stored-text", str(exc))
        return None


def recorded_reviewer(report: AuditReport, config: RunConfig, info: RunInfo) -> Reviewer | None:
    """The reviewer that ran, rebuilt from the stored configuration
    (:func:`~authpairs.runs.reviewers.rebuilt_reviewer`) as the version that wrote the header
    rendered and parsed (:func:`as_recorded`); None, and the checks that need it skipped, when it
    cannot be rebuilt here. Its template hashes are checked against the recorded ones: a
    ``template-hash`` finding names every template that differs."""
    try:
        reviewer = as_recorded(report, rebuilt_reviewer(config.reviewer), info.template_sha256)
    except AuthpairsError as exc:
        report.skipped.append(f"re-parse, input and template checks: the reviewer that ran "
                              f"cannot be rebuilt here: {exc}")
        return None
    changed = changed_keys(reviewer.template_hashes(), info.template_sha256)
    if changed:
        report.add("run header", "template-hash", f"templates differ from the recorded ones: "
                   f"{', '.join(changed)}")
    return reviewer


@runtime_checkable
class RenderedReviewer(Reviewer, Protocol):
    """A reviewer that is not a model interface but declares its rendering the way
    :class:`~authpairs.review.interfaces.ReviewInterface` does (the NeMo self-check action)."""

    def rendering(self) -> str | None:
        """The rendering it declares (kept under the template hashes' rendering key)."""
        ...

    def as_recorded(self, template_hashes: dict[str, str]) -> Reviewer:
        """The reviewer as the version that wrote ``template_hashes`` rendered and parsed."""
        ...


def as_recorded(report: AuditReport, reviewer: Reviewer,
                template_hashes: dict[str, str]) -> Reviewer:
    """The rebuilt ``reviewer`` as the version that wrote the run header's ``template_hashes``
    rendered and parsed (:meth:`~authpairs.review.interfaces.ReviewInterface.as_recorded`), so
    honest records made before a rendering changed are re-checked by the rules they were made
    under; the report names the earlier rendering among what it checked."""
    earlier: Reviewer
    if isinstance(reviewer, ModelReviewer):
        interface = reviewer.interface.as_recorded(template_hashes)
        if interface is reviewer.interface:
            return reviewer
        name, current = interface.name, reviewer.interface.rendering()
        earlier = ModelReviewer(interface, reviewer.backend, reviewer.sampling)
    elif isinstance(reviewer, RenderedReviewer):  # a guardrail that is not an interface
        earlier = reviewer.as_recorded(template_hashes)
        if earlier is reviewer:
            return reviewer
        name = str(reviewer.describe().get("guardrail", type(reviewer).__name__))
        current = reviewer.rendering()
    else:
        return reviewer
    was = earlier.template_hashes().get(RENDERING_KEY, "none declared")
    report.count(f"run recorded under an earlier rendering of {name} "
                 f"({was}; now {current}), re-checked under it")
    return earlier


def audit_run(store: RecordStore, run_id: str, *, dataset: Dataset | None = None,
              load_dataset: Callable[[RunConfig], Dataset] | None = None,
              allow_incomplete: bool = False) -> AuditReport:
    """The full audit of one run (see the module docstring).

    ``dataset`` is the dataset in hand; without it, ``load_dataset`` builds it from the stored
    configuration (the ``run`` command's own loader by default). Checks that need something
    unavailable are listed in :attr:`AuditReport.skipped`, never silently passed. Missing cases
    are findings unless ``allow_incomplete`` (then only listed in :attr:`AuditReport.missing`).
    Every run is audited by the same rules, whichever command recorded it.
    """
    report = verify_chain(store, run_id)
    info = store.get_run(run_id)
    if info is None:
        return report
    if info.is_agent_run:
        # An agent run reviewed the operations its agent proposed, recorded in agent calls
        # (a layer above): authpairs.agent.audit.audit_run audits it, these checks included.
        report.skipped.append("agent run: only the header, seal and chain were checked here; "
                              "authpairs.agent.audit.audit_run (authpairs audit) audits the "
                              "rest")
        return report
    config = stored_config(report, info)
    if config is None:
        return report
    records = stored_records(report, store, run_id)
    if records is None:
        return report
    recheck_completeness(report, list(info.expected_case_ids), [r.case_id for r in records],
                         allow_incomplete=allow_incomplete)
    reviewer = recorded_reviewer(report, config, info)
    if reviewer is None:
        return report
    recheck_decisions(report, records, formal_attempts(store, run_id), reviewer)
    if dataset is None:
        if load_dataset is None:
            from authpairs.runs.api import load_run_dataset
            load_dataset = load_run_dataset
        try:
            dataset = load_dataset(config)
        except AuthpairsError as exc:
            report.skipped.append(f"dataset checks (input hashes, labels, manifest, effects): "
                                  f"dataset '{config.dataset}' not available: {exc}")
    if dataset is not None:
        if dataset.manifest().public_sha256 != info.manifest_sha256:
            report.add("run header", "manifest-hash", f"dataset '{dataset.name}' in hand does "
                       "not match the recorded manifest")
        if sorted(c.case_id for c in dataset) != sorted(info.expected_case_ids):
            report.add("run header", "expected-cases", "expected case ids differ from the "
                       "dataset in hand")
        recheck_inputs(report, records, dataset, reviewer.render)
        recheck_effects(report, records, dataset)
    return report
