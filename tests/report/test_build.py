"""The report built from real recorded runs: contents, files, figures and bad input."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from authpairs.analysis.compare import compare_records
from authpairs.analysis.compose import compose_all
from authpairs.analysis.runref import RunNotFoundError, RunRef, load_records
from authpairs.analysis.scoring import score_records
from authpairs.analysis.study import plan_from_dict, run_study
from authpairs.report.build import ReportResult, build_report
from authpairs.report.request import ReportRequest
from authpairs.report.runset import ReportInputError
from tests.report.conftest import RecordedRuns


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _records(db: Path, run: str) -> list:  # type: ignore[type-arg]
    return load_records(RunRef(db, run))


@pytest.fixture(scope="module")
def full(recorded: RecordedRuns, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    """Every language section: baselines, seeds, an incomplete run, a comparison and a
    three-reviewer composition."""
    runs = [*recorded.baselines, *recorded.loose, *recorded.strict, recorded.incomplete]
    return build_report(ReportRequest(
        runs=runs, out=tmp_path_factory.mktemp("report"), records=recorded.db,
        compare=("loose-s0", "strict-s0"), compose=["loose-s0", "strict-s0", "loose-s1"],
        draws=2000))


def test_sections_and_files(full: ReportResult) -> None:
    out = full.html.parent
    meta = json.loads((out / "report.json").read_text())
    assert meta["sections"] == ["overview", "runs", "seeds", "breakdowns", "groups",
                                "contrasts", "transitions", "compositions", "cases"]
    assert set(meta["omitted"]) == {"engine x label"}
    for stem in meta["figures"]:
        assert (out / "figures" / f"{stem}.svg").stat().st_size > 1000
        assert (out / "figures" / f"{stem}.png").stat().st_size > 1000
    assert {"seeds", "correctness_by_family", "correctness_by_domain", "correctness_by_scenario",
            "contrasts", "transitions", "compositions", "cost_grid"} <= set(meta["figures"])
    html = full.html.read_text()
    for target in re.findall(r'(?:src|href)="([^"#][^"]*)"', html):
        assert not target.startswith(("http:", "https:", "//")), target
        if not target.startswith("data:"):
            assert (out / target).is_file(), target
    # one inline script (the case browser) and its JSON data; nothing loaded from elsewhere
    assert re.findall(r"<script[^>]*>", html) == [
        '<script type="application/json" id="case-data">', "<script>"]
    assert len(meta["tables"]) >= 20
    for table in meta["tables"]:  # every CSV is linked from the page
        assert f'href="{table}"' in html, table


def test_runs_table_matches_scoring(full: ReportResult, recorded: RecordedRuns) -> None:
    rows = {r["run"]: r for r in _csv(full.html.parent / "tables" / "runs.csv")}
    assert len(rows) == 8
    for name in ("allow", "loose-s1"):
        score = score_records(_records(recorded.db, name))
        row = rows[name]
        assert int(row["correct"]) == score.correct
        assert int(row["incorrect_approvals"]) == score.incorrect_approvals
        assert int(row["unavailable"]) == score.unavailable
        assert int(row["output_tokens"]) == score.output_tokens
        assert len(row["config_sha256"]) == 12 and len(row["manifest_sha256"]) == 12
        assert "authpairs" in row["versions"]
    assert rows["allow"]["incorrect_approvals"] == "20" and rows["block"]["false_denials"] == "20"
    assert rows["loose-s0"]["unavailable_by_reason"].startswith("not_json=")


def test_incomplete_run_is_named(full: ReportResult, recorded: RecordedRuns) -> None:
    assert full.incomplete == [recorded.incomplete]
    row = next(r for r in _csv(full.html.parent / "tables" / "runs.csv")
               if r["run"] == recorded.incomplete)
    assert row["complete"] == "False" and int(row["recorded"]) < int(row["expected"]) == 40
    html = full.html.read_text()
    assert f"Incomplete runs: {recorded.incomplete}" in html
    assert f"INCOMPLETE: run &#39;{recorded.incomplete}&#39; has {row['recorded']} of 40" in html


def test_seed_summary_groups_seeds(full: ReportResult) -> None:
    rows = [r for r in _csv(full.html.parent / "tables" / "seed_summary.csv")
            if r["rate"] == "usable_correctness"]
    by_seeds = {int(r["seeds"]): r for r in rows}
    assert set(by_seeds) == {2, 3}
    runs = {r["run"]: float(r["usable_correctness"])
            for r in _csv(full.html.parent / "tables" / "runs.csv")}
    loose = by_seeds[3]
    values = [runs[n] for n in loose["runs"].split("|")]
    assert float(loose["mean"]) == pytest.approx(sum(values) / 3, abs=1e-2)
    assert float(loose["min"]) == min(values) and float(loose["max"]) == max(values)
    assert float(loose["bootstrap_low"]) <= float(loose["pooled"]) <= float(loose["bootstrap_high"])
    assert loose["clusters"] == "10"  # ten dev scenarios


def test_transitions_list_every_lost_request(full: ReportResult,
                                             recorded: RecordedRuns) -> None:
    comparison = compare_records(_records(recorded.db, "loose-s0"),
                                 _records(recorded.db, "strict-s0"))
    lost = {c.case_id: c for c in comparison.with_transition("lost")}
    assert lost, "the strict reviewer loses lawful requests"
    rows = _csv(full.html.parent / "tables" / "lost_requests.csv")
    assert {r["case_id"] for r in rows} == set(lost)
    assert all(r["path"] == lost[r["case_id"]].path and r["path"] for r in rows)
    counts = _csv(full.html.parent / "tables" / "transitions.csv")
    assert int(counts[0]["lost"]) == len(lost)


def test_compositions_split_unavailable_by_label(full: ReportResult,
                                                 recorded: RecordedRuns) -> None:
    _, results = compose_all({n: _records(recorded.db, n)
                              for n in ("loose-s0", "strict-s0", "loose-s1")})
    rows = _csv(full.html.parent / "tables" / "compositions.csv")
    assert len(rows) == len(results) == 15
    for row, result in zip(rows, results, strict=True):
        assert row["order"] == result.name
        assert int(row["unavailable_forbidden"]) + int(row["unavailable_lawful"]) \
            == result.unavailable
        assert int(row["lawful_approvals"]) == result.lawful_approvals
    routed = _csv(full.html.parent / "tables" / "routed.csv")
    assert len(routed) == 15 * 40
    vetoes = _csv(full.html.parent / "tables" / "lawful_vetoes.csv")
    assert vetoes and all(v["stopped_by"] for v in vetoes)
    grid = _csv(full.html.parent / "tables" / "cost_grid.csv")
    assert len(grid) == 720


def test_figures_are_titled_labelled_and_grey(full: ReportResult) -> None:
    folder = full.html.parent / "figures"
    for svg in folder.glob("*.svg"):
        text = " ".join(re.findall(r">([^<>]+)</text>", svg.read_text()))
        assert "n = " in text, svg.name
        assert re.search(r"\((%|count|loss units|percentage points)|%\)", text), svg.name
    for png in folder.glob("*.png"):
        rgb = np.asarray(Image.open(png).convert("RGB")).astype(np.int16)
        assert (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all(), \
            f"{png.name} uses colour"


def test_native_sections(recorded: RecordedRuns, tmp_path: Path) -> None:
    db = recorded.native_db
    result = build_report(ReportRequest(runs=[f"{db}::n1", f"{db}::n2"], out=tmp_path,
                                        records=db, draws=500, workers=1))  # in-process
    for section in result.sections:
        for figure in section.figures:
            assert (tmp_path / figure.svg).is_file() and (tmp_path / figure.png).is_file()
    keys = [s.key for s in result.sections]
    assert {"engines", "groups", "contrasts"} <= set(keys)
    groups = {r["run"]: r for r in _csv(tmp_path / "tables" / "groups.csv")}
    assert groups["n1"]["equal_weight_group_accuracy"] == "66.67"
    assert (groups["n2"]["dependent_pairs"], groups["n2"]["pairs_both_correct"]) == ("3", "2")
    engines = _csv(tmp_path / "tables" / "engine_label.csv")
    assert len(engines) == 8  # 2 runs x 2 engines x 2 labels


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_study_plan_gives_the_family_and_seed_labels(tmp_path: Path) -> None:
    plan = plan_from_dict({
        "records": str(tmp_path / "study.sqlite"),
        "base": {"dataset": "examples", "split": "all", "enforce": False},
        "factors": {"reviewer": {"allow": {"reviewer.baseline": "always-allow"},
                                 "block": {"reviewer.baseline": "always-block"}}},
        "seeds": [0, 1], "analysis": {"draws": 500}})
    run_study(plan, progress=False)
    (tmp_path / "plan.yaml").write_text(json.dumps(plan.model_dump(mode="json")))
    folder = tmp_path / "study-out"
    folder.mkdir()
    (folder / "study.json").write_text(json.dumps({"plan": plan.model_dump(mode="json")}))
    for source in (tmp_path / "plan.yaml", folder):
        result = build_report(ReportRequest(runs=[], out=tmp_path / "r", study=source,
                                            draws=500))
        assert len(result.runs) == 4
        contrasts = _csv(tmp_path / "r" / "tables" / "contrasts.csv")
        assert [c["contrast"] for c in contrasts] == ["seed=0: allow -> block",
                                                      "seed=1: allow -> block"]
        assert all(c["lost"] == "4" and c["holm_sign_flip_p"] for c in contrasts)
        seeds = _csv(tmp_path / "r" / "tables" / "seed_summary.csv")
        assert {s["configuration"] for s in seeds} == {"reviewer=allow", "reviewer=block"}
        # the heatmaps name their columns by factor level and seed, never by run id
        svg = (tmp_path / "r" / "figures" / "correctness_by_family.svg").read_text()
        ticks = set(re.findall(r">(reviewer=[a-z]+ seed=\d)</text>", svg))
        assert ticks == {f"reviewer={r} seed={s}" for r in ("allow", "block") for s in (0, 1)}
        assert not any(run in svg for run in result.runs)
        assert "study cell (factor levels)" in svg


def test_missing_run_is_named(recorded: RecordedRuns, tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError, match="no run 'nope'"):
        build_report(ReportRequest(runs=["allow", "nope"], out=tmp_path, records=recorded.db))
    with pytest.raises(RunNotFoundError, match="records file not found"):
        build_report(ReportRequest(runs=["allow"], out=tmp_path, records=tmp_path / "x.db"))
    assert not (tmp_path / "x.db").exists()


def test_compare_on_different_datasets_is_refused(recorded: RecordedRuns,
                                                  tmp_path: Path) -> None:
    with pytest.raises(ReportInputError,
                       match=r"runs 'allow' .* and 'examples-allow' .* different datasets"):
        build_report(ReportRequest(runs=["allow"], out=tmp_path, records=recorded.db,
                                   compare=("allow", recorded.other_dataset)))
    with pytest.raises(ReportInputError, match="at least two"):
        build_report(ReportRequest(runs=["allow"], out=tmp_path, records=recorded.db,
                                   compose=["allow"]))
