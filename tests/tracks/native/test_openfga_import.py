"""Importer tests for OpenFGA store test files, on synthetic fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.openfga_import import find_test_files, load_fga_suite, sort_tuples

from .conftest import OPENFGA_BAD, OPENFGA_GOOD


def test_inline_model_tuples_conditions_and_context() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "library" / "store.fga.yaml")
    assert suite.model_text.startswith("model\n  schema 1.1")
    assert suite.model_files == []
    assert len(suite.checks) == 7
    assert len(suite.list_objects) == 1
    assert len(suite.list_users) == 1
    first = suite.checks[0]
    assert (first.user, first.relation, first.object) == ("member:carla", "reader", "book:dune")
    assert first.locator == "tests[0].check[0].assertions.reader"
    assert first.expected is True
    timed = [c for c in suite.checks if c.user == "member:ben"]
    assert [c.context for c in timed] == [{"now": "2029-06-01T00:00:00Z"},
                                          {"now": "2031-06-01T00:00:00Z"}]
    conditioned = [t for t in first.tuples if "condition" in t]
    assert conditioned == [{"user": "member:ben", "relation": "borrower", "object": "book:dune",
                            "condition": {"name": "before_due",
                                          "context": {"due": "2030-01-01T00:00:00Z"}}}]
    lu = suite.list_users[0]
    assert lu.expected == ("member:ben", "member:carla")
    assert lu.context == {"now": "2029-06-01T00:00:00Z"}


def test_test_level_tuples_are_added_to_file_tuples() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "library" / "store.fga.yaml")
    base = next(c for c in suite.checks if c.test_index == 0).tuples
    extended = next(c for c in suite.checks if c.test_index == 2).tuples
    assert len(base) == 3
    assert len(extended) == 4
    assert {"user": "member:dora", "relation": "borrower", "object": "book:dune"} in extended
    assert all(t in extended for t in base)
    assert extended == sort_tuples(list(reversed(extended)))


def test_modular_model_and_tuple_file() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "modular" / "store.fga.yaml")
    assert "# file: fga.mod" in suite.model_text
    assert "# file: core.fga\nmodule core" in suite.model_text
    assert "# file: docs/docs.fga\nmodule docs" in suite.model_text
    assert [p.name for p in suite.model_files] == ["fga.mod", "core.fga", "docs.fga"]
    tuples = suite.checks[0].tuples
    assert {"user": "team:audit#member", "relation": "viewer", "object": "report:q1"} in tuples
    assert len(tuples) == 2


def test_tuple_files_yaml_and_json() -> None:
    suite = load_fga_suite(OPENFGA_GOOD / "modular" / "owners.fga.yaml")
    tuples = suite.checks[0].tuples
    assert len(tuples) == 3
    assert {"user": "user:omar", "relation": "owner", "object": "report:q1"} in tuples


def test_find_test_files_recurses() -> None:
    names = [p.name for p in find_test_files(OPENFGA_GOOD)]
    assert names == ["store.fga.yaml", "owners.fga.yaml", "store.fga.yaml"]


@pytest.mark.parametrize(("name", "needle"), [
    ("broken-yaml.fga.yaml", "invalid YAML (line 6"),
    ("missing-model-file.fga.yaml", "'model_file' refers to a missing file: ./nowhere.fga"),
    ("bad-assertion.fga.yaml", "tests[0].check[0].assertions.viewer: a check assertion must be"),
])
def test_import_errors_name_file_and_record(name: str, needle: str) -> None:
    path = OPENFGA_BAD / name
    with pytest.raises(NativeImportError) as info:
        load_fga_suite(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert needle in message


def test_unknown_top_level_field(tmp_path: Path) -> None:
    path = tmp_path / "odd.fga.yaml"
    path.write_text("model: |\n  model\n    schema 1.1\n  type user\nchecks: []\ntests: []\n")
    with pytest.raises(NativeImportError, match=r"odd\.fga\.yaml: unknown top-level field"):
        load_fga_suite(path)


def test_check_without_object(tmp_path: Path) -> None:
    path = tmp_path / "t.fga.yaml"
    path.write_text("model: |\n  model\n    schema 1.1\n  type user\ntests:\n  - name: t\n"
                    "    check:\n      - user: user:a\n        assertions:\n          x: true\n")
    with pytest.raises(NativeImportError, match=r"assertion tests\[0\]\.check\[0\]: 'object'"):
        load_fga_suite(path)
