"""A declared family of contrasts between existing runs, Holm-adjusted together.

Use this when the runs already exist (a study plan computes its own family). A family file::

    name: interface changes          # optional
    records: runs/authpairs.sqlite   # optional default for bare run ids
    draws: 10000                     # optional
    seed: 39039                      # optional
    contrasts:
      - {name: "9B seed 0 direct -> schema", before: run-1a2b, after: run-3c4d}
      - [run-5e6f, other.sqlite::run-7a8b]   # [before, after]; the name defaults to both ids

The family is fixed by the file before any result is seen; Holm runs over every listed contrast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authpairs.analysis.contrast import Contrast, adjust_family, compare_runs
from authpairs.analysis.runref import DEFAULT_RECORDS, load_run
from authpairs.analysis.stats import DEFAULT_DRAWS, DEFAULT_SEED
from authpairs.errors import ConfigError
from authpairs.runs.records import CaseRecord
from authpairs.yamlfiles import read_yaml_mapping


class FamilyError(ConfigError):
    """A family file is malformed; the message names the file and entry."""


@dataclass(frozen=True)
class DeclaredContrast:
    """One declared contrast: a name and two run addresses."""

    name: str
    before: str
    after: str


@dataclass(frozen=True)
class FamilySpec:
    """A parsed family file."""

    name: str
    records: Path
    draws: int
    seed: int
    contrasts: tuple[DeclaredContrast, ...]


def _entry(item: Any, where: str) -> DeclaredContrast:
    if isinstance(item, list | tuple):
        if len(item) != 2 or not all(isinstance(x, str) and x for x in item):
            raise FamilyError(f"{where}: expected [before, after] run addresses")
        return DeclaredContrast(f"{item[0]} -> {item[1]}", item[0], item[1])
    if isinstance(item, dict):
        extra = set(item) - {"name", "before", "after"}
        if extra:
            raise FamilyError(f"{where}: unknown field(s) {sorted(extra)}")
        for key in ("before", "after"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise FamilyError(f"{where}: field '{key}' must be a run address")
        name = item.get("name") or f"{item['before']} -> {item['after']}"
        return DeclaredContrast(str(name), item["before"], item["after"])
    raise FamilyError(f"{where}: expected a mapping or a [before, after] list")


def load_family(path: str | Path) -> FamilySpec:
    """Read and validate a family file."""
    p = Path(path)
    raw = read_yaml_mapping(p, "family file", FamilyError, hint=" with a 'contrasts' list")
    extra = set(raw) - {"name", "records", "draws", "seed", "contrasts"}
    if extra:
        raise FamilyError(f"{p}: unknown field(s) {sorted(extra)}")
    items = raw.get("contrasts")
    if not isinstance(items, list) or not items:
        raise FamilyError(f"{p}: field 'contrasts' must be a non-empty list")
    for key in ("draws", "seed"):
        if key in raw and (not isinstance(raw[key], int) or isinstance(raw[key], bool)
                           or (key == "draws" and raw[key] < 1)):
            raise FamilyError(f"{p}: field '{key}' must be a{' positive' * (key == 'draws')} "
                              "integer")
    contrasts = tuple(_entry(item, f"{p}: contrasts[{i}]") for i, item in enumerate(items))
    names = [c.name for c in contrasts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise FamilyError(f"{p}: duplicate contrast name(s) {dupes}")
    return FamilySpec(name=str(raw.get("name") or p.stem),
                      records=Path(raw.get("records") or DEFAULT_RECORDS),
                      draws=int(raw.get("draws", DEFAULT_DRAWS)),
                      seed=int(raw.get("seed", DEFAULT_SEED)), contrasts=contrasts)


def run_family(spec: FamilySpec) -> list[Contrast]:
    """Load every run of a family file (each once) and analyze the family: Holm over every
    listed contrast."""
    loaded: dict[str, tuple[str, list[CaseRecord]]] = {}
    for address in (a for c in spec.contrasts for a in (c.before, c.after)):
        if address not in loaded:
            ref, records = load_run(address, spec.records)
            loaded[address] = (ref.run_id, records)
    return adjust_family([
        compare_runs(loaded[c.before][1], loaded[c.after][1], before_run=loaded[c.before][0],
                     after_run=loaded[c.after][0], name=c.name, draws=spec.draws,
                     seed=spec.seed) for c in spec.contrasts])
