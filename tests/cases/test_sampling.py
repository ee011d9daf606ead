"""``--sample N``: a slice balanced by label and family, the same for the same seed in any
process, another for another seed, every case when N exceeds the split."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from authpairs.cases.case_file import CaseFile
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case
from authpairs.cases.sampling import SampleKey, label_quotas, sample_cases, sample_ids
from authpairs.tracks.registry import resolve_dataset


@pytest.fixture(scope="module")
def dev() -> Dataset:
    """The language dev split (40 cases, 7 families)."""
    return resolve_dataset("language").select_for_run("dev")


@pytest.fixture(scope="module")
def test_split() -> Dataset:
    """The language test split (160 cases, 11 families)."""
    return resolve_dataset("language").select_for_run("test")


def labels(cases: list[Case]) -> Counter[str]:
    """Cases per label."""
    return Counter(case.reference.label.value for case in cases)


def families(cases: list[Case]) -> set[str]:
    """The families present."""
    return {case.attributes["family"] for case in cases}


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 11, 12, 19, 39])
@pytest.mark.parametrize("seed", [0, 1, 42])
def test_labels_are_balanced_and_families_covered(dev: Dataset, test_split: Dataset,
                                                  n: int, seed: int) -> None:
    for split in (dev, test_split):
        chosen = sample_cases(split.cases, n, seed)
        assert len(chosen) == n
        counts = labels(chosen)
        assert abs(counts["forbidden"] - counts["lawful"]) <= 1, counts
        all_families = families(split.cases)
        if n >= len(all_families):
            assert families(chosen) == all_families
        else:
            assert len(families(chosen)) == n  # one case per family until every one is in
        assert len({case.case_id for case in chosen}) == n


def test_the_chosen_cases_keep_file_order(dev: Dataset) -> None:
    chosen = [case.case_id for case in sample_cases(dev.cases, 10, 3)]
    order = {case_id: index for index, case_id in enumerate(dev.case_ids())}
    assert chosen == sorted(chosen, key=order.__getitem__)


def test_n_at_least_the_split_takes_every_case(dev: Dataset) -> None:
    assert [c.case_id for c in sample_cases(dev.cases, 40, 5)] == dev.case_ids()
    assert [c.case_id for c in sample_cases(dev.cases, 1000, 5)] == dev.case_ids()
    assert dev.select_for_run("dev", sample=1000, sample_seed=5).case_ids() == dev.case_ids()


def test_another_seed_gives_another_slice(dev: Dataset) -> None:
    slices = {tuple(sample_ids(_keys(dev), 8, seed)) for seed in range(10)}
    assert len(slices) >= 8  # C(40, 8) balanced slices: a repeat is a rare coincidence
    assert sample_ids(_keys(dev), 8, 0) != sample_ids(_keys(dev), 8, 1)


def test_a_short_label_gives_its_room_to_the_other() -> None:
    assert label_quotas({"forbidden": 2, "lawful": 10}, 6, 0) == {"forbidden": 2, "lawful": 4}
    quotas = label_quotas({"forbidden": 5, "lawful": 5}, 7, 0)
    assert sorted(quotas.values()) == [3, 4]
    keys = [SampleKey(f"f{i}", "forbidden", "a") for i in range(2)] + [
        SampleKey(f"l{i}", "lawful", "b") for i in range(10)]
    chosen = sample_ids(keys, 6, 9)
    assert sum(case_id.startswith("f") for case_id in chosen) == 2 and len(chosen) == 6


def test_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        sample_ids([], 0)


def _keys(dataset: Dataset) -> list[SampleKey]:
    return [SampleKey(c.case_id, c.reference.label.value, c.attributes["family"])
            for c in dataset.cases]


def test_the_same_seed_gives_the_same_ids_in_another_process(dev: Dataset) -> None:
    code = ("import json, sys\n"
            "from authpairs.tracks.registry import resolve_dataset\n"
            "d = resolve_dataset('language').select_for_run('dev', sample=9, sample_seed=11)\n"
            "json.dump(d.case_ids(), sys.stdout)\n")
    # another process with another str hash than this one's
    hash_seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    here = resolve_dataset("language").select_for_run("dev", sample=9, sample_seed=11)
    assert json.loads(done.stdout) == here.case_ids()


def test_a_jsonl_file_samples_as_the_dataset_does(dev: Dataset, tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    dev.write_jsonl(path)
    streamed = CaseFile.for_run(path, None, sample=7, sample_seed=4)
    loaded = Dataset("dev", list(dev.cases)).select_for_run(None, sample=7, sample_seed=4)
    assert streamed.case_ids() == loaded.case_ids()
    assert [case.case_id for case in streamed] == loaded.case_ids()
    assert len(streamed) == 7
