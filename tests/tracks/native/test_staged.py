"""Engine replay on the real staged sources (../shared/sources beside the repository).

The fast tests replay all Cedar requests and a subset of OpenFGA files (modular model with
fga.mod and tuple_file, conditions, check context, dynamic conditions); the slow test replays
every upstream assertion and checks the track's counts and split.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cases.dataset import Dataset, load_dataset
from authpairs.cases.models import Label
from authpairs.cli import app
from authpairs.tracks.native.build import NativeBuild, label_cedar_tree
from authpairs.tracks.native.dataset import load_native_dataset
from authpairs.tracks.native.openfga_engine import run_suites
from authpairs.tracks.native.openfga_import import find_test_files, load_fga_suite
from authpairs.tracks.native.sources import (
    SOURCES_ENV,
    default_sources,
    read_provenance,
    resolve_sources,
)
from authpairs.tracks.native.stats import summarize
from authpairs.tracks.native.verify import cedar_agreement, openfga_agreement

runner = CliRunner()
SUBSET = ("modular", "temporal-access", "condition-data-types", "mcp-gateway")


def test_sources_resolution(staged_sources: Path, monkeypatch: pytest.MonkeyPatch,
                            tmp_path: Path) -> None:
    monkeypatch.delenv(SOURCES_ENV, raising=False)
    assert default_sources().resolve() == staged_sources.resolve()
    monkeypatch.setenv(SOURCES_ENV, str(tmp_path))
    assert resolve_sources() == tmp_path
    with pytest.raises(ValueError, match="sources directory not found"):
        resolve_sources(tmp_path / "missing")


def test_provenance(staged_sources: Path) -> None:
    fga = read_provenance(staged_sources / "openfga-sample-stores")
    assert fga.licence == "Apache-2.0"
    assert fga.commit_for("stores/accounting/store.fga.yaml").startswith("fc35d2e3a241")
    assert fga.commit_for("stores/modular/fga.mod").startswith("c310a118f28e")
    cedar = read_provenance(staged_sources / "cedar-examples")
    assert cedar.commit_for("cedar-example-use-cases/tax_preparer").startswith("ea76414411d9")
    assert cedar.repository == "https://github.com/cedar-policy/cedar-examples"


def test_cedar_replay_all_requests(staged_sources: Path) -> None:
    items = label_cedar_tree(staged_sources / "cedar-examples")
    rows = cedar_agreement(items)
    assert len(rows) == 9
    assert all(row.ok for row in rows)
    answers = [a for _, ans, _ in items for a in ans]
    assert len(answers) == 46
    assert sum(a.allowed for a in answers) == 30
    no_schema = {info.group for ex, _, info in items if ex.schema_text is None}
    assert no_schema == {"cedar/github_example", "cedar/document_cloud"}
    linked = sorted(info.relpath.split("/", 2)[2] for ex, _, info in items if ex.links)
    assert linked == ["hotel_chains/templated", "sales_orgs/templated", "tax_preparer"]


def test_openfga_replay_subset(staged_sources: Path) -> None:
    stores = staged_sources / "openfga-sample-stores" / "stores"
    files = [f for name in SUBSET for f in find_test_files(stores / name)]
    assert len(files) == 9
    runs = run_suites([load_fga_suite(f) for f in files])
    checks = [a for r in runs for a in r.checks.values()]
    assert len(checks) == 11 + 4 + 18 + 16
    assert all(a.agrees for a in checks)
    assert sum(len(r.list_objects) for r in runs) == 1
    assert sum(len(r.list_users) for r in runs) == 2
    assert all(a.agrees for r in runs for a in [*r.list_objects.values(),
                                                *r.list_users.values()])
    for run in runs:
        for index, tuples in run.engine_tuples.items():
            assert all(c.tuples == tuples for c in run.suite.checks if c.test_index == index)


def _mini_sources(staged: Path, target: Path) -> Path:
    fga = target / "openfga-sample-stores"
    for name in ("modular", "temporal-access"):
        shutil.copytree(staged / "openfga-sample-stores" / "stores" / name, fga / "stores" / name)
    shutil.copy(staged / "openfga-sample-stores" / "PROVENANCE.md", fga / "PROVENANCE.md")
    cedar = target / "cedar-examples" / "cedar-example-use-cases"
    for name in ("tax_preparer", "github_example"):
        shutil.copytree(staged / "cedar-examples" / "cedar-example-use-cases" / name,
                        cedar / name)
    shutil.copy(staged / "cedar-examples" / "PROVENANCE.md",
                target / "cedar-examples" / "PROVENANCE.md")
    return target


def test_cli_verify_and_build_on_a_subset(staged_sources: Path, tmp_path: Path) -> None:
    mini = _mini_sources(staged_sources, tmp_path / "sources")
    report = tmp_path / "verify.md"
    result = runner.invoke(app, ["data", "verify-native", "--sources", str(mini),
                                 "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "all assertions agree: check 15/15, list_objects 1/1, list_users 2/2, " \
           "authorize 12/12" in result.output
    assert "| openfga-sample-stores/stores/modular/fga.mod" not in report.read_text()
    assert "openfga-sample-stores/stores/modular/core.fga.yaml | openfga | 2/2 (100.0%)" \
        in report.read_text()
    out = tmp_path / "native.jsonl"
    result = runner.invoke(app, ["data", "build-native", "--sources", str(mini),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    cases = load_dataset(out)
    assert len(cases) == 15 + 12  # the modular files use different tuples: no duplicates
    assert {c.attributes["group"] for c in cases} == {
        "openfga/modular", "openfga/temporal-access", "cedar/tax_preparer",
        "cedar/github_example"}
    assert {c.source.licence for c in cases} == {"Apache-2.0"}
    cached = load_native_dataset(split="test", cache=out)
    assert {c.case_id for c in cached} == {c.case_id for c in cases if c.split == "test"}


def test_verify_reports_a_disagreement(staged_sources: Path, tmp_path: Path) -> None:
    mini = _mini_sources(staged_sources, tmp_path / "sources")
    folder = mini / "cedar-examples" / "cedar-example-use-cases" / "tax_preparer"
    moved = folder / "DENY" / "alice_read_DEF.json"
    shutil.move(folder / "ALLOW" / "alice_read_DEF.json", moved)
    result = runner.invoke(app, ["data", "verify-native", "--sources", str(mini)])
    assert result.exit_code == 1
    assert "DENY/alice_read_DEF.json: expected DENY, engine ALLOW" in result.output


@pytest.mark.slow
def test_full_replay_agrees_everywhere(full_build: NativeBuild) -> None:
    rows = openfga_agreement(full_build.openfga) + cedar_agreement(full_build.cedar)
    assert all(row.ok for row in rows), [f for row in rows for f in row.failures]
    totals: dict[str, int] = {}
    for row in rows:
        for kind, (agree, total) in row.counts.items():
            assert agree == total
            totals[kind] = totals.get(kind, 0) + total
    assert totals == {"check": 1604, "list_objects": 229, "list_users": 112, "authorize": 46}
    assert len(full_build.openfga) == 54


@pytest.mark.slow
def test_full_track_counts_and_split(full_build: NativeBuild) -> None:
    cases = full_build.cases
    Dataset(name="native", cases=cases)  # ids are unique
    engines = [c.attributes["engine"] for c in cases]
    assert engines.count("openfga") == 1549 and engines.count("cedar") == 46
    assert sum(len(c.reference.facts["duplicates"]) for c in cases) == 55
    assert len({c.attributes["group"] for c in cases}) == 47
    assert len({c.attributes["encoding"] for c in cases}) == 60
    for case in cases:
        assert case.reference.facts["engine_answer"] == case.reference.facts["expected"]
        assert (case.reference.label == Label.LAWFUL) == case.reference.facts["engine_answer"]
        assert "expected" not in case.public.model_dump_json()
    sides: dict[str, set[str]] = {}
    for case in cases:
        sides.setdefault("g:" + case.attributes["group"], set()).add(case.split)
        sides.setdefault("e:" + case.attributes["encoding"], set()).add(case.split)
    assert all(len(s) == 1 for s in sides.values())
    table = summarize(cases)
    assert table[("all", "dev")].cases == 379 and table[("all", "test")].cases == 1216
    assert len(table[("all", "dev")].groups) == 9 and len(table[("all", "test")].groups) == 38
    assert len(table[("all", "test")].encodings) == 50
    cedar_dev = table[("cedar", "dev")]
    assert (cedar_dev.cases, cedar_dev.lawful, cedar_dev.forbidden) == (12, 8, 4)
    assert table[("openfga", "test")].lawful == 745
    dev_groups = {c.attributes["group"] for c in cases if c.split == "dev"}
    assert dev_groups == {"cedar/hotel_chains", "openfga/call-center", "openfga/expenses",
                          "openfga/github", "openfga/human-resources", "openfga/manufacturing",
                          "openfga/multitenant-rbac", "openfga/real-estate",
                          "openfga/superadmin"}


def test_cases_name_their_upstream_repository(staged_sources: Path) -> None:
    from authpairs.tracks.native.build import split_drafts
    from authpairs.tracks.native.cases import cedar_drafts

    cases = split_drafts(cedar_drafts(label_cedar_tree(staged_sources / "cedar-examples")))
    assert {c.reference.facts["repository"] for c in cases} == {
        "https://github.com/cedar-policy/cedar-examples"}
    assert {c.source.revision for c in cases} == {"ea76414411d92e5f4440f03d57bf78d586f4c0bb"}
