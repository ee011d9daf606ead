"""Datasets: an ordered collection of cases with a manifest, loaded from JSONL with clear errors.

File format: one :class:`~authpairs.cases.models.Case` as a JSON object per line. A malformed
record raises :class:`DatasetError` naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from authpairs.cases.canonical import canonical_json
from authpairs.cases.models import Case
from authpairs.errors import DataError
from authpairs.yamlfiles import first_error


class DatasetError(DataError):
    """A dataset file or record is malformed; the message names the file, record and field."""

    def __init__(self, path: str | Path, message: str, record: str | int | None = None,
                 field: str | None = None) -> None:
        self.path = str(path)
        self.record = record
        self.field = field
        where = self.path
        if record is not None:
            where += f", record {record}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


def validation_error(path: str | Path, record: str | int, exc: ValidationError) -> DatasetError:
    """Turn a pydantic error into a :class:`DatasetError` naming the first bad field."""
    field, message = first_error(exc)
    return DatasetError(path, message, record=record, field=field)


@dataclass(frozen=True)
class Manifest:
    """Identity of a dataset: its name, counts and hashes.

    ``public_sha256`` hashes the sorted (case id, public input hash) pairs, so it changes exactly
    when a reviewer could see something different. ``full_sha256`` also covers reference data.
    """

    name: str
    n_cases: int
    public_sha256: str
    full_sha256: str

    def to_dict(self) -> dict[str, object]:
        """Plain-JSON form, as stored with every run."""
        return asdict(self)


class CaseSource(Protocol):
    """What a run reviews: cases with unique ids that can be iterated again (a
    :class:`Dataset` in memory, or a :class:`~authpairs.cases.case_file.CaseFile` read from its
    file each time)."""

    name: str

    def __iter__(self) -> Iterator[Case]: ...

    def __len__(self) -> int: ...

    def case_ids(self) -> list[str]:
        """The ids of the cases, in order."""
        ...

    def manifest(self) -> Manifest:
        """The identity of the cases."""
        ...

    def has_effects(self) -> bool:
        """Whether any case carries an effect descriptor (a run then needs a sandbox)."""
        ...


@dataclass
class Dataset:
    """An ordered list of cases with unique ids."""

    name: str
    cases: list[Case] = field(default_factory=list)

    def __post_init__(self) -> None:
        _refuse_first_repeat(self.name, (case.case_id for case in self.cases))

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def by_id(self) -> dict[str, Case]:
        """Cases keyed by id."""
        return {c.case_id: c for c in self.cases}

    def select(self, split: str | None = None, limit: int | None = None) -> Dataset:
        """A sub-dataset: one split ('dev'/'test'; None or 'all' keeps both), first ``limit``."""
        chosen = [c for c in self.cases if split in (None, "all") or c.split == split]
        if limit is not None:
            chosen = chosen[:limit]
        suffix = "" if split in (None, "all") else f":{split}"
        return Dataset(name=f"{self.name}{suffix}", cases=chosen)

    def splits(self) -> list[str]:
        """The splits this dataset's cases belong to, sorted."""
        return sorted({c.split for c in self.cases})

    def select_for_run(self, split: str | None, limit: int | None = None,
                       sample: int | None = None, sample_seed: int = 0) -> Dataset:
        """The cases a run reviews. ``split=None`` means the dev split when the dataset has one,
        otherwise every case (so an imported or hand-written dataset is never silently empty).
        An explicit split the dataset lacks, or an empty selection, is a :class:`DatasetError`.
        ``limit`` keeps the first N cases in file order; ``sample`` a slice of N balanced by
        label and family, chosen by ``sample_seed`` (:mod:`authpairs.cases.sampling`).
        """
        if split is None:
            split = "dev" if "dev" in self.splits() else "all"
        if split not in ("all", *self.splits()):
            raise DatasetError(self.name, f"has no '{split}' split (splits: "
                               f"{', '.join(self.splits()) or 'none'}; or use 'all')")
        chosen = self.select(split, limit)
        if sample is not None:
            from authpairs.cases.sampling import sample_cases

            chosen = Dataset(name=chosen.name,
                             cases=sample_cases(chosen.cases, sample, sample_seed))
        if not chosen.cases:
            raise DatasetError(self.name, "the selection is empty: nothing to review")
        return chosen

    def manifest(self) -> Manifest:
        """Compute this dataset's :class:`Manifest`."""
        return manifest_of(self.name, self.cases)

    def case_ids(self) -> list[str]:
        """The ids of the cases, in order."""
        return [c.case_id for c in self.cases]

    def has_effects(self) -> bool:
        """Whether any case carries an effect descriptor."""
        return any(c.public.effect is not None for c in self.cases)

    def write_jsonl(self, path: str | Path) -> None:
        """Write the dataset as canonical JSONL (one case per line)."""
        Path(path).write_text("".join(canonical_json(c) + "\n" for c in self.cases),
                              encoding="utf-8")


def manifest_of(name: str, cases: Iterable[Case]) -> Manifest:
    """The :class:`Manifest` of ``cases`` (read once). Case ids are unique, as in a
    :class:`Dataset`: a repeated one is a :class:`DatasetError`."""
    return manifest_and_ids(name, cases)[0]


def manifest_and_ids(name: str, cases: Iterable[Case]) -> tuple[Manifest, list[str]]:
    """The :class:`Manifest` of ``cases`` and their ids in the order read: the cases are read
    once and, of each, only its id and the two SHA-256 digests are kept (64 bytes in one
    buffer), so the memory of a large file's manifest is little more than its ids. A repeated
    id is a :class:`DatasetError` naming the first repeat in reading order, as :class:`Dataset`
    names it."""
    ids: list[str] = []
    digests = bytearray()  # per case, in reading order: SHA-256 of its public part, then of it
    for case in cases:  # one dump per case serves both hashes
        dumped = case.model_dump(mode="json")
        public_text = canonical_json(dumped["public"])
        full_text = _canonical_with(dumped, "public", public_text)
        ids.append(case.case_id)
        digests += hashlib.sha256(public_text.encode("utf-8")).digest()
        digests += hashlib.sha256(full_text.encode("utf-8")).digest()
    order = sorted(range(len(ids)), key=ids.__getitem__)
    if any(ids[a] == ids[b] for a, b in itertools.pairwise(order)):
        _refuse_first_repeat(name, ids)
    manifest = Manifest(name, len(ids), _sorted_pairs_sha256(ids, order, digests, 0),
                        _sorted_pairs_sha256(ids, order, digests, 32))
    return manifest, ids


def _refuse_first_repeat(name: str, ids: Iterable[str]) -> None:
    """Raise the :class:`DatasetError` for the first id of ``ids`` that repeats an earlier one
    (none repeating: return)."""
    seen: set[str] = set()
    for case_id in ids:
        if case_id in seen:
            raise DatasetError(name, "duplicate case id", record=case_id, field="case_id")
        seen.add(case_id)


def _canonical_with(value: dict[str, object], key: str, text: str) -> str:
    """:func:`canonical_json` of the object ``value`` whose member ``key`` is already written
    as ``text`` (its canonical JSON): the same text, without encoding that member again."""
    before = canonical_json({k: v for k, v in value.items() if k < key})[1:-1]
    after = canonical_json({k: v for k, v in value.items() if k > key})[1:-1]
    parts = (before, f"{canonical_json(key)}:{text}", after)  # keys in sorted order
    return "{" + ",".join(part for part in parts if part) + "}"


def _sorted_pairs_sha256(ids: list[str], order: list[int], digests: bytearray, at: int) -> str:
    """:func:`sha256_hex` of the list of ``[case id, hash]`` pairs sorted by case id (``order``:
    the positions of ``ids`` in sorted order; each hash the hex of the 32 bytes at ``at`` of
    that case's 64 in ``digests``), written one pair at a time: the same digest without the
    whole text."""
    digest = hashlib.sha256(b"[")
    for number, index in enumerate(order):
        if number:
            digest.update(b",")
        start = 64 * index + at
        pair = [ids[index], digests[start:start + 32].hex()]
        digest.update(canonical_json(pair).encode("utf-8"))
    digest.update(b"]")
    return digest.hexdigest()


def parse_line(path: str | Path, number: int, line: str) -> Case | None:
    """The case on line ``number`` of a JSONL file (None for a blank line); errors name the
    file, line number and field."""
    if not line.strip():
        return None
    try:  # pydantic reads the JSON itself (the usual case, and the quicker one)
        return Case.model_validate_json(line)
    except ValidationError:
        pass  # read again below: to name the line, the case and the field of the error, or
        # to accept what only pydantic's stricter JSON reader refuses (an escaped lone surrogate)
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(path, f"invalid JSON: {exc.msg} (column {exc.colno})",
                           record=f"line {number}") from exc
    if not isinstance(raw, dict):
        raise DatasetError(path, "a case must be a JSON object", record=f"line {number}")
    record = f"line {number}" + (f" ({raw['case_id']})" if isinstance(raw.get("case_id"), str)
                                 else "")
    try:
        return Case.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(path, record, exc) from exc


def load_dataset(path: str | Path, name: str | None = None) -> Dataset:
    """Load a JSONL dataset file. Raises :class:`DatasetError` on any malformed record."""
    p = Path(path)
    if not p.is_file():
        raise DatasetError(p, "dataset file not found")
    with p.open(encoding="utf-8") as handle:
        cases = [case for number, line in enumerate(handle, start=1)
                 if (case := parse_line(p, number, line)) is not None]
    return Dataset(name=name or p.stem, cases=cases)
