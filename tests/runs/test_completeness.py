"""``completeness`` compares recorded ids with the header's expected ids as sets would: each id
counted once, missing and unexpected ids sorted, duplicates on either side ignored."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.runs.completeness import completeness
from authpairs.runs.records import RunInfo

ids = st.lists(st.sampled_from([f"c{n}" for n in range(12)]), max_size=20)


def _info(expected: list[str]) -> RunInfo:
    return RunInfo(run_id="r", created_at="2026-12-04T00:00:00Z", config={}, config_sha256="",
                   manifest={}, manifest_sha256="", expected_case_ids=expected)


@settings(max_examples=300, deadline=None)
@given(expected=ids, recorded=ids)
def test_completeness_is_the_set_comparison(expected: list[str], recorded: list[str]) -> None:
    state = completeness(_info(expected), iter(recorded))
    want, got = set(expected), set(recorded)
    assert state.expected == len(want)
    assert state.recorded == len(want & got)
    assert state.missing == tuple(sorted(want - got))
    assert state.unexpected == tuple(sorted(got - want))
    assert state.complete == (not want - got)


def test_a_partial_run_names_what_is_missing_and_what_is_extra() -> None:
    state = completeness(_info(["b", "a", "c"]), ["c", "x", "a", "a"])
    assert (state.expected, state.recorded) == (3, 2)
    assert state.missing == ("b",) and state.unexpected == ("x",)
    assert state.describe() == ("run r: 2 recorded of 3 expected; INCOMPLETE, 1 missing: b; "
                                "1 records not in the expected set")
