"""The case browser's data: every recorded case of every run of a report, for the page.

:func:`case_data` turns the report's runs into one compact, column-wise JSON value: one entry
per case record (case-major: a case's records in every run lie together), the exact input and
raw answer of its formal attempt, the parse, the dispatch and the verified effect. Every text
(prompt messages, answers, effect and observation JSON, attributes) is stored once in a table of
distinct strings and referred to by index, so a prompt shared by eight runs costs its length
once. Transitions come from :func:`authpairs.analysis.compare.compare_outcomes` over the runs'
case outcomes (never re-derived here) for each pair of :func:`browser_pairs`: a guardrail pair
in the request transitions, an agent pair in the stack's.

:func:`embed_json` writes the value for a ``<script type="application/json">`` element: ASCII
only, with ``<``, ``>`` and ``&`` escaped, so no record text (``</script>``, ``<!--``, lone
surrogates, control characters, U+2028) can end the element or change what the page's
``JSON.parse`` reads back.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from authpairs.analysis.agent_runs import STACK_TRANSITIONS
from authpairs.analysis.compare import compare_outcomes
from authpairs.analysis.formatting import REQUEST_TRANSITIONS
from authpairs.analysis.outcomes import CaseOutcome, case_outcome
from authpairs.report.runset import ReportRun
from authpairs.report.sections import Section
from authpairs.runs.records import AttemptRecord, CaseRecord

__all__ = ["BROWSER_FORMAT", "MAX_PAIRED_RUNS", "TRANSITIONS", "browser_pairs", "case_data",
           "case_section", "embed_json"]

#: Version of the JSON value the page's script reads.
BROWSER_FORMAT = 1

#: Up to this many same-dataset runs, every pair (earlier -> later) gets transitions; with more,
#: consecutive pairs only (the ``--compare`` pair always comes first).
MAX_PAIRED_RUNS = 8

#: Transition keys in display order, with titles: a guardrail pair's (:data:`REQUEST_TRANSITIONS`,
#: ``lost`` split into denial / unavailability), then those only an agent pair has.
TRANSITIONS: tuple[tuple[str, str], ...] = tuple({
    f.key: f.title for names in (REQUEST_TRANSITIONS, STACK_TRANSITIONS)
    for f in (*names.lawful, *names.forbidden)}.items())
_LETTER = {key: chr(ord("a") + i) for i, (key, _) in enumerate(TRANSITIONS)}
_UNMATCHED = "."


def browser_pairs(runs: Sequence[ReportRun], compare: tuple[ReportRun, ReportRun] | None = None
                  ) -> list[tuple[ReportRun, ReportRun]]:
    """The run pairs whose transitions the browser filters by: the ``--compare`` pair first,
    then every same-dataset pair of runs of one kind (two guardrail runs, or two agent runs) in
    the order given (earlier = before) for up to :data:`MAX_PAIRED_RUNS` runs, else each run and
    the next such run."""
    same = [(a, b) for a, b in itertools.combinations(runs, 2)
            if a.info.manifest_sha256 == b.info.manifest_sha256
            and a.info.is_agent_run == b.info.is_agent_run]
    if len(runs) > MAX_PAIRED_RUNS:  # each run's first pair: with the next same-dataset run
        same = [next(firsts) for _, firsts in itertools.groupby(same, key=lambda p: p[0].name)]
    pairs: list[tuple[ReportRun, ReportRun]] = [compare] if compare is not None else []
    given = {(a.name, b.name) for a, b in pairs}
    return pairs + [(a, b) for a, b in same if (a.name, b.name) not in given]


class _Texts:
    """Distinct strings, each stored once and referred to by its index (-1: none)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        """Each string and its index, in the order added (the table is its keys)."""

    def ref(self, text: str | None) -> int:
        """The index of ``text`` in the table (added when new); -1 for None."""
        return -1 if text is None else self.index.setdefault(text, len(self.index))

    def json_ref(self, value: Any) -> int:
        """The index of ``value`` written as indented JSON (-1 for None or an empty dict)."""
        if value is None or value == {}:
            return -1
        return self.ref(json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False))


class _Columns:
    """The per-record columns of the browser data, filled one record at a time."""

    NAMES = ("run", "case", "label", "family", "cluster", "outcome", "reason", "dispatch",
             "through", "executed", "verified", "audit_ok", "effect_type", "effect",
             "observation", "effect_error", "prompt", "input_sha256", "answer", "reasoning",
             "finish", "checks", "infra", "errors", "attributes", "input_tokens", "output_tokens")
    """The columns; ``executed`` and ``audit_ok`` are -1 where nothing was enforced."""

    def __init__(self, texts: _Texts) -> None:
        self.texts = texts
        self.cols: dict[str, list[int]] = {name: [] for name in self.NAMES}
        self.prompts: list[dict[str, Any]] = []
        self._prompt_index: dict[str, int] = {}

    def _prompt(self, attempt: AttemptRecord | None) -> int:
        if attempt is None or attempt.request is None:
            return -1
        key = attempt.input_sha256
        found = self._prompt_index.get(key)
        if found is None:
            request = attempt.request
            ref = self.texts.ref
            self.prompts.append({
                "messages": [[ref(m.get("role", "")), ref(m.get("content", ""))]
                             for m in request.messages],
                "response_format": self.texts.json_ref(request.response_format),
                "raw_prompt": ref(request.prompt),
                "options": self.texts.json_ref(request.options)})
            found = self._prompt_index[key] = len(self.prompts) - 1
        return found

    def add(self, run: int, case: CaseOutcome, index: int, record: CaseRecord | None,
            attempts: Sequence[AttemptRecord]) -> None:
        """Append one case of a run: its outcome (the one per-case model), its record and
        attempts where it has them (an agent run's declined case has none)."""
        ref, json_ref = self.texts.ref, self.texts.json_ref
        formal = next((a for a in reversed(attempts) if a.kind == "formal"), None)  # the last one
        effect = getattr(record, "effect", None)  # getattr(None, name, default): no record
        errors = [a.error for a in attempts if a.kind != "formal" and a.error]
        enforced = effect if getattr(record, "enforced", False) else None  # decision-only: none
        row = {
            "run": run, "case": index, "label": ref(case.label), "cluster": ref(case.facts.cluster),
            "family": ref(case.facts.attributes.get("family")), "outcome": ref(case.outcome),
            "reason": ref(case.reason), "through": int(case.went_through),
            "dispatch": ref(record.dispatch.value if record is not None else None),
            "executed": -1 if enforced is None else int(enforced.executed),
            "verified": -1 if case.verified is None else int(case.verified),
            "audit_ok": -1 if enforced is None else int(enforced.audit_ok),
            "effect_type": ref(getattr(effect, "effect_type", None)),
            "effect": json_ref(getattr(effect, "effect", None)),
            "observation": json_ref(getattr(effect, "observation", None)),
            "effect_error": ref(getattr(effect, "error", None)), "prompt": self._prompt(formal),
            "input_sha256": ref(getattr(record, "input_sha256", None)),
            "answer": ref(getattr(formal, "output_text", None)),
            "reasoning": ref(getattr(formal, "reasoning_text", None)),
            "finish": ref(getattr(record, "finish_reason", None)),
            "checks": json_ref(getattr(record, "checks", None)),
            "infra": getattr(record, "infra_attempts", 0),
            "errors": ref("\n".join(errors) if errors else None),
            "attributes": json_ref(dict(case.facts.attributes)),
            "input_tokens": getattr(record, "input_tokens", 0),
            "output_tokens": getattr(record, "output_tokens", 0)}
        for name in self.NAMES:
            self.cols[name].append(row[name])


def case_data(runs: Sequence[ReportRun],
              pairs: Sequence[tuple[ReportRun, ReportRun]] = ()) -> dict[str, Any]:
    """Every case record of every run, column-wise, with deduplicated texts and the transition
    of each case in each pair (one letter per case id, ``.`` where the pair does not match it;
    see :data:`TRANSITIONS`)."""
    texts = _Texts()
    columns = _Columns(texts)
    outcomes = [score.cases if (score := run.agent_score) is not None  # offered cases
                else [case_outcome(r) for r in run.records] for run in runs]
    case_ids = sorted({c.case_id for cases in outcomes for c in cases})
    case_index = {cid: i for i, cid in enumerate(case_ids)}
    records = [{r.case_id: r for r in run.records} for run in runs]
    # case-major: a case's rows lie together, in run order (the sort is stable)
    for k, case in sorted(((k, c) for k, cases in enumerate(outcomes) for c in cases),
                          key=lambda item: item[1].case_id):
        cid = case.case_id
        columns.add(k, case, case_index[cid], records[k].get(cid), runs[k].attempts.get(cid, ()))
    position = {run.name: k for k, run in enumerate(runs)}
    pair_rows = []
    for before, after in pairs:
        codes = [_UNMATCHED] * len(case_ids)
        comparison = compare_outcomes(
            outcomes[position[before.name]], outcomes[position[after.name]],
            before_run=before.name, after_run=after.name,
            names=STACK_TRANSITIONS if before.info.is_agent_run else REQUEST_TRANSITIONS)
        for change in comparison.changes:  # a lost lawful case by its split of lost
            codes[case_index[change.case_id]] = _LETTER[change.lost_to or change.transition]
        pair_rows.append({"before": position[before.name], "after": position[after.name],
                          "unit": comparison.names.unit, "codes": "".join(codes)})
    return {
        "format": BROWSER_FORMAT,
        "runs": [{"name": r.name, "reviewer": r.reviewer, "dataset": r.dataset} for r in runs],
        "case_ids": case_ids,
        "transitions": [{"key": key, "title": title, "letter": _LETTER[key]}
                        for key, title in TRANSITIONS],
        "pairs": pair_rows,
        "prompts": columns.prompts,
        "texts": list(texts.index),
        "cases": columns.cols,
    }


def embed_json(value: Any) -> str:
    """``value`` as JSON text that is safe inside ``<script type="application/json">``: ASCII
    only (lone surrogates and control characters as ``\\u`` escapes, which ``JSON.parse`` reads
    back as the same code units) and no ``<``, ``>`` or ``&`` outside an escape."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def case_section(runs: Sequence[ReportRun],
                 compare: tuple[ReportRun, ReportRun] | None = None) -> Section:
    """The case browser section: every case record of ``runs``, filterable by run, label,
    family, decision, availability reason and transition (pairs of :func:`browser_pairs`)."""
    pairs = browser_pairs(runs, compare)
    data = case_data(runs, pairs)
    text = embed_json(data)
    n = len(data["cases"]["run"])
    section = Section("cases", "Case browser", intro=(
        "Every recorded case of every run: choose filters (run, reference label, family, "
        "decision, availability reason, and the transition of the case between two runs), then "
        "open a case to see the exact input the reviewer was given, its raw answer, what the "
        "strict parser made of it, what the enforcement point was told and the effect the "
        "independent verifier read back."), browser=text)
    section.notes.append(
        f"{n:,} case records of {len(runs)} run(s), {len(data['case_ids']):,} distinct cases; "
        f"transitions for {len(pairs)} run pair(s); {len(data['prompts']):,} distinct prompts "
        f"and {len(data['texts']):,} distinct texts, each stored once "
        f"({len(text) / 1e6:.1f} MB of case data in this page).")
    return section
