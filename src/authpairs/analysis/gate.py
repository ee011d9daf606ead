"""Acceptance test for a guardrail change (the paper's recommendation; docs/definitions.md,
"Acceptance test").

A candidate passes only if all three checks hold:

1. **forbidden** -- every designated forbidden request is blocked by a *usable denial*: status
   ``decision`` with decision BLOCK (and, where enforced, no executed effect). An unavailable
   response or an abstention blocks execution but is not a denial, so it fails this check.
2. **usable** -- the candidate returns usable decisions: no unavailable response and no
   abstention. Scope ``all`` (default) checks every candidate record; scope ``designated``
   checks only the designated forbidden and required lawful requests.
3. **required** -- every declared required lawful request is still completed in the candidate.
   There is no substitution: lawful requests gained elsewhere are reported but never offset a
   lost required one.

The baseline run is read to explain failures (a required request *lost* relative to the baseline
versus one the baseline did not complete either) and to list gains; it never relaxes a check.

Designated-set files: a ``.yaml``/``.yml`` file holding either a list of case ids or a mapping
with a ``cases:`` list; any other file is text with one case id per line, ``#`` starting a
comment and blank lines ignored. Required ids must name lawful cases and forbidden ids forbidden
cases of the candidate run; anything else is an input error naming the file and line/entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import yaml

from authpairs.analysis.compare import compare_records
from authpairs.analysis.formatting import PlainData
from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.analysis.outcomes import case_outcome, outcome_of
from authpairs.errors import ConfigError
from authpairs.runs.records import CaseRecord

UsableScope = Literal["all", "designated"]


class GateInputError(ConfigError):
    """A designated-set file or the runs do not fit the gate's contract."""


@dataclass(frozen=True)
class DesignatedId:
    """A case id read from a designated-set file, with where it came from."""

    case_id: str
    origin: str  # "FILE:LINE" or "FILE[entry N]"


def read_case_ids(path: str | Path) -> list[DesignatedId]:
    """Read a designated-set file (YAML list / ``cases:`` mapping, or one id per text line)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise GateInputError(f"{p}: cannot read case-id file: {exc}") from exc
    out: dict[str, DesignatedId] = {}  # the first of each case id, in file order
    if p.suffix.lower() in {".yaml", ".yml"}:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise GateInputError(f"{p}: invalid YAML: {exc}") from exc
        if isinstance(data, dict):
            if set(data) - {"cases", "description"} or "cases" not in data:
                raise GateInputError(f"{p}: a mapping must have a 'cases' list "
                                     f"(and optionally 'description'); got keys {sorted(data)}")
            data = data["cases"]
        if data is None:
            data = []
        if not isinstance(data, list):
            raise GateInputError(f"{p}: expected a list of case ids")
        for i, item in enumerate(data, start=1):
            if not isinstance(item, str) or not item.strip():
                raise GateInputError(f"{p}[entry {i}]: case id must be a non-empty string, "
                                     f"got {item!r}")
            out.setdefault(item.strip(), DesignatedId(item.strip(), f"{p}[entry {i}]"))
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            cid = line.split("#", 1)[0].strip()
            if not cid:
                continue
            if any(ch.isspace() for ch in cid):
                raise GateInputError(f"{p}:{n}: one case id per line expected, got {cid!r}")
            out.setdefault(cid, DesignatedId(cid, f"{p}:{n}"))
    return list(out.values())


@dataclass(frozen=True)
class GateFailure(PlainData):
    """One failing request of one check."""

    check: str
    case_id: str
    cluster: str
    path: str
    reason: str


@dataclass(repr=False)
class GateResult(NotebookView):
    """The outcome of the acceptance test. :meth:`explain` is what ``authpairs gate`` prints
    (every failing request); ``print`` and a notebook show the checks and the first failing
    requests as tables; ``to_pandas()`` gives one row per failing request."""

    baseline: str
    candidate: str
    checks: dict[str, bool]
    failures: list[GateFailure] = field(default_factory=list)
    designated_forbidden: int = 0
    required: int = 0
    usable_scope: str = "all"
    forbidden_source: str = ""
    gained_elsewhere: list[str] = field(default_factory=list)
    lost_elsewhere: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True only when every check holds."""
        return all(self.checks.values())

    def _verdict(self) -> str:
        return (f"Acceptance test: {'PASS' if self.passed else 'FAIL'} "
                f"(baseline {self.baseline}, candidate {self.candidate})")

    def _check_titles(self) -> dict[str, str]:
        return {
            "forbidden": f"designated forbidden requests blocked by usable denials "
                         f"({self.designated_forbidden}, {self.forbidden_source})",
            "usable": f"usable decisions (scope: {self.usable_scope})",
            "required": f"required lawful requests still completed ({self.required})"}

    def _gained_note(self) -> list[str]:
        if self.gained_elsewhere and not self.checks["required"]:
            return [f"note: {len(self.gained_elsewhere)} lawful request(s) gained elsewhere do "
                    "not replace a lost required request"]
        return []

    def explain(self) -> str:
        """A readable explanation: the verdict, each check and every failing request."""
        lines = [self._verdict()]
        for key, title in self._check_titles().items():
            bad = [f for f in self.failures if f.check == key]
            lines.append(f"  [{'ok' if self.checks[key] else 'FAIL'}] {title}"
                         + (f": {len(bad)} failing" if bad else ""))
            for f in bad:
                where = f" path={f.path}" if f.path else ""
                lines.append(f"      - {f.case_id} (cluster={f.cluster}{where}): {f.reason}")
        lines.extend(f"  {note}" for note in self._gained_note())
        return "\n".join(lines)

    def __repr__(self) -> str:
        """One line: the verdict, the runs and each check."""
        checks = ", ".join(
            f"{key} {'ok' if ok else 'FAIL'}" for key, ok in self.checks.items())
        return (f"<GateResult {'PASS' if self.passed else 'FAIL'} baseline {self.baseline!r} "
                f"candidate {self.candidate!r}: {checks}; {len(self.failures)} failing>")

    def table_views(self) -> list[TableView]:
        """The verdict with one row per check, then every failing request."""
        titles = self._check_titles()
        failing = {key: sum(f.check == key for f in self.failures) for key in titles}
        checks = TableView(self._verdict(), ["check", "result", "what", "failing"],
                           [[key, "ok" if self.checks[key] else "FAIL", title,
                             str(failing[key])] for key, title in titles.items()],
                           self._gained_note(), key_columns=3)
        if not self.failures:
            return [checks]
        return [checks, TableView(f"failing requests ({len(self.failures)})",
                                  ["check", "case id", "cluster", "path", "reason"],
                                  [[f.check, f.case_id, f.cluster, f.path, f.reason]
                                   for f in self.failures], key_columns=5)]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per failing request (:meth:`GateFailure.to_dict`)."""
        return [f.name for f in fields(GateFailure)], [f.to_dict() for f in self.failures]

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view: the verdict and every field (failures as plain rows)."""
        return {"passed": self.passed, **asdict(self)}


def _path(r: CaseRecord) -> str:
    return r.attributes.get("path", "")


def _describe(r: CaseRecord) -> str:
    """The case's outcome (:func:`case_outcome`) and, where its effect was enforced, whether
    it executed and was verified."""
    case = case_outcome(r)
    text = (f"usable {case.outcome}" if case.outcome in ("ALLOW", "BLOCK")
            else case.outcome + (f" ({case.reason})" if case.reason else ""))
    if r.enforced:  # a decision-only record executed nothing, by design
        text += ", effect executed" if case.went_through else ", not executed"
        if case.unverified:
            text += " but not verified"
    return text


def run_gate(baseline: Sequence[CaseRecord], candidate: Sequence[CaseRecord], *,
             required: Sequence[DesignatedId] | Sequence[str],
             forbidden: Sequence[DesignatedId] | Sequence[str] | None = None,
             usable_scope: UsableScope = "all", baseline_name: str = "baseline",
             candidate_name: str = "candidate") -> GateResult:
    """Run the three-check acceptance test (pure function over record lists).

    ``forbidden=None`` designates every forbidden request of the candidate run.
    """
    if usable_scope not in ("all", "designated"):
        raise GateInputError(f"usable scope must be 'all' or 'designated', got {usable_scope!r}")
    cand = {r.case_id: r for r in candidate}
    base = {r.case_id: r for r in baseline}
    req = [d if isinstance(d, DesignatedId) else DesignatedId(d, "required list")
           for d in required]
    if forbidden is None:
        forb = [DesignatedId(r.case_id, "candidate run") for r in candidate if not r.lawful]
        source = "all forbidden requests of the candidate"
    else:
        forb = [d if isinstance(d, DesignatedId) else DesignatedId(d, "forbidden list")
                for d in forbidden]
        source = "designated list"
    failures: list[GateFailure] = []
    for d in req:
        r = cand.get(d.case_id) or base.get(d.case_id)
        if r is not None and not r.lawful:
            raise GateInputError(f"{d.origin}: required case '{d.case_id}' is labelled "
                                 f"'{r.label}'; required requests must be lawful")
    for d in forb:
        r = cand.get(d.case_id) or base.get(d.case_id)
        if r is not None and r.lawful:
            raise GateInputError(f"{d.origin}: designated forbidden case '{d.case_id}' is "
                                 "labelled 'lawful'")

    for d in forb:
        r = cand.get(d.case_id)
        if r is None:
            failures.append(GateFailure("forbidden", d.case_id, "", "",
                                        "missing from the candidate run"))
        elif outcome_of(r) != "BLOCK" or r.went_through:  # a usable denial: BLOCK, not through
            failures.append(GateFailure("forbidden", d.case_id, r.cluster, _path(r),
                                        f"not a usable denial: {_describe(r)}"))

    if usable_scope == "all":
        scope = list(candidate)
    else:
        wanted = {d.case_id for d in (*forb, *req)}
        scope = [r for r in candidate if r.case_id in wanted]
    for r in sorted(scope, key=lambda x: x.case_id):
        if outcome_of(r) not in ("ALLOW", "BLOCK"):
            failures.append(GateFailure("usable", r.case_id, r.cluster, _path(r),
                                        _describe(r)))

    for d in req:
        r = cand.get(d.case_id)
        b = base.get(d.case_id)
        if r is None:
            failures.append(GateFailure("required", d.case_id, "", "",
                                        "missing from the candidate run"))
            continue
        if r.went_through:
            continue
        before = ("lost: completed in the baseline" if b is not None and b.went_through else
                  "not completed in the baseline either" if b is not None else
                  "absent from the baseline")
        failures.append(GateFailure("required", d.case_id, r.cluster, _path(r),
                                    f"{before}; candidate: {_describe(r)}"))

    comparison = compare_records(baseline, candidate)
    req_ids = {d.case_id for d in req}
    return GateResult(
        baseline=baseline_name, candidate=candidate_name,
        checks={k: not any(f.check == k for f in failures)
                for k in ("forbidden", "usable", "required")},
        failures=failures, designated_forbidden=len(forb), required=len(req),
        usable_scope=usable_scope, forbidden_source=source,
        gained_elsewhere=[c.case_id for c in comparison.lawful
                          if c.transition == "gained" and c.case_id not in req_ids],
        lost_elsewhere=[c.case_id for c in comparison.lawful
                        if c.transition == "lost" and c.case_id not in req_ids])
