"""The OpenFGA CLI's embedded engine on synthetic fixtures: result matching and errors."""

from __future__ import annotations

import pytest

from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.openfga_engine import run_suite, run_suites
from authpairs.tracks.native.openfga_import import load_fga_suite

from .conftest import OPENFGA_BAD, OPENFGA_GOOD


def test_every_assertion_is_answered_and_agrees() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "library" / "store.fga.yaml")
    run = run_suite(suite)
    assert set(run.checks) == {c.locator for c in suite.checks}
    assert all(a.agrees for a in run.checks.values())
    ben = [c for c in suite.checks if c.user == "member:ben"]
    assert [run.checks[c.locator].got for c in ben] == [True, False]
    lo = run.list_objects[suite.list_objects[0].locator]
    assert lo.got == ("book:dune",) and lo.agrees
    lu = run.list_users[suite.list_users[0].locator]
    assert lu.got == ("member:ben", "member:carla") and lu.agrees


def test_engine_sees_exactly_the_importers_effective_tuples() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "library" / "store.fga.yaml")
    run = run_suite(suite)
    for index, tuples in run.engine_tuples.items():
        mine = [c.tuples for c in suite.checks if c.test_index == index]
        assert mine and all(t == tuples for t in mine)
    assert len(run.engine_tuples[2]) == 4


def test_modular_files_run_concurrently_in_input_order() -> None:
    suites = [load_fga_suite(OPENFGA_GOOD / "modular" / n)
              for n in ("store.fga.yaml", "owners.fga.yaml")]
    runs = run_suites(suites, workers=2)
    assert [r.suite.path.name for r in runs] == ["store.fga.yaml", "owners.fga.yaml"]
    omar = [a for a in runs[0].checks.values() if a.locator.endswith("check[1].assertions.viewer")]
    assert omar[0].got is False
    assert next(iter(runs[1].checks.values())).got is True


def test_unknown_type_is_reported_on_its_assertion() -> None:
    suite = load_fga_suite(OPENFGA_BAD / "unknown-type.fga.yaml")
    run = run_suite(suite)
    bad = run.checks["tests[0].check[1].assertions.viewer"]
    assert bad.error is not None and "type 'folder' not found" in bad.error
    assert not bad.agrees
    assert run.checks["tests[0].check[0].assertions.viewer"].agrees


@pytest.mark.parametrize(("name", "needle"), [
    ("bad-model.fga.yaml", "the relation type 'usr' on 'viewer'"),
    ("bad-tuple.fga.yaml", "type 'dox' not found"),
])
def test_engine_failure_names_the_file(name: str, needle: str) -> None:
    suite = load_fga_suite(OPENFGA_BAD / name)
    with pytest.raises(NativeImportError) as info:
        run_suite(suite)
    assert str(info.value).startswith(str(OPENFGA_BAD / name))
    assert needle in str(info.value)
