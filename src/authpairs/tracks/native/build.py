"""Build the native-policy track from the staged sources: import, label by engine, split.

``build_native`` runs every OpenFGA store test file through the CLI's embedded engine (one
process per file, concurrently) and every Cedar example folder through ``cedarpy`` (one batch per
folder), merges duplicate inputs, applies the connected split and returns the cases together
with the raw engine answers (which ``verify`` reports on).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from authpairs.cases.models import Case
from authpairs.tracks.native import split as split_rule
from authpairs.tracks.native.cases import (
    SourceInfo,
    _Draft,
    cedar_drafts,
    draft_to_case,
    openfga_drafts,
)
from authpairs.tracks.native.cedar_engine import CedarAnswer, evaluate_example
from authpairs.tracks.native.cedar_import import (
    CedarExample,
    find_example_folders,
    load_cedar_example,
)
from authpairs.tracks.native.openfga_engine import FgaRun, fga_binary, run_suites
from authpairs.tracks.native.openfga_import import find_test_files, load_fga_suite
from authpairs.tracks.native.sources import (
    CEDAR_DIR,
    OPENFGA_DIR,
    read_provenance,
    resolve_sources,
)

DATASET = "native"
TRACK = "native"
CEDAR_EXAMPLES = "cedar-example-use-cases"
# The upstream test scripts pass no schema for these two apps (their entity files do not
# conform to their schemas); every other app is evaluated with its schema.
CEDAR_NO_SCHEMA = frozenset({"github_example", "document_cloud"})


def fga_version() -> str:
    """The OpenFGA CLI version line, e.g. ``fga v0.8.2 (embedded engine)``."""
    try:
        out = subprocess.run([fga_binary(), "version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "fga (unknown version)"
    words = out.replace("`", "").split()
    version = next((w for w in words if w.startswith("v0") or w.startswith("v1")), "unknown")
    return f"OpenFGA CLI {version}, embedded engine"


def cedar_version() -> str:
    """The cedarpy version string."""
    try:
        return f"cedarpy {metadata.version('cedarpy')}"
    except metadata.PackageNotFoundError:
        return "cedarpy (unknown version)"


CedarItem = tuple[CedarExample, list[CedarAnswer], SourceInfo]
FgaItem = tuple[FgaRun, SourceInfo]


@dataclass
class NativeBuild:
    """The built track: cases plus the engine answers and timings behind them."""

    cases: list[Case]
    openfga: list[FgaItem] = field(default_factory=list)
    cedar: list[CedarItem] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def label_openfga_tree(tree: Path, workers: int | None = None) -> list[FgaItem]:
    """Import and run every ``*.fga.yaml`` under ``tree/stores`` (or ``tree``)."""
    provenance = read_provenance(tree)
    stores = tree / "stores" if (tree / "stores").is_dir() else tree
    files = find_test_files(stores)
    suites = [load_fga_suite(f) for f in files]
    runs = run_suites(suites, workers=workers)
    version = fga_version()
    items: list[FgaItem] = []
    for run in runs:
        rel_tree = run.suite.path.relative_to(tree).as_posix()
        rel_stores = run.suite.path.relative_to(stores)
        folder = rel_stores.parts[0] if len(rel_stores.parts) > 1 else stores.name
        info = SourceInfo(dataset=DATASET, track=TRACK, relpath=f"{tree.name}/{rel_tree}",
                          group=f"openfga/{folder}", provenance=provenance,
                          provenance_relpath=rel_tree, engine_version=version)
        items.append((run, info))
    return items


def label_cedar_tree(tree: Path) -> list[CedarItem]:
    """Import and evaluate every example folder under ``tree/cedar-example-use-cases``."""
    provenance = read_provenance(tree)
    root = tree / CEDAR_EXAMPLES
    version = cedar_version()
    items: list[CedarItem] = []
    for folder in find_example_folders(root):
        rel = folder.relative_to(root).as_posix()
        app = rel.split("/")[0]
        example = load_cedar_example(folder, root, use_schema=app not in CEDAR_NO_SCHEMA)
        answers = evaluate_example(example)
        info = SourceInfo(dataset=DATASET, track=TRACK,
                          relpath=f"{tree.name}/{CEDAR_EXAMPLES}/{rel}", group=f"cedar/{app}",
                          provenance=provenance, provenance_relpath=f"{CEDAR_EXAMPLES}/{rel}",
                          engine_version=version)
        items.append((example, answers, info))
    return items


def split_drafts(drafts: Sequence[_Draft], seed: str = split_rule.DEFAULT_SEED,
                 dev_fraction: float = split_rule.DEFAULT_DEV_FRACTION) -> list[Case]:
    """Apply the connected split to drafts and return the final cases."""
    items = [(d.attributes["group"], d.attributes["encoding"]) for d in drafts]
    sides = split_rule.assign(items, seed=seed, dev_fraction=dev_fraction)
    return [draft_to_case(d, sides[d.attributes["group"]]) for d in drafts]


def build_native(sources: Path | str | None = None, seed: str = split_rule.DEFAULT_SEED,
                 dev_fraction: float = split_rule.DEFAULT_DEV_FRACTION,
                 workers: int | None = None) -> NativeBuild:
    """Build the whole native-policy track from the sources directory."""
    root = resolve_sources(sources)
    start = time.perf_counter()
    fga_items = label_openfga_tree(root / OPENFGA_DIR, workers=workers)
    t_fga = time.perf_counter()
    cedar_items = label_cedar_tree(root / CEDAR_DIR)
    t_cedar = time.perf_counter()
    drafts = openfga_drafts(fga_items) + cedar_drafts(cedar_items)
    cases = split_drafts(drafts, seed=seed, dev_fraction=dev_fraction)
    timings = {"openfga_s": t_fga - start, "cedar_s": t_cedar - t_fga,
               "total_s": time.perf_counter() - start}
    return NativeBuild(cases=cases, openfga=fga_items, cedar=cedar_items, timings=timings)
