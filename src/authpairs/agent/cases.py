"""The cases a serve session offers: a run configuration's dataset and split, optionally
narrowed to named case ids."""

from __future__ import annotations

from collections.abc import Sequence

from authpairs.cases.dataset import Dataset
from authpairs.errors import ConfigError
from authpairs.runs.api import load_run_dataset
from authpairs.runs.config import RunConfig


def select_cases(config: RunConfig, case_ids: Sequence[str] = ()) -> Dataset:
    """The cases of ``config`` (dataset, split, limit; effects validated), narrowed to
    ``case_ids`` in the order given when there are any. With case ids and no split, every
    split is searched. Only cases with an effect descriptor can be served: agent mode compares
    the agent's calls with the case's operation."""
    if case_ids and config.split is None:
        config = config.model_copy(update={"split": "all"})
    dataset = load_run_dataset(config)
    if case_ids:
        by_id = dataset.by_id()
        unknown = [case_id for case_id in case_ids if case_id not in by_id]
        if unknown:
            raise ConfigError(f"dataset '{config.dataset}' (split {config.split}) has no case "
                              f"{', '.join(repr(c) for c in unknown)}")
        dataset = Dataset(dataset.name, [by_id[case_id] for case_id in dict.fromkeys(case_ids)])
    without = [case.case_id for case in dataset if case.public.effect is None]
    if without:
        raise ConfigError(f"{len(without)} selected case(s) carry no effect descriptor (e.g. "
                          f"'{without[0]}'); agent mode serves cases with an operation only")
    if not len(dataset):
        raise ConfigError(f"dataset '{config.dataset}' (split {config.split}) selects no cases")
    return dataset
