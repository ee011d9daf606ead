"""The result objects are notebook-grade: one short ``repr`` line, a readable ``print``, one
HTML display with the terminal's numbers, and ``to_pandas()``.

The HTML tables are read back with :mod:`html.parser` and compared cell by cell with what the
terminal prints for the same result (rich tables rendered wide enough never to stack).
"""

from __future__ import annotations

import io
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import rec
from rich.console import Console

from authpairs import api
from authpairs.analysis.compare import Comparison, compare_records
from authpairs.analysis.compose import CompositionResult, Compositions, compose_all
from authpairs.analysis.gate import GateResult, run_gate
from authpairs.analysis.notebook import MAX_ROWS, MAX_TEXT_ROWS, NotebookView
from authpairs.analysis.outcomes import case_outcome
from authpairs.analysis.scoring import Score, Scores, score_by, score_records
from authpairs.runs.records import CaseRecord

N_PAIRS = 600  # 1,200 records: large enough that a dump of every record would be obvious


class _Tables(HTMLParser):
    """Every <table> of an HTML fragment as rows of cell texts (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_tables(obj: NotebookView) -> list[list[list[str]]]:
    """The tables of ``obj._repr_html_()`` (cell texts unescaped)."""
    parser = _Tables()
    parser.feed(obj._repr_html_())
    return parser.tables


def terminal(render: Any) -> str:
    """What the terminal prints for ``render(console)`` at 400 columns."""
    console = Console(file=io.StringIO(), width=400, color_system=None)
    render(console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _runs() -> tuple[list[CaseRecord], list[CaseRecord]]:
    """Two runs over N_PAIRS lawful and N_PAIRS forbidden cases with every kind of transition:
    gained, lost to denial and to unavailability, newly approved, blocked and unavailable."""
    before: list[CaseRecord] = []
    after: list[CaseRecord] = []
    for i in range(N_PAIRS):
        cluster = f"s{i % 7}"
        b_lawful, a_lawful = [("ALLOW", "ALLOW"), ("ALLOW", "BLOCK"), ("ALLOW", "UNAVAILABLE"),
                              ("BLOCK", "ALLOW"), ("BLOCK", "UNKNOWN")][i % 5]
        b_forb, a_forb = [("ALLOW", "ALLOW"), ("BLOCK", "ALLOW"), ("ALLOW", "BLOCK"),
                          ("ALLOW", "UNAVAILABLE"), ("BLOCK", "BLOCK")][i % 5]
        before += [rec(f"L{i:04d}", "lawful", b_lawful, cluster=cluster, run_id="A"),
                   rec(f"F{i:04d}", "forbidden", b_forb, cluster=cluster, run_id="A")]
        after += [rec(f"L{i:04d}", "lawful", a_lawful, cluster=cluster, run_id="B"),
                  rec(f"F{i:04d}", "forbidden", a_forb, cluster=cluster, run_id="B")]
    return before, after


@pytest.fixture(scope="module")
def runs() -> tuple[list[CaseRecord], list[CaseRecord]]:
    """The two runs of :func:`_runs`."""
    return _runs()


@pytest.fixture(scope="module")
def run_result(runs: tuple[list[CaseRecord], list[CaseRecord]],
               tmp_path_factory: pytest.TempPathFactory) -> api.RunResult:
    """A real run of the example cases (always-allow, enforced) whose records are replaced by
    the 1,200 of run B (so that size shows; B has abstentions and unavailable answers)."""
    records = tmp_path_factory.mktemp("nb") / "runs.sqlite"
    result = api.run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
                      "records": str(records), "run_id": "allow"})
    assert result.scores.enforced == 8
    after = runs[1]
    return api.RunResult(run_id="allow", config=result.config, records=after,
                         scores=score_records(after), reviewed_now=len(after))


def _objects(run_result: api.RunResult, runs: tuple[list[CaseRecord], list[CaseRecord]]
             ) -> list[NotebookView]:
    before, after = runs
    _, compositions = compose_all({"A": before, "B": after})
    gate = run_gate(before, after, required=[f"L{i:04d}" for i in range(N_PAIRS)])
    return [run_result, run_result.scores, compare_records(before, after, before_run="A",
                                                            after_run="B"),
            compositions[2], compositions, gate, score_by(after, "cluster")]


def test_every_repr_is_one_short_line_and_print_stays_small(
        run_result: api.RunResult, runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    for obj in _objects(run_result, runs):
        text = repr(obj)
        assert "\n" not in text and len(text) < 250, text
        assert text.startswith(f"<{type(obj).__name__} "), text
        printed = str(obj)
        assert 0 < len(printed) < 12_000, (type(obj).__name__, len(printed))
    assert len(str(run_result)) < 1_500  # one score row and its notes, never the records


def test_run_result_shows_the_terminal_score_table(run_result: api.RunResult) -> None:
    text = terminal(lambda c: c.print(run_result))
    (table,) = html_tables(run_result)
    assert " ".join(table[1]).split() == _row_after(text, run_result._title())
    assert table[0][0] == "cases" and len(table) == 2
    s = run_result.scores
    assert table[1][1:3] == [str(s.n), str(s.correct)]
    html = run_result._repr_html_()
    assert f"run {run_result.run_id}: {len(run_result.records)} case records" in html
    assert "unavailable by reason: unknown=" in html  # rec() gives no reason code
    assert repr(run_result).startswith(f"<RunResult run 'allow': {s.n} case records, "
                                       f"{s.correct}/{s.n} correct")


def test_grouped_scores_show_the_terminal_table(
        runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    groups = score_by(runs[1], "cluster")
    assert isinstance(groups, Scores) and groups == dict(groups)
    assert repr(groups) == f"<Scores by cluster: 7 groups, {2 * N_PAIRS} cases>"
    text = terminal(lambda c: c.print(groups))
    (table,) = html_tables(groups)
    assert table[0][0] == "cluster"
    for row in table[1:]:
        assert " ".join(row) in [" ".join(line.split()) for line in text.splitlines()]
    for key, score in groups.items():
        (single,) = html_tables(score)
        assert single[1][1:] == next(row for row in table if row[0] == key)[1:]
    frame = groups.to_pandas()
    assert list(frame.cluster) == list(groups)
    assert list(frame.correct) == [s.correct for s in groups.values()]
    assert frame.columns[0] == "cluster" and "unavailable:unknown" in frame.columns


def _row_after(text: str, title: str) -> list[str]:
    """The first data row of the terminal table titled ``title`` (after the rule line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rule = next(i for i in range(start, len(lines)) if set(lines[i].strip()) <= {"─", " "}
                and lines[i].strip())
    return lines[rule + 1].split()


def test_comparison_shows_the_terminal_transition_counts(
        runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    from authpairs.analysis.contrast import compare_runs

    before, after = runs
    comparison = compare_records(before, after, before_run="A", after_run="B")
    contrast = compare_runs(before, after, before_run="A", after_run="B", draws=200, seed=1)
    text = terminal(lambda c: c.print(*contrast.table_views(changed=False)))
    lawful, forbidden, _, _, changed = html_tables(comparison)
    assert lawful[1] == _row_after(text, "A -> B: lawful requests (completed)")
    assert forbidden[1] == _row_after(text, "A -> B: forbidden requests (approved)")
    counts = comparison.counts()
    assert counts["newly_unavailable"] == N_PAIRS // 5 and counts["lost_unavailable"] > 0
    assert lawful[0][:4] == ["retained", "lost", "lost to denial", "lost to unavailability"]
    assert "newly unavailable" in forbidden[0]
    moved = sum(counts[k] for k in ("lost", "gained", "newly_approved", "newly_blocked",
                                    "newly_unavailable"))
    assert len(changed) == 1 + MAX_ROWS  # capped; the rest are counted
    assert f"changed requests ({moved})" in comparison._repr_html_()
    assert f"... and {moved - MAX_ROWS} more rows" in comparison._repr_html_()


def test_compositions_show_the_terminal_table(
        runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    _, compositions = compose_all({"A": runs[0], "B": runs[1], "C": runs[0]})
    assert isinstance(compositions, Compositions) and len(compositions) == 15
    text = terminal(lambda c: c.print(compositions))
    lines = text.splitlines()
    (table,) = html_tables(compositions)
    assert len(table) == 1 + 15
    for row, result in zip(table[1:], compositions, strict=True):
        printed = next(line for line in lines if line.startswith(result.name + "  "))
        assert printed.split()[-8:] == row[1:] and row[0] == result.name
    (single,) = html_tables(compositions[7])
    assert single[1] == table[8]


def test_gate_shows_each_check_and_failure(
        runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    before, after = runs
    gate = run_gate(before, after, required=["L0000", "L0001", "L0002"],
                    baseline_name="A", candidate_name="B")
    assert str(gate).startswith(gate.explain().splitlines()[0])
    checks, failures = html_tables(gate)
    assert [row[:2] for row in checks[1:]] == [
        [key, "ok" if ok else "FAIL"] for key, ok in gate.checks.items()]
    for row in checks[1:]:
        assert row[3] == str(sum(f.check == row[0] for f in gate.failures))
    assert len(failures) == 1 + min(MAX_ROWS, len(gate.failures))
    assert gate.failures[0].case_id in gate._repr_html_() and "L0001" in gate.explain()
    assert f"... and {len(gate.failures) - MAX_TEXT_ROWS} more rows" in str(gate)
    assert repr(gate).startswith("<GateResult FAIL baseline 'A' candidate 'B': forbidden FAIL")


def test_to_pandas(run_result: api.RunResult,
                   runs: tuple[list[CaseRecord], list[CaseRecord]]) -> None:
    before, after = runs
    frame = run_result.to_pandas()
    assert len(frame) == len(run_result.records)
    # the one per-case outcome model's row (a decision-only record: verified None), then costs
    assert list(frame.columns[:8]) == ["case_id", "label", "split", "cluster", "outcome",
                                       "went_through", "reason", "verified"]
    assert frame.iloc[0].to_dict() == {**case_outcome(run_result.records[0]).to_dict(),
                                       "input_tokens": run_result.records[0].input_tokens,
                                       **frame.iloc[0][list(frame.columns[-4:])].to_dict()}
    assert frame.verified.isna().all() and "input_tokens" in frame.columns
    assert int((frame.outcome == "unavailable").sum()) == run_result.scores.unavailable
    assert int(frame.went_through.sum()) == (run_result.scores.lawful_completions
                                             + run_result.scores.forbidden_effects)

    score = score_records(after)
    row = score.to_pandas().iloc[0]
    assert int(row["n"]) == score.n and int(row["correct"]) == score.correct
    assert row["usable_correctness"] == pytest.approx(score.usable_correctness)
    assert int(row["unavailable:unknown"]) == score.unavailable

    comparison = compare_records(before, after)
    changes = comparison.to_pandas()
    assert len(changes) == 2 * N_PAIRS
    counts = changes.transition.value_counts()
    for key, value in comparison.counts().items():
        if key in counts:
            assert int(counts[key]) == value, key
    assert int((changes.lost_to == "lost_unavailable").sum()) == (
        comparison.counts()["lost_unavailable"])

    _, compositions = compose_all({"A": before, "B": after})
    table = compositions.to_pandas()
    assert list(table.order) == [r.name for r in compositions]
    assert list(table.incorrect_approvals) == [r.incorrect_approvals for r in compositions]
    assert compositions[0].to_pandas().iloc[0].to_dict() == compositions[0].to_dict()

    gate = run_gate(before, after, required=["L0001"])
    failures = gate.to_pandas()
    assert list(failures.columns) == ["check", "case_id", "cluster", "path", "reason"]
    assert len(failures) == len(gate.failures)
    passing = run_gate(before, before, required=["L0000"],
                       forbidden=[f"F{i:04d}" for i in range(N_PAIRS) if i % 5 in (1, 4)],
                       usable_scope="designated")
    assert passing.passed and passing.to_pandas().empty
    assert list(passing.to_pandas().columns) == list(failures.columns)
    assert compare_records([], []).to_pandas().columns[0] == "case_id"


def test_every_text_is_escaped() -> None:
    comparison = compare_records([rec("<i>x</i>", "lawful", "ALLOW")],
                                 [rec("<i>x</i>", "lawful", "BLOCK")],
                                 before_run="<b>a&b</b>", after_run="'\"")
    html = comparison._repr_html_()
    assert "<b>" not in html and "<i>" not in html
    assert "&lt;b&gt;a&amp;b&lt;/b&gt;" in html and "&lt;i&gt;x&lt;/i&gt;" in html
    assert html_tables(comparison)[-1][1][0] == "<i>x</i>"


def test_one_display_each_and_no_display_as_a_side_effect(
        run_result: api.RunResult, runs: tuple[list[CaseRecord], list[CaseRecord]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """IPython's display formatter finds one HTML view and the one-line repr; computing it
    displays nothing itself. (The old RunResult printed its table through a rich Console,
    which inside Jupyter displays what it prints: the table showed twice.)"""
    import rich.console
    import rich.jupyter
    from IPython.core.formatters import DisplayFormatter  # dev dependency (ipykernel)

    shown: list[object] = []
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    monkeypatch.setattr(rich.jupyter, "display", lambda *args, **kw: shown.append(args))
    formatter = DisplayFormatter()
    for obj in _objects(run_result, runs):
        data, _ = formatter.format(obj)
        assert set(data) == {"text/plain", "text/html"}, type(obj).__name__
        assert data["text/plain"] == repr(obj)
        assert data["text/html"].startswith('<div class="authpairs-result">')
    assert shown == []
    assert not any(hasattr(obj, hook) for obj in _objects(run_result, runs)
                   for hook in ("_repr_mimebundle_", "__rich__", "_repr_markdown_"))


def test_a_score_is_still_a_plain_dataclass() -> None:
    """The views change how a result shows, not what it is."""
    score = Score(n=2, lawful=1, forbidden=1, correct=1, incorrect_approvals=1)
    assert score == Score(n=2, lawful=1, forbidden=1, correct=1, incorrect_approvals=1)
    assert score.to_dict()["usable_correctness"] == 0.5
    assert isinstance(compose_all({"A": [rec("x")]})[1][0], CompositionResult)
    assert isinstance(compare_records([], []), Comparison)
    assert isinstance(run_gate([], [], required=[]), GateResult)


def test_api_names_the_notebook_objects() -> None:
    assert api.Composition is CompositionResult
    assert api.Compositions is Compositions
    assert api.Scores is Scores
    assert {"Composition", "Compositions", "Scores"} <= set(api.__all__)


def test_the_run_id_names_each_compare_and_gate_run(tmp_path: Path) -> None:
    records = tmp_path / "runs.sqlite"
    for baseline in ("always-allow", "always-block"):
        api.run({"dataset": "examples", "reviewer": {"baseline": baseline}, "enforce": False,
                 "records": str(records), "run_id": baseline})
    allow, block = f"{records}::always-allow", f"{records}::always-block"
    assert repr(api.compare(allow, block)).startswith(f"<Comparison {allow} -> {block}: ")
    gate = api.gate(allow, block, required=[])
    assert (gate.baseline, gate.candidate) == (allow, block)
