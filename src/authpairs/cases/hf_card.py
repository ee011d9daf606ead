"""The dataset card (README.md) of an exported Hugging Face dataset folder.

The YAML front matter is what the Hub reads: ``configs`` (``public`` is the default; each config's
splits point at its own Parquet files), ``dataset_info`` (features and split sizes per config),
``license`` and ``pretty_name``; every split records ``num_bytes`` and ``num_examples`` as
``datasets`` counts them, so the card loads without warnings. The body describes the configs and
each column, the sources with their repositories, revisions and licences, and how to cite the
paper.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml

from authpairs.cases import hf
from authpairs.cases.dataset import Dataset

COLUMNS = {"public": hf.PUBLIC_COLUMNS, "reference": hf.REFERENCE_COLUMNS}


def hub_license_id(licence: str) -> str:
    """The Hub licence id for a source licence string ('Apache-2.0 (synthetic)' -> apache-2.0)."""
    first = licence.split(" ")[0].strip().lower()
    known = {"apache-2.0", "mit", "cc-by-4.0", "cc-by-sa-4.0", "cc0-1.0", "bsd-3-clause",
             "bsd-2-clause", "mpl-2.0"}
    return first if first in known else "other"


def _features(columns: dict[str, str]) -> list[dict[str, Any]]:
    documents = [{"name": f, "dtype": "string"} for f in hf.DOCUMENT_FIELDS]
    return [{"name": name, "list": documents} if dtype == "documents"
            else {"name": name, "dtype": dtype} for name, dtype in columns.items()]


def card_metadata(dataset: Dataset, counts: dict[str, int],
                  sizes: dict[str, dict[str, hf.SplitSize]]) -> dict[str, Any]:
    """The YAML front matter of the card (``sizes``: per config and split, as written)."""
    ids = sorted({hub_license_id(c.source.licence or "unspecified") for c in dataset})
    configs, infos = [], []
    for config in hf.CONFIGS:
        entry: dict[str, Any] = {
            "config_name": config,
            "data_files": [{"split": s, "path": hf.split_file(config, s)} for s in counts]}
        if config == "public":
            entry["default"] = True
        configs.append(entry)
        written = sizes[config]
        infos.append({
            "config_name": config, "features": _features(COLUMNS[config]),
            "splits": [{"name": s, "num_bytes": written[s].num_bytes,
                        "num_examples": written[s].num_examples} for s in counts],
            "download_size": sum(written[s].file_bytes for s in counts),
            "dataset_size": sum(written[s].num_bytes for s in counts)})
    return {"pretty_name": f"AuthorizationPairs ({dataset.name})",
            "license": ids[0] if len(ids) == 1 else ids,
            "task_categories": ["text-classification"], "language": ["en"],
            "tags": ["authorization", "guardrails", "access-control", "llm-evaluation"],
            "configs": configs, "dataset_info": infos}


def _sources_table(dataset: Dataset) -> str:
    rows: Counter[tuple[str, str, str, str]] = Counter(
        (c.source.track, str(c.reference.facts.get("repository") or "-"),
         c.source.revision or "-", c.source.licence or "unspecified") for c in dataset)
    lines = ["| track | repository | revision | licence | cases |", "|---|---|---|---|---|"]
    lines += [f"| {t} | {repo} | {r} | {lic} | {n} |"
              for (t, repo, r, lic), n in sorted(rows.items())]
    repositories = sorted({repo for _, repo, _, _ in rows} - {"-"})
    if repositories:
        lines += ["", "Upstream repositories: " + ", ".join(repositories) + "."]
    if any(repo == "-" for _, repo, _, _ in rows):
        lines += ["", "Rows without a repository were written for authpairs and ship with it "
                      "(synthetic scenarios and examples)."]
    return "\n".join(lines)


def _columns_table(config: str) -> str:
    lines = ["| column | type | description |", "|---|---|---|"]
    for name, dtype in COLUMNS[config].items():
        shown = "list of {" + ", ".join(hf.DOCUMENT_FIELDS) + "}" if dtype == "documents" else dtype
        lines.append(f"| `{name}` | {shown} | {hf.COLUMN_DESCRIPTIONS[name]} |")
    return "\n".join(lines)


def dataset_card(dataset: Dataset, counts: dict[str, int],
                 sizes: dict[str, dict[str, hf.SplitSize]]) -> str:
    """The full README.md: YAML front matter plus a description of configs, columns, sources."""
    front = yaml.safe_dump(card_metadata(dataset, counts, sizes), sort_keys=False,
                           allow_unicode=True)
    manifest = dataset.manifest()
    splits = ", ".join(f"{s}: {n}" for s, n in counts.items())
    return f"""---
{front}---

# AuthorizationPairs: {dataset.name}

Request-level authorization cases exported by `authpairs data export-hf` ({len(dataset)} cases;
{splits}). Each case asks whether a policy permits one request under the given evidence.

## Configs

* `public` (default) -- everything a reviewer may see: the request, the policy text, the
  evidence and the public effect descriptor. Free-form objects (`arguments`, `environment`,
  `evidence_state`, `effect_params`) are canonical JSON strings.
* `reference` -- the reference label (`lawful`/`forbidden`), permission expression, derived
  facts, notes, grouping attributes (family, domain, engine, ...) and provenance. Publish only
  `public` to withhold labels from a leaderboard.

Both configs are joined on `case_id`; `position` keeps the dataset's order.

### Columns of `public`

{_columns_table("public")}

### Columns of `reference`

{_columns_table("reference")}

```python
from datasets import load_dataset
public = load_dataset("parquet", data_files={{"dev": "public/dev-*.parquet"}})
```

`authpairs run --dataset THIS_FOLDER` runs the cases directly (both configs are needed).

Public manifest SHA-256: `{manifest.public_sha256}`
(full: `{manifest.full_sha256}`); runs on this folder and on the original dataset share it.

## Sources and licences

{_sources_table(dataset)}

## Citation

```bibtex
{hf.PAPER_CITATION}
```
"""
