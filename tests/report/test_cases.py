"""The case browser's data: every case record of every run, texts and prompts stored once,
transitions as compare_records classifies them, and any record text safe inside the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from authpairs.analysis.compare import compare_records
from authpairs.analysis.formatting import REQUEST_TRANSITIONS
from authpairs.analysis.outcomes import outcome_of
from authpairs.backends.base import ChatRequest
from authpairs.report.build import build_report
from authpairs.report.cases import (
    MAX_PAIRED_RUNS,
    TRANSITIONS,
    browser_pairs,
    case_data,
    embed_json,
)
from authpairs.report.request import ReportRequest
from authpairs.report.runset import ReportRun, load_report_runs
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import AttemptRecord, CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from tests.report.conftest import RecordedRuns

#: Texts a model may return that could break a page or lose code units on the way.
HOSTILE = ("</script><script>console.error('escaped')</script><!-- <b>&amp; \ud800 lone, "
           "\udfff low, \x00\x1f\x7f controls, \u2028\u2029 separators, \U0001F600 astral, "
           "</SCRIPT >")
#: The same without lone surrogates: a reviewer input is rendered from a case, valid Unicode.
VALID = HOSTILE.replace("\ud800", "").replace("\udfff", "")


def _runs(recorded: RecordedRuns, *names: str) -> list[ReportRun]:
    return load_report_runs(list(names), recorded.db)


def test_every_case_of_every_run_is_present(recorded: RecordedRuns) -> None:
    runs = _runs(recorded, *recorded.baselines, *recorded.loose, *recorded.strict,
                 recorded.incomplete)
    data = case_data(runs, browser_pairs(runs))
    cols, texts = data["cases"], data["texts"]
    n = sum(len(r.records) for r in runs)
    assert n > 300 and all(len(v) == n for v in cols.values())
    seen = [(data["runs"][k]["name"], data["case_ids"][c])
            for k, c in zip(cols["run"], cols["case"], strict=True)]
    assert sorted(seen) == sorted((r.name, rec.case_id) for r in runs for rec in r.records)
    assert seen == sorted(seen, key=lambda s: s[1])  # case-major: a case's runs together
    records = {(r.name, rec.case_id): (rec, r.attempts[rec.case_id]) for r in runs
               for rec in r.records}
    with_prompt = 0
    for i, key in enumerate(seen):
        record, attempts = records[key]
        formal = [a for a in attempts if a.kind == "formal"][-1]
        assert texts[cols["label"][i]] == record.label
        assert texts[cols["outcome"][i]] == outcome_of(record)
        assert texts[cols["dispatch"][i]] == record.dispatch.value
        assert (cols["reason"][i] < 0) == (record.reason_code is None)
        assert cols["through"][i] == int(record.went_through)
        assert texts[cols["input_sha256"][i]] == record.input_sha256
        answer = cols["answer"][i]
        assert (texts[answer] if answer >= 0 else None) == formal.output_text
        if cols["prompt"][i] >= 0:
            with_prompt += 1
            prompt = data["prompts"][cols["prompt"][i]]
            messages = [{"role": texts[r], "content": texts[c]} for r, c in prompt["messages"]]
            assert formal.request is not None and messages == formal.request.messages
            request = ChatRequest(messages=messages, response_format=(
                json.loads(texts[prompt["response_format"]])
                if prompt["response_format"] >= 0 else None))
            assert request.sha256() == record.input_sha256  # the exact input, not a copy
    assert with_prompt == n  # every run here was recorded with its inputs kept


def test_texts_and_prompts_are_stored_once(recorded: RecordedRuns) -> None:
    runs = _runs(recorded, *recorded.loose, *recorded.strict)
    data = case_data(runs)
    texts = data["texts"]
    assert len(set(texts)) == len(texts)
    assert len(data["prompts"]) == 40  # five runs of one interface over 40 cases
    system = [t for t in texts if t.startswith("You are an authorization reviewer")]
    assert len(system) == 1  # the shared system message once, not 200 times
    naive = sum(len(json.dumps(a.request.model_dump() if a.request else None))
                for r in runs for atts in r.attempts.values() for a in atts)
    assert len(embed_json(data)) < naive / 3


def test_transitions_are_those_of_compare_records(recorded: RecordedRuns) -> None:
    runs = _runs(recorded, *recorded.loose, *recorded.strict)
    before, after = runs[0], runs[3]
    pairs = browser_pairs(runs, (before, after))
    assert pairs[0] == (before, after) and len(pairs) == 10  # the --compare pair, then all
    data = case_data(runs, pairs)
    letter = {t["key"]: t["letter"] for t in data["transitions"]}
    assert [t["key"] for t in data["transitions"]] == [k for k, _ in TRANSITIONS]
    codes = data["pairs"][0]["codes"]
    comparison = compare_records(before.records, after.records)
    index = {cid: i for i, cid in enumerate(data["case_ids"])}
    for change in comparison.changes:  # a lost lawful request by its split of lost
        assert codes[index[change.case_id]] == letter[change.lost_to or change.transition]
    counts = comparison.counts()
    assert data["pairs"][0]["unit"] == "requests"
    for key in (f.key for f in (*REQUEST_TRANSITIONS.lawful, *REQUEST_TRANSITIONS.forbidden)):
        shown = codes.count(letter[key])
        if key == "lost":  # lost requests that split count under their split
            shown += codes.count(letter["lost_denied"]) + codes.count(letter["lost_unavailable"])
        assert shown == counts[key], key
    assert counts["lost"] > 0 and len(set(codes)) >= 4


def test_browser_pairs(recorded: RecordedRuns) -> None:
    runs = _runs(recorded, *recorded.baselines, recorded.other_dataset, *recorded.loose)
    names = [(a.name, b.name) for a, b in browser_pairs(runs, (runs[3], runs[0]))]
    assert names[0] == ("loose-s0", "allow") and len(names) == len(set(names))
    assert not [p for p in names if recorded.other_dataset in p]  # other dataset: no pair
    assert len(names) == 1 + 10  # the --compare pair and the 10 pairs of 5 language runs
    many = [_fake_run(f"r{k}", "m") for k in range(MAX_PAIRED_RUNS + 2)]
    many.insert(3, _fake_run("elsewhere", "other"))
    consecutive = [(a.name, b.name) for a, b in browser_pairs(many)]
    assert consecutive == [(f"r{k}", f"r{k + 1}") for k in range(MAX_PAIRED_RUNS + 1)]


def _fake_run(name: str, manifest: str) -> ReportRun:
    from authpairs.analysis.runref import RunRef

    info = RunInfo(run_id=name, created_at="2026-01-01T00:00:00+00:00", config={},
                   config_sha256="0" * 64, manifest={}, manifest_sha256=manifest)
    return ReportRun(RunRef(Path("x.sqlite"), name), info, [])


def test_embed_json_is_safe_and_reads_back() -> None:
    value = {"texts": [HOSTILE, "plain"], "n": [1, -1]}
    text = embed_json(value)
    assert text.isascii() and not set("<>&") & set(text)
    assert "</script" not in text.lower() and "<!--" not in text
    assert json.loads(text) == value  # lone surrogates and controls come back as they were
    assert json.loads(text)["texts"][0].encode("utf-16-le", "surrogatepass") == HOSTILE.encode(
        "utf-16-le", "surrogatepass")


def hostile_records(db: Path, with_input: bool = True) -> str:
    """One run of two cases whose answer and attributes hold :data:`HOSTILE` (the first case
    with its exact input kept, the second, when ``with_input`` is False, without)."""
    request = ChatRequest(messages=[{"role": "user", "content": "review " + VALID}])
    with RecordStore(db) as store:
        store.open_run(RunInfo(run_id="hostile", created_at="2026-01-01T00:00:00+00:00",
                               config={}, config_sha256="1" * 64,
                               manifest={"name": "hostile:test", "n_cases": 2},
                               manifest_sha256="hostile-manifest"))
        for k, label in enumerate(("lawful", "forbidden")):
            case_id = f"H-{k}</script>"
            record = CaseRecord(
                run_id="hostile", case_id=case_id, input_sha256=request.sha256(),
                status=OutcomeStatus.UNAVAILABLE, reason_code="not_json",
                dispatch=Dispatch.BLOCK, label=label, cluster="c</script>",
                attributes={"family": "f<!--", "note": HOSTILE})
            attempt = AttemptRecord(
                run_id="hostile", case_id=case_id, attempt_no=1, kind="formal",
                input_sha256=request.sha256(), output_text=HOSTILE,
                request=request if with_input or k == 0 else None)
            store.add_case(record, [attempt])
        store.add_case(CaseRecord(
            run_id="hostile", case_id="H-allow", input_sha256="0" * 64,
            status=OutcomeStatus.DECISION, decision=Decision.ALLOW, dispatch=Dispatch.ALLOW,
            label="forbidden", cluster="c"), [])
    return "hostile"


def test_hostile_record_texts_survive_the_page(tmp_path: Path) -> None:
    db = tmp_path / "hostile.sqlite"
    hostile_records(db, with_input=False)
    result = build_report(ReportRequest(runs=["hostile"], out=tmp_path / "r", records=db,
                                        draws=100))
    html = result.html.read_text(encoding="utf-8")
    assert html.count("</script>") == 2  # the data element's and the script's own
    payload = re.search(r'<script type="application/json" id="case-data">(.*?)</script>',
                        html, re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert data["texts"][data["cases"]["answer"][0]] == HOSTILE
    assert data["case_ids"] == ["H-0</script>", "H-1</script>", "H-allow"]
    assert data["cases"]["prompt"] == [0, -1, -1]  # kept, not kept, no attempt at all
    assert data["texts"][data["prompts"][0]["messages"][0][1]] == "review " + VALID
