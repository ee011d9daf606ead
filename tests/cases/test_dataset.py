import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.cases.dataset import Dataset, DatasetError, load_dataset, parse_line
from authpairs.cases.examples import load_examples
from authpairs.cases.models import Case


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_examples_load_and_have_both_labels(examples: Dataset) -> None:
    labels = [c.reference.label.value for c in examples]
    assert len(examples) == 8
    assert labels.count("lawful") == labels.count("forbidden") == 4


def test_manifest_is_stable_and_tracks_public_changes(examples: Dataset, tmp_path: Path) -> None:
    first = examples.manifest()
    path = tmp_path / "copy.jsonl"
    examples.write_jsonl(path)
    again = load_dataset(path, name="examples").manifest()
    assert first == again
    changed = examples.cases[0].model_copy(
        update={"public": examples.cases[0].public.model_copy(
            update={"policy": examples.cases[0].public.policy.model_copy(
                update={"text": "changed"})})})
    other = Dataset("examples", [changed, *examples.cases[1:]]).manifest()
    assert other.public_sha256 != first.public_sha256


def test_invalid_json_names_file_and_line(tmp_path: Path, examples: Dataset) -> None:
    good = examples.cases[0].model_dump(mode="json")
    path = _write(tmp_path / "bad.jsonl", [good, "{not json"])
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    assert "bad.jsonl" in str(err.value) and "line 2" in str(err.value)


def test_missing_field_names_record_and_field(tmp_path: Path, examples: Dataset) -> None:
    row = examples.cases[0].model_dump(mode="json")
    del row["public"]["request"]["action"]
    path = _write(tmp_path / "cases.jsonl", [row])
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    message = str(err.value)
    assert "cases.jsonl" in message and "line 1" in message
    assert row["case_id"] in message and "public.request.action" in message


def test_wrong_type_and_unknown_field_are_errors(tmp_path: Path, examples: Dataset) -> None:
    row = examples.cases[0].model_dump(mode="json")
    row["reference"]["label"] = "maybe"
    with pytest.raises(DatasetError, match=r"reference\.label"):
        load_dataset(_write(tmp_path / "a.jsonl", [row]))
    row = examples.cases[0].model_dump(mode="json")
    row["public"]["secret"] = 1
    with pytest.raises(DatasetError, match=r"public\.secret"):
        load_dataset(_write(tmp_path / "b.jsonl", [row]))


def test_duplicate_case_ids_are_refused(tmp_path: Path, examples: Dataset) -> None:
    row = examples.cases[0].model_dump(mode="json")
    with pytest.raises(DatasetError, match="duplicate case id"):
        load_dataset(_write(tmp_path / "dup.jsonl", [row, row]))


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(tmp_path / "nope.jsonl")


def test_select_split_and_limit(examples: Dataset) -> None:
    assert len(examples.select("dev")) == 8
    assert len(examples.select("test")) == 0
    assert len(examples.select("all", limit=3)) == 3


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    | st.text(alphabet=st.characters(categories=["Cs", "Ll", "Nd", "Zs"])),  # lone surrogates
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8)
_EXAMPLE_CASE = load_examples().cases[0].model_dump(mode="json")


@settings(max_examples=200, deadline=None)
@given(arguments=st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=4),
       ascii_only=st.booleans())
def test_a_line_is_read_as_the_json_module_reads_it(arguments: dict[str, object],
                                                    ascii_only: bool) -> None:
    """pydantic reads a case line itself; whatever it accepts is the case the json module's
    reading gives (lone surrogates, big integers, NaN, duplicate-free objects of any value),
    and what it refuses is read that way."""
    raw = copy.deepcopy(_EXAMPLE_CASE)
    raw["public"]["request"]["arguments"] = arguments
    line = json.dumps(raw, ensure_ascii=ascii_only)
    expected = Case.model_validate(json.loads(line))
    read = parse_line("cases.jsonl", 1, line)
    assert read is not None
    assert repr(read.model_dump()) == repr(expected.model_dump())
