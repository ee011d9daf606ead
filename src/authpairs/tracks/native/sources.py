"""Where the staged upstream sources live and what their PROVENANCE.md files say.

The sources are never part of the package: they are read from a directory given by the caller,
else from the ``AUTHPAIRS_SOURCES`` environment variable, else from ``../shared/sources`` beside
the repository root when it exists, else from where ``authpairs data fetch-sources`` puts them by
default (:func:`default_fetch_dest`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from authpairs.main_job import cache_root
from authpairs.tracks.native.errors import NativeImportError

SOURCES_ENV = "AUTHPAIRS_SOURCES"
OPENFGA_DIR = "openfga-sample-stores"
CEDAR_DIR = "cedar-examples"
LICENCE = "Apache-2.0"


def repo_root() -> Path:
    """The repository root (the directory holding ``pyproject.toml``) of this checkout."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file():
            return parent
    return here.parents[4]


def default_fetch_dest() -> Path:
    """Where ``fetch-sources`` writes by default: ``$AUTHPAIRS_CACHE/sources``, else
    ``$XDG_CACHE_HOME/authpairs/sources``, else ``~/.cache/authpairs/sources``."""
    return cache_root() / "sources"


def default_sources() -> Path:
    """``$AUTHPAIRS_SOURCES`` if set, else ``<repo>/../shared/sources`` when it exists, else
    :func:`default_fetch_dest` (which may not exist yet)."""
    env = os.environ.get(SOURCES_ENV)
    if env:
        return Path(env)
    shared = repo_root().parent / "shared" / "sources"
    return shared if shared.is_dir() else default_fetch_dest()


def resolve_sources(sources: Path | str | None = None) -> Path:
    """The sources directory to use; raises :class:`NativeImportError` when it is missing."""
    path = Path(sources) if sources is not None else default_sources()
    if not path.is_dir():
        raise NativeImportError(path, f"sources directory not found (run `authpairs data "
                                      f"fetch-sources`, pass --sources DIR or set "
                                      f"{SOURCES_ENV})")
    return path


@dataclass(frozen=True)
class Provenance:
    """Revision and licence facts of one upstream source tree."""

    repository: str
    licence: str
    default_commit: str
    file_commits: dict[str, str] = field(default_factory=dict)

    def commit_for(self, relpath: str) -> str:
        """The upstream commit of the file at ``relpath`` (relative to the tree root)."""
        return self.file_commits.get(relpath, self.default_commit)


_REPO = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+")
_COMMIT = re.compile(r"^- Commit: `([0-9a-f]{40})`", re.MULTILINE)
_ROW = re.compile(r"^\| `([^`]+)` \| `([0-9a-f]{40})` \|", re.MULTILINE)


def read_provenance(tree: Path) -> Provenance:
    """Parse ``tree/PROVENANCE.md``: repository, licence, the commit and per-file commits.

    A missing file gives empty facts (a user's own folder has no provenance); the licence is the
    upstream Apache-2.0 only when the PROVENANCE file says so.
    """
    path = tree / "PROVENANCE.md"
    if not path.is_file():
        return Provenance(repository="", licence="", default_commit="")
    text = path.read_text(encoding="utf-8")
    repo = _REPO.search(text)
    commit = _COMMIT.search(text)
    rows = {m.group(1): m.group(2) for m in _ROW.finditer(text)}
    licence = LICENCE if "Apache License 2.0" in text or "Apache-2.0" in text else ""
    return Provenance(
        repository=repo.group(0) if repo else "",
        licence=licence,
        default_commit=commit.group(1) if commit else "",
        file_commits=rows,
    )
