"""The manifest hashes are the SHA-256 of each case's canonical JSON and of its public part.

:func:`manifest_of` writes the public part once and reuses its text inside the whole case's;
these tests hold that text to :func:`canonical_json` of the whole case, byte for byte.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.cases.canonical import canonical_json, sha256_hex
from authpairs.cases.dataset import Dataset, DatasetError, _canonical_with, manifest_of
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import resolve_dataset

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), _json, max_size=6), st.text(), _json)
def test_a_member_written_once_gives_the_canonical_text(value: dict[str, Any], key: str,
                                                       member: Any) -> None:
    value = {**value, key: member}
    assert _canonical_with(value, key, canonical_json(member)) == canonical_json(value)


def _manifest_by_definition(dataset: Dataset) -> tuple[str, str]:
    """The SHA-256 of the sorted [case id, SHA-256 of the public part / of the case] pairs."""
    dumped = [(c.case_id, c.model_dump(mode="json")) for c in dataset]
    return (sha256_hex(sorted([i, sha256_hex(d["public"])] for i, d in dumped)),
            sha256_hex(sorted([i, sha256_hex(d)] for i, d in dumped)))


def test_the_manifests_of_the_shipped_cases_follow_the_definition() -> None:
    for name in ("examples", "language"):
        dataset = resolve_dataset(name)
        manifest = manifest_of(dataset.name, dataset)
        assert (manifest.public_sha256, manifest.full_sha256) == \
            _manifest_by_definition(dataset), name


def test_the_manifest_is_unchanged_for_the_recorded_runs() -> None:
    """The manifest hashes the golden records' header holds (written by an earlier version)."""
    from tests.runs.golden import golden_run

    with RecordStore(golden_run.GOLDEN_DIR / "records-ad1b1ba.sqlite", readonly=True) as store:
        (info,) = [store.get_run(r.run_id) for r in store.list_runs()]
    assert info is not None
    dataset = resolve_dataset(info.config["resolved"]["dataset"])
    manifest = manifest_of(info.manifest["name"], dataset)
    assert manifest.to_dict() == info.manifest
    assert manifest.public_sha256 == info.manifest_sha256


def test_a_repeated_case_id_is_refused() -> None:
    case = next(iter(resolve_dataset("examples")))
    with pytest.raises(DatasetError, match="duplicate case id"):
        manifest_of("twice", [case, case])
