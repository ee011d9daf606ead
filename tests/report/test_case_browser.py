"""The case browser in headless Chromium: 2,000 cases x 8 runs load and filter quickly, every
filter's count equals the records, a case opens with its exact prompt and raw answer, the page
still reads at 1,400 and 390 px, and hostile record texts come back code unit for code unit.

Load and filter times are printed (``-s``) and bounded only generously (they depend on the
machine); bench/bench_report.py --cases writes them to bench/results/report_cases.md.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from authpairs.analysis.compare import compare_records
from authpairs.analysis.outcomes import outcome_of
from authpairs.api import agent_compare
from authpairs.report.build import build_report
from authpairs.report.request import ReportRequest
from authpairs.report.runset import load_report_runs
from tests.agent_records import record_agent_and_plain_runs
from tests.report.browser import (
    case_browser_filter,
    case_browser_open,
    case_browser_state,
    check_page,
    chromium_session,
    page_problems,
)
from tests.report.conftest import BROWSER_TEST
from tests.report.synthetic import case_id, request_for, write_synthetic
from tests.report.test_cases import HOSTILE, hostile_records

pytestmark = BROWSER_TEST  # starts Chromium

#: Generous bounds (ms): the check is that the page works at this size, not a benchmark.
LOAD_BOUND_MS = 10_000
FILTER_BOUND_MS = 5_000


def test_2000_cases_by_8_runs(tmp_path: Path) -> None:
    synthetic = write_synthetic(tmp_path / "many.sqlite", n_cases=2000, n_runs=8)
    runs = list(synthetic.runs)
    result = build_report(ReportRequest(runs=runs, out=tmp_path / "r", records=synthetic.db,
                                        compare=(runs[0], runs[1]), draws=200))
    size_mb = result.html.stat().st_size / 1e6
    loaded = load_report_runs(runs, synthetic.db)
    records = [(r.name, rec) for r in loaded for rec in r.records]
    assert len(records) == 16_000
    lost = [c.case_id for c in compare_records(loaded[0].records, loaded[1].records).lawful
            if c.transition == "lost"]
    with chromium_session(timeout=120) as session:
        session.set_width(1400)
        session.open(result.html.resolve().as_uri())
        state = case_browser_state(session)
        assert (state.records, state.count) == (16_000, 16_000)
        assert state.rows == 50  # one page of rows, never 16,000
        assert state.title == f"{case_id(0)} in {runs[0]}"  # the first case opened
        by_label = case_browser_filter(session, [("label", "lawful")])
        assert by_label["count"] == sum(rec.lawful for _, rec in records) == 8000
        outcomes = Counter((name, outcome_of(rec)) for name, rec in records)
        narrow = case_browser_filter(session, [("label", ""), ("run", runs[3]),
                                               ("outcome", "unavailable")])
        assert narrow["count"] == outcomes[(runs[3], "unavailable")] > 0
        assert narrow["rows"] == min(50, narrow["count"])
        families = Counter(rec.attributes["family"] for _, rec in records)
        family = case_browser_filter(session, [("run", ""), ("outcome", ""),
                                               ("family", "ownership")])
        assert family["count"] == families["ownership"]
        transition = case_browser_filter(session, [("family", ""), ("pair", "0"),
                                                   ("transition", "lost")])
        assert transition["count"] == 2 * len(lost) > 0  # the lost cases in both runs
        opened = case_browser_open(session, 1)
        shown_id = opened["title"].split(" in ")[0]
        shown_run = opened["title"].split(" in ")[1]
        assert shown_id in lost and shown_run in runs[:2]
        i = int(shown_id.split("-")[1])
        assert opened["prompt"] == request_for(i).messages[-1]["content"]
        run = next(r for r in loaded if r.name == shown_run)
        assert opened["answer"] == run.attempts[shown_id][0].output_text
        for part in ("Prompt (the exact input)", "Raw answer", "Parse", "Dispatch",
                     "Verified effect", "input SHA-256"):
            assert part in opened["detail"]
        assert page_problems(session) == []
    print(f"\ncase browser, 2,000 cases x 8 runs: page {size_mb:.1f} MB; data parsed at "
          f"{state.parse_ms:.0f} ms, first list at {state.first_list_ms:.0f} ms, load event at "
          f"{state.load_ms:.0f} ms after navigation; filters: label {by_label['ms']:.0f} ms, "
          f"run+decision {narrow['ms']:.0f} ms, family {family['ms']:.0f} ms, transition "
          f"{transition['ms']:.0f} ms")
    assert state.first_list_ms < LOAD_BOUND_MS
    assert max(f["ms"] for f in (by_label, narrow, family, transition)) < FILTER_BOUND_MS
    check = check_page(result.html, timeout=120)  # the big page still reads at both widths
    assert check.ok, check.problems()


def test_hostile_texts_read_back_in_the_browser(tmp_path: Path) -> None:
    db = tmp_path / "hostile.sqlite"
    hostile_records(db)
    result = build_report(ReportRequest(runs=["hostile"], out=tmp_path / "r", records=db,
                                        draws=100))
    with chromium_session() as session:
        session.open(result.html.resolve().as_uri())
        state = case_browser_state(session)
        assert (state.records, state.count) == (3, 3)
        units = session.evaluate("""JSON.stringify((() => {
          const d = JSON.parse(document.getElementById('case-data').textContent);
          const s = d.texts[d.cases.answer[0]];
          return Array.from({length: s.length}, (_, i) => s.charCodeAt(i));
        })())""")
        raw = HOSTILE.encode("utf-16-le", "surrogatepass")
        assert units == [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]
        opened = case_browser_open(session, 0)
        assert opened["title"] == "H-0</script> in hostile"
        assert "</script><script>console.error('escaped')</script>" in opened["answer"]
        assert page_problems(session) == []  # the answer's own script never ran
        assert session.evaluate("JSON.stringify(document.scripts.length)") == 2


def test_two_agent_runs_pair_in_the_stacks_transitions(tmp_path: Path) -> None:
    """Two agent runs pair in the browser with the stack's transitions, counted in cases: lost
    selects every lost case (its splits too) in both runs, and a split selects its own."""
    records = record_agent_and_plain_runs(tmp_path / "records.sqlite")
    result = build_report(ReportRequest(runs=["open", "crafted", "plain"], records=records,
                                        out=tmp_path / "r", compare=("open", "crafted"),
                                        draws=100))
    changes = agent_compare(f"{records}::open", f"{records}::crafted",
                            draws=10).comparison.changes
    lost = [c for c in changes if c.transition == "lost"]
    declined = [c for c in lost if c.lost_to == "lost_declined"]
    with chromium_session(timeout=120) as session:
        session.open(result.html.resolve().as_uri())
        shown = case_browser_filter(session, [("pair", "0"), ("transition", "lost")])
        assert shown["count"] == 2 * len(lost) > 0
        split = case_browser_filter(session, [("transition", "lost to declining")])
        assert split["count"] == 2 * len(declined) > 0
        options = session.evaluate("JSON.stringify(Array.from(document.getElementById("
                                   "'cb-filter-transition').options, o => o.textContent))")
        assert [o for o in options[1:] if not o.endswith(" cases)")] == []
        assert page_problems(session) == []
