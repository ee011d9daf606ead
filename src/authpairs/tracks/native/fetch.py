"""Obtain the native track's upstream sources at their pinned revisions and check every byte.

The package ships a manifest (``sources_manifest.json``): for every file of the two source trees
(``openfga-sample-stores/``, ``cedar-examples/``) its path, the upstream commit it was taken
from and its SHA-256. :func:`fetch_sources` reads each file from an origin, refuses any file
whose hash differs (the error names the file and both hashes), writes the set into a staging
folder beside the destination, adds provenance files and only then moves the trees into place.

Origins:

* none (the default): each file from its upstream repository at its pinned commit, over HTTPS
  (:data:`UPSTREAM_URL`; the OpenFGA set is assembled from several commits, so there is no single
  archive of it);
* a local folder laid out like the sources folder (``openfga-sample-stores/...``,
  ``cedar-examples/...``), e.g. a copy made on another machine;
* a git repository with that layout, a local one or any git URL ending in ``.git`` (cloned),
  read at ``revision`` (default ``HEAD``);
* an HTTP(S) or ``file://`` URL of such a folder, or a URL / path template with the
  placeholders ``{tree}``, ``{repository}``, ``{commit}``, ``{path}`` (path inside the upstream
  repository) and ``{source_path}`` (``{tree}/{path}``).

:func:`build_manifest` derives the manifest from a staged sources folder and its
``PROVENANCE.md`` files (``scripts/make_sources_manifest.py`` writes it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from authpairs._version import __version__
from authpairs.cases.canonical import sha256_hex
from authpairs.tracks.native.errors import NativeImportError
from authpairs.tracks.native.sources import (
    CEDAR_DIR,
    OPENFGA_DIR,
    default_fetch_dest,
    read_provenance,
)

MANIFEST_FILE = "sources_manifest.json"
MANIFEST_FORMAT = 1
TREES = (CEDAR_DIR, OPENFGA_DIR)
PROVENANCE = "PROVENANCE.md"
UPSTREAM_URL = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"
"""Where a file of an upstream repository lives at one commit (the default origin)."""
DOCS_PAGE = "docs/datasets/sources.md"
URL_TIMEOUT_S = 60.0
READ_WORKERS = 8
_PLACEHOLDERS = ("{tree}", "{repository}", "{commit}", "{path}", "{source_path}")
_COPIES = re.compile(r"^- (`[^`]+`(?: and `[^`]+`)*): unchanged copies from git commit "
                     r"`([0-9a-f]{40})`", re.MULTILINE)
_BLOB = re.compile(r"^\| `([^`]+)` \| `[0-9a-f]{40}` \| [^|]* \| `([0-9a-f]{40})` \|",
                   re.MULTILINE)


class SourcesError(NativeImportError):
    """A source file is missing, unreadable or not the pinned bytes; names the file."""


@dataclass(frozen=True)
class TreeInfo:
    """One upstream source tree: repository, licence and (when there is one) its commit."""

    repository: str
    licence: str
    commit: str = ""

    @property
    def url(self) -> str:
        """The repository's web address."""
        return f"https://github.com/{self.repository}"


@dataclass(frozen=True)
class ManifestFile:
    """One pinned file: path in the sources folder, upstream commit, SHA-256 and size."""

    path: str
    commit: str
    sha256: str
    size: int

    @property
    def tree(self) -> str:
        """The source tree (first path component)."""
        return self.path.split("/", 1)[0]

    @property
    def upstream_path(self) -> str:
        """The path inside the upstream repository."""
        return self.path.split("/", 1)[1]


@dataclass(frozen=True)
class SourcesManifest:
    """The pinned source set: trees and files (sorted by path)."""

    trees: dict[str, TreeInfo]
    files: tuple[ManifestFile, ...]

    def to_json(self) -> str:
        """The manifest file's text (stable: sorted keys, one file per line)."""
        trees = {name: {"repository": t.repository, "licence": t.licence, "commit": t.commit}
                 for name, t in sorted(self.trees.items())}
        lines = [json.dumps({"path": f.path, "commit": f.commit, "sha256": f.sha256,
                             "size": f.size}, sort_keys=True) for f in self.files]
        body = ",\n".join(lines)
        return (f'{{\n"format": {MANIFEST_FORMAT},\n"trees": '
                f'{json.dumps(trees, sort_keys=True, indent=1)},\n"files": [\n{body}\n]\n}}\n')

    @property
    def sha256(self) -> str:
        """SHA-256 of the manifest text (recorded in the provenance files)."""
        return sha256_hex(self.to_json())

    def by_path(self) -> dict[str, ManifestFile]:
        """Files keyed by their path in the sources folder."""
        return {f.path: f for f in self.files}


def parse_manifest(text: str) -> SourcesManifest:
    """Read a manifest from its JSON text."""
    data = json.loads(text)
    if data.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"unknown sources manifest format {data.get('format')!r}")
    trees = {name: TreeInfo(**info) for name, info in data["trees"].items()}
    files = tuple(ManifestFile(**entry) for entry in data["files"])
    return SourcesManifest(trees=trees, files=files)


def load_manifest() -> SourcesManifest:
    """The manifest shipped in the package."""
    text = resources.files("authpairs.tracks.native").joinpath(MANIFEST_FILE).read_text(
        encoding="utf-8")
    return parse_manifest(text)


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _tree_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*")
                  if p.is_file() and p.relative_to(tree).as_posix() != PROVENANCE)


def build_manifest(root: Path) -> SourcesManifest:
    """The manifest of a staged sources folder, from its files and ``PROVENANCE.md`` files.

    Every file except the provenance files is listed with the commit its ``PROVENANCE.md``
    names (a per-file row, a "copies from git commit" line, or the tree's commit). Where the
    provenance lists a git blob hash, the file must have it. A file without a known commit is
    an error.
    """
    trees: dict[str, TreeInfo] = {}
    files: list[ManifestFile] = []
    for name in TREES:
        tree = root / name
        text = (tree / PROVENANCE).read_text(encoding="utf-8")
        provenance = read_provenance(tree)
        copies = {path.strip("`"): commit for paths, commit in _COPIES.findall(text)
                  for path in paths.split(" and ")}
        blobs = dict(_BLOB.findall(text))
        repository = provenance.repository.removeprefix("https://github.com/")
        trees[name] = TreeInfo(repository=repository, licence=provenance.licence,
                               commit=provenance.default_commit)
        for path in _tree_files(tree):
            rel = path.relative_to(tree).as_posix()
            data = path.read_bytes()
            commit = provenance.file_commits.get(rel) or copies.get(rel) \
                or provenance.default_commit
            if not commit:
                raise SourcesError(path, "PROVENANCE.md names no commit for this file")
            if rel in blobs and blobs[rel] != _git_blob_sha1(data):
                raise SourcesError(path, f"git blob hash {_git_blob_sha1(data)} differs from "
                                         f"{blobs[rel]} in PROVENANCE.md")
            files.append(ManifestFile(path=f"{name}/{rel}", commit=commit,
                                      sha256=sha256_hex(data), size=len(data)))
    return SourcesManifest(trees=trees, files=tuple(sorted(files, key=lambda f: f.path)))


def check_tree(root: Path, manifest: SourcesManifest | None = None) -> list[str]:
    """Problems of a sources folder against the manifest; empty when it is the pinned set.

    A problem is a missing file, a file with other bytes (both hashes named) or a file the
    manifest does not list (it would change the dataset). Provenance files are not checked.
    """
    manifest = manifest or load_manifest()
    expected = manifest.by_path()
    problems: list[str] = []
    present: set[str] = set()
    for name in sorted({f.tree for f in manifest.files}):
        tree = root / name
        if tree.is_dir():
            present.update(f"{name}/{p.relative_to(tree).as_posix()}" for p in _tree_files(tree))
    for path, entry in expected.items():
        if path not in present:
            problems.append(f"{path}: missing")
            continue
        got = sha256_hex((root / path).read_bytes())
        if got != entry.sha256:
            problems.append(f"{path}: SHA-256 {got}, the manifest expects {entry.sha256}")
    problems += [f"{path}: not in the manifest" for path in sorted(present - set(expected))]
    return problems


Reader = Callable[[ManifestFile], bytes]


@dataclass
class FetchResult:
    """What :func:`fetch_sources` did."""

    dest: Path
    origin: str
    files: int
    bytes: int
    already_present: bool = False
    trees: dict[str, int] = field(default_factory=dict)


def _is_git_dir(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _is_git_url(origin: str) -> bool:
    return origin.endswith(".git") or origin.startswith(("git@", "git://", "ssh://"))


def _format(template: str, entry: ManifestFile, manifest: SourcesManifest,
            quote: bool) -> str:
    tree = manifest.trees[entry.tree]
    q = urllib.parse.quote if quote else str
    return template.format(tree=entry.tree, repository=tree.repository, commit=entry.commit,
                           path=q(entry.upstream_path), source_path=q(entry.path))


def _url_reader(template: str, manifest: SourcesManifest) -> Reader:
    def read(entry: ManifestFile) -> bytes:
        url = _format(template, entry, manifest, quote=True)
        try:
            with urllib.request.urlopen(url, timeout=URL_TIMEOUT_S) as response:
                data: bytes = response.read()
                return data
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise SourcesError(entry.path, f"cannot download {url}: {exc}") from exc
    return read


def _path_reader(locate: Callable[[ManifestFile], Path]) -> Reader:
    def read(entry: ManifestFile) -> bytes:
        path = locate(entry)
        if not path.is_file():
            raise SourcesError(entry.path, f"not found in the mirror at {path}")
        return path.read_bytes()
    return read


def _git(args: list[str], cwd: Path | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False,
                              timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourcesError(str(cwd or "."), f"git {args[0]} failed: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourcesError(str(cwd or "."), f"git {' '.join(args[:2])} failed: "
                                            f"{message[-1] if message else done.returncode}")
    return done.stdout


def _git_archive(repo: Path, revision: str, trees: list[str]) -> dict[str, bytes]:
    """Every file of ``trees`` in the repository at ``revision`` (one ``git archive``)."""
    listed = _git(["ls-tree", "--name-only", revision, "--", *trees], cwd=repo).decode()
    present = [t for t in trees if t in listed.split()]
    if not present:
        raise SourcesError(repo, f"the mirror has none of {', '.join(trees)} at {revision}")
    tar = _git(["archive", "--format=tar", revision, "--", *present], cwd=repo)
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                handle = archive.extractfile(member)
                if handle is not None:
                    files[member.name] = handle.read()
    return files


def _git_origin(repo: Path, revision: str, manifest: SourcesManifest, kind: str,
                label: str) -> tuple[Reader, str]:
    """The reader of a git mirror at ``revision`` and its description (with the commit)."""
    commit = _git(["rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=repo).decode().strip()
    files = _git_archive(repo, revision, sorted(manifest.trees))

    def read(entry: ManifestFile) -> bytes:
        if entry.path not in files:
            raise SourcesError(entry.path, f"not in the git mirror {label} at {revision}")
        return files[entry.path]
    return read, f"the {kind} {label} at {revision} ({commit})"


@contextmanager
def _reader(origin: str | None, revision: str, manifest: SourcesManifest
            ) -> Iterator[tuple[Reader, str]]:
    """The file reader for an origin, and a description of it for the provenance files."""
    if origin is None:
        yield _url_reader(UPSTREAM_URL, manifest), "the upstream repositories (pinned commits)"
        return
    parsed = urllib.parse.urlparse(origin)
    is_url = len(parsed.scheme) > 1
    if any(placeholder in origin for placeholder in _PLACEHOLDERS):
        reader = _url_reader(origin, manifest) if is_url else _path_reader(
            lambda entry: Path(_format(origin, entry, manifest, quote=False)))
        yield reader, f"the mirror template {origin}"
        return
    if _is_git_url(origin):
        with tempfile.TemporaryDirectory(prefix="authpairs-git-") as tmp:
            _git(["clone", "--quiet", "--bare", origin, tmp])
            yield _git_origin(Path(tmp), revision, manifest, "git repository", origin)
        return
    local = Path(urllib.request.url2pathname(parsed.path)) if parsed.scheme == "file" \
        else None if is_url else Path(origin)
    if local is not None and local.is_dir() and _is_git_dir(local):
        yield _git_origin(local, revision, manifest, "git mirror", str(local))
        return
    if local is not None and not is_url:
        if not local.is_dir():
            raise SourcesError(local, "the mirror folder does not exist (a mirror is a folder, "
                                      "a git repository, a URL or a URL template)")
        root = local
        yield _path_reader(lambda entry: root / entry.path), f"the mirror folder {root.resolve()}"
        return
    base = origin.rstrip("/")
    yield _url_reader(base + "/{source_path}", manifest), f"the mirror {base}"


def _provenance_text(name: str, tree: TreeInfo, entries: list[ManifestFile], origin: str,
                     when: str, manifest: SourcesManifest) -> str:
    lines = [f"# Provenance: {name} (fetched by authpairs)", "",
             f"- Repository: {tree.url}"]
    if tree.commit:
        lines.append(f"- Commit: `{tree.commit}`")
    lines += [f"- Licence: {tree.licence} (the upstream `LICENSE` is part of this folder)",
              f"- Fetched: {when} from {origin}, by `authpairs data fetch-sources` "
              f"(authpairs {__version__})",
              f"- Checked: all {len(entries)} files against the SHA-256 manifest shipped with "
              f"authpairs (manifest SHA-256 `{manifest.sha256}`)",
              f"- How the set was chosen and assembled: `{DOCS_PAGE}` in the authpairs "
              "repository.", "",
              "| File | Upstream commit | SHA-256 |", "|---|---|---|"]
    lines += [f"| `{e.upstream_path}` | `{e.commit}` | `{e.sha256}` |" for e in entries]
    return "\n".join(lines) + "\n"


def _root_provenance(manifest: SourcesManifest, origin: str, when: str) -> str:
    lines = ["# Provenance: native-policy track sources", "",
             f"Fetched {when} from {origin} by `authpairs data fetch-sources` "
             f"(authpairs {__version__}). Every file was checked against the SHA-256 manifest "
             f"shipped with authpairs (manifest SHA-256 `{manifest.sha256}`); each tree's "
             f"`{PROVENANCE}` lists its files with their upstream commits and hashes. How the "
             f"set was chosen and assembled: `{DOCS_PAGE}` in the authpairs repository.", "",
             "| Folder | Repository | Commit | Licence | Files |", "|---|---|---|---|---|"]
    for name, tree in sorted(manifest.trees.items()):
        count = sum(1 for f in manifest.files if f.tree == name)
        commit = f"`{tree.commit}`" if tree.commit else "one per file (see its PROVENANCE.md)"
        lines.append(f"| `{name}/` | {tree.url} | {commit} | {tree.licence} | {count} |")
    return "\n".join(lines) + "\n"


def fetch_sources(dest: Path | str | None = None, origin: str | None = None, *,
                  revision: str = "HEAD", force: bool = False,
                  manifest: SourcesManifest | None = None) -> FetchResult:
    """Fetch the pinned source trees into ``dest`` (default: :func:`default_fetch_dest`).

    ``origin`` is ``None`` for the upstream repositories, else a mirror (folder, git repository
    or URL; see the module docstring); ``revision`` applies to git mirrors. A ``dest`` that
    already holds exactly the pinned set is left as it is; one that holds anything else is
    refused unless ``force`` (then only the trees and ``PROVENANCE.md`` are replaced). Nothing
    is written into ``dest`` until every file has been read and matches its hash.
    """
    manifest = manifest or load_manifest()
    target = Path(dest) if dest is not None else default_fetch_dest()
    total = sum(f.size for f in manifest.files)
    if target.exists() and not target.is_dir():
        raise SourcesError(target, "exists and is not a folder")
    if target.is_dir() and any(target.iterdir()):
        problems = check_tree(target, manifest)
        if not problems:
            return FetchResult(target, str(target), len(manifest.files), total,
                               already_present=True)
        if not force:
            raise SourcesError(target, f"the folder holds other files than the pinned sources "
                                       f"({problems[0]}; {len(problems)} problem(s)); choose "
                                       "another --dest or pass --force to replace them")
    target.parent.mkdir(parents=True, exist_ok=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    with _reader(origin, revision, manifest) as (read, described), \
            tempfile.TemporaryDirectory(prefix=f".{target.name}.partial-",
                                        dir=target.parent) as tmp:
        staging = Path(tmp)
        # Downloads overlap (one request per file); results come back in manifest order, so
        # the first bad file in that order is the one reported.
        with ThreadPoolExecutor(max_workers=READ_WORKERS) as pool:
            contents = list(pool.map(read, manifest.files))
        for entry, data in zip(manifest.files, contents, strict=True):
            got = sha256_hex(data)
            if got != entry.sha256:
                raise SourcesError(entry.path, f"SHA-256 mismatch: the manifest expects "
                                               f"{entry.sha256}, the file from {described} "
                                               f"has {got}")
            path = staging / entry.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for name, tree in manifest.trees.items():
            entries = [f for f in manifest.files if f.tree == name]
            (staging / name).mkdir(exist_ok=True)
            (staging / name / PROVENANCE).write_text(
                _provenance_text(name, tree, entries, described, when, manifest),
                encoding="utf-8")
        (staging / PROVENANCE).write_text(_root_provenance(manifest, described, when),
                                          encoding="utf-8")
        target.mkdir(parents=True, exist_ok=True)
        for name in manifest.trees:  # only what a fetch writes: its trees and provenance
            shutil.rmtree(target / name, ignore_errors=True)
        (target / PROVENANCE).unlink(missing_ok=True)
        for child in sorted(staging.iterdir()):
            os.replace(child, target / child.name)
    trees = {name: sum(1 for f in manifest.files if f.tree == name) for name in manifest.trees}
    return FetchResult(target, described, len(manifest.files), total, trees=trees)

