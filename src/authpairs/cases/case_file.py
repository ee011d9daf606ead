"""The cases of a JSONL dataset file that a run selects, read from the file as they are needed.

A :class:`~authpairs.cases.dataset.Dataset` holds every case in memory; a run over a file of
100,000 cases would hold them all for its whole length. :class:`CaseFile` instead reads the file
again each time its cases are iterated, so a run's memory does not grow with the number of
cases: one pass before the run (:meth:`CaseFile.survey`: every line validated, the manifest, the
case ids, whether any case carries an effect) and one as the run goes. The cases, their order,
the manifest and every error message are those :func:`~authpairs.cases.dataset.load_dataset`
and :meth:`~authpairs.cases.dataset.Dataset.select_for_run` give for the same file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from authpairs.cases.dataset import DatasetError, Manifest, manifest_and_ids, parse_line
from authpairs.cases.models import Case


@dataclass(frozen=True)
class Survey:
    """What one pass over the selected cases found."""

    manifest: Manifest
    case_ids: list[str]
    has_effects: bool


class CaseFile:
    """The cases of ``path`` in ``split`` (None or ``"all"``: every case), the first ``limit``
    in file order, or a balanced ``sample`` of that many chosen by ``sample_seed``
    (:mod:`authpairs.cases.sampling`; one extra pass over the file reads the labels and families).

    ``check`` is called on every selected case during :meth:`survey` (e.g. to validate effect
    descriptors before any model call) and may raise a :class:`DatasetError`.
    """

    def __init__(self, path: str | Path, *, split: str | None = None, limit: int | None = None,
                 sample: int | None = None, sample_seed: int = 0,
                 check: Callable[[Case], None] | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise DatasetError(self.path, "dataset file not found")
        self.split = split
        self.limit = limit
        self.sample = sample
        self.sample_seed = sample_seed
        self.check = check
        self._sampled: frozenset[str] | None = None
        suffix = "" if split in (None, "all") else f":{split}"
        self.name = f"{self.path.stem}{suffix}"
        self._survey: Survey | None = None

    @classmethod
    def for_run(cls, path: str | Path, split: str | None, limit: int | None = None, *,
                sample: int | None = None, sample_seed: int = 0,
                check: Callable[[Case], None] | None = None) -> CaseFile:
        """The cases a run reviews, chosen as
        :meth:`~authpairs.cases.dataset.Dataset.select_for_run` chooses them: ``split=None``
        is the dev split when the file has one, otherwise every case; an explicit split the
        file lacks, or an empty selection, is a :class:`DatasetError`."""
        splits = [] if split == "all" else _splits(Path(path))  # "all" needs no split list
        if split is None:
            split = "dev" if "dev" in splits else "all"
        if split not in ("all", *splits):
            raise DatasetError(Path(path).stem, f"has no '{split}' split (splits: "
                               f"{', '.join(splits) or 'none'}; or use 'all')")
        chosen = cls(path, split=split, limit=limit, sample=sample, sample_seed=sample_seed,
                     check=check)
        if not chosen.survey().case_ids:
            raise DatasetError(chosen.name, "the selection is empty: nothing to review")
        return chosen

    def __iter__(self) -> Iterator[Case]:
        sampled = self._sample_ids() if self.sample is not None else None
        for case in self._in_split():
            if sampled is None or case.case_id in sampled:
                yield case

    def _in_split(self) -> Iterator[Case]:
        """The cases of the split in file order, the first ``limit`` of them."""
        taken = 0
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if self.limit is not None and taken >= self.limit:
                    return
                case = parse_line(self.path, number, line)
                if case is None or (self.split not in (None, "all")
                                    and case.split != self.split):
                    continue
                taken += 1
                yield case

    def _sample_ids(self) -> frozenset[str]:
        """The ids of the balanced sample (one pass keeping only ids, labels and families)."""
        if self._sampled is None:
            from authpairs.cases.sampling import key_of, sample_ids

            assert self.sample is not None
            self._sampled = frozenset(sample_ids((key_of(case) for case in self._in_split()),
                                                 self.sample, self.sample_seed))
        return self._sampled

    def __len__(self) -> int:
        return len(self.survey().case_ids)

    def survey(self) -> Survey:
        """One pass over the selected cases (made once): each is validated and checked, and
        duplicate ids are refused."""
        if self._survey is None:
            effects = False

            def checked() -> Iterator[Case]:
                nonlocal effects
                for case in self:
                    effects = effects or case.public.effect is not None
                    if self.check is not None:
                        self.check(case)
                    yield case

            manifest, ids = manifest_and_ids(self.name, checked())
            self._survey = Survey(manifest, ids, effects)
        return self._survey

    def manifest(self) -> Manifest:
        """The manifest of the selected cases (as :meth:`Dataset.manifest` computes it)."""
        return self.survey().manifest

    def case_ids(self) -> list[str]:
        """The ids of the selected cases, in order."""
        return list(self.survey().case_ids)

    def has_effects(self) -> bool:
        """Whether any selected case carries an effect descriptor (found by the survey)."""
        return self.survey().has_effects


def _splits(path: Path) -> list[str]:
    """The splits named in a JSONL file, sorted (lines that are not objects are left to the
    validating pass, which names them)."""
    if not path.is_file():
        raise DatasetError(path, "dataset file not found")
    found: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:  # a blank line is not JSON either
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(raw, dict) and isinstance(raw.get("split"), str):
                found.add(raw["split"])
    return sorted(found)
