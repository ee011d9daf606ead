"""``authpairs data fetch-sources``: pinned source trees from a mirror, every file hash-checked.

The mechanics run on a small synthetic source set with its own manifest (always); the shipped
manifest is checked against the staged sources and fetched end to end from a local git mirror
(made here with ``git init``), a plain folder, a ``file://`` URL and a per-commit URL template,
which is the shape of the default upstream origin (these skip when the staged sources are absent).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.cases.dataset import Dataset
from authpairs.cli import app
from authpairs.main_job import CACHE_ENV
from authpairs.tracks.native.build import label_cedar_tree, split_drafts
from authpairs.tracks.native.cases import cedar_drafts
from authpairs.tracks.native.fetch import (
    PROVENANCE,
    SourcesError,
    SourcesManifest,
    build_manifest,
    check_tree,
    fetch_sources,
    load_manifest,
    parse_manifest,
)
from authpairs.tracks.native.sources import (
    SOURCES_ENV,
    default_fetch_dest,
    default_sources,
    read_provenance,
    resolve_sources,
)

runner = CliRunner()
FGA_COMMIT = "1" * 40
FGA_LICENCE_COMMIT = "2" * 40
CEDAR_COMMIT = "3" * 40


def _tiny_sources(root: Path) -> Path:
    """A two-tree source folder in the staged layout, with PROVENANCE.md files."""
    fga = root / "openfga-sample-stores"
    (fga / "stores" / "lib").mkdir(parents=True)
    (fga / "stores" / "lib" / "store.fga.yaml").write_text("name: lib\n")
    (fga / "LICENSE").write_text("Apache License 2.0\n")
    (fga / PROVENANCE).write_text(
        "# Provenance\n\n- Repository: https://github.com/openfga/sample-stores (Apache License "
        f"2.0)\n- `LICENSE`: unchanged copies from git commit `{FGA_LICENCE_COMMIT}`.\n\n"
        f"| `stores/lib/store.fga.yaml` | `{FGA_COMMIT}` | index | x |\n")
    cedar = root / "cedar-examples"
    (cedar / "cedar-example-use-cases" / "app" / "ALLOW").mkdir(parents=True)
    (cedar / "cedar-example-use-cases" / "app" / "policies.cedar").write_text("permit(p,a,r);")
    (cedar / "cedar-example-use-cases" / "app" / "ALLOW" / "r.json").write_text("{}")
    (cedar / PROVENANCE).write_text(
        "# Provenance\n\n- Repository: https://github.com/cedar-policy/cedar-examples\n"
        f"- Commit: `{CEDAR_COMMIT}` (branch `main`)\n- Licence: Apache License 2.0\n")
    return root


def _git_mirror(src: Path, repo: Path) -> str:
    """A git repository holding a copy of ``src`` in one commit; returns its revision."""
    shutil.copytree(src, repo, ignore=shutil.ignore_patterns(PROVENANCE))
    env = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", *env, "-C", str(repo), "commit", "-q", "-m", "mirror"], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def tiny(tmp_path: Path) -> tuple[Path, SourcesManifest]:
    src = _tiny_sources(tmp_path / "src")
    return src, build_manifest(src)


def test_manifest_of_a_source_folder(tiny: tuple[Path, SourcesManifest]) -> None:
    src, manifest = tiny
    by_path = manifest.by_path()
    assert sorted(by_path) == [
        "cedar-examples/cedar-example-use-cases/app/ALLOW/r.json",
        "cedar-examples/cedar-example-use-cases/app/policies.cedar",
        "openfga-sample-stores/LICENSE", "openfga-sample-stores/stores/lib/store.fga.yaml"]
    assert by_path["openfga-sample-stores/stores/lib/store.fga.yaml"].commit == FGA_COMMIT
    assert by_path["openfga-sample-stores/LICENSE"].commit == FGA_LICENCE_COMMIT
    assert by_path["cedar-examples/cedar-example-use-cases/app/ALLOW/r.json"].commit == \
        CEDAR_COMMIT
    assert manifest.trees["openfga-sample-stores"].repository == "openfga/sample-stores"
    assert parse_manifest(manifest.to_json()) == manifest
    assert check_tree(src, manifest) == []


def test_a_file_without_a_commit_is_refused(tiny: tuple[Path, SourcesManifest]) -> None:
    src, _ = tiny
    (src / "openfga-sample-stores" / "stores" / "lib" / "model.fga").write_text("model\n")
    with pytest.raises(SourcesError, match=r"model\.fga: PROVENANCE.md names no commit"):
        build_manifest(src)


def test_fetch_from_a_git_mirror_and_provenance(tiny: tuple[Path, SourcesManifest],
                                                tmp_path: Path) -> None:
    src, manifest = tiny
    revision = _git_mirror(src, tmp_path / "mirror")
    dest = tmp_path / "dest"
    result = fetch_sources(dest, str(tmp_path / "mirror"), manifest=manifest)
    assert (result.files, result.already_present) == (4, False)
    assert check_tree(dest, manifest) == []
    assert revision in result.origin
    root = (dest / PROVENANCE).read_text()
    assert revision in root and manifest.sha256 in root
    assert "https://github.com/openfga/sample-stores" in root
    for tree in ("openfga-sample-stores", "cedar-examples"):
        fetched, original = read_provenance(dest / tree), read_provenance(src / tree)
        assert (fetched.repository, fetched.licence, fetched.default_commit) == (
            original.repository, original.licence, original.default_commit)
    fga = read_provenance(dest / "openfga-sample-stores")
    assert fga.commit_for("stores/lib/store.fga.yaml") == FGA_COMMIT
    again = fetch_sources(dest, str(tmp_path / "mirror"), manifest=manifest)
    assert again.already_present
    # a git URL is cloned (here a bare copy of the mirror, by file URL)
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "mirror"),
                    str(tmp_path / "bare.git")], check=True)
    cloned = fetch_sources(tmp_path / "cloned", (tmp_path / "bare.git").as_uri(),
                           manifest=manifest)
    assert revision in cloned.origin and check_tree(tmp_path / "cloned", manifest) == []


def test_a_wrong_file_names_the_file_and_both_hashes(tiny: tuple[Path, SourcesManifest],
                                                     tmp_path: Path) -> None:
    src, manifest = tiny
    good = _git_mirror(src, tmp_path / "mirror")
    bad_file = tmp_path / "mirror" / "cedar-examples" / "cedar-example-use-cases" / "app" \
        / "policies.cedar"
    bad_file.write_text("forbid(p,a,r);")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C",
                    str(tmp_path / "mirror"), "commit", "-qam", "tampered"], check=True)
    expected = manifest.by_path()["cedar-examples/cedar-example-use-cases/app/policies.cedar"]
    dest = tmp_path / "dest"
    with pytest.raises(SourcesError) as caught:
        fetch_sources(dest, str(tmp_path / "mirror"), manifest=manifest)
    message = str(caught.value)
    assert message.startswith("cedar-examples/cedar-example-use-cases/app/policies.cedar: ")
    assert expected.sha256 in message
    import hashlib

    assert hashlib.sha256(b"forbid(p,a,r);").hexdigest() in message
    assert not dest.exists()  # nothing written before every file is checked
    assert not list(tmp_path.glob(".dest.partial-*"))
    fetch_sources(dest, str(tmp_path / "mirror"), revision=good, manifest=manifest)
    assert check_tree(dest, manifest) == []


def test_folder_url_and_template_origins(tiny: tuple[Path, SourcesManifest],
                                         tmp_path: Path) -> None:
    src, manifest = tiny
    fetch_sources(tmp_path / "a", str(src), manifest=manifest)
    fetch_sources(tmp_path / "b", src.as_uri(), manifest=manifest)
    upstream = tmp_path / "upstream"
    for entry in manifest.files:
        tree = manifest.trees[entry.tree]
        target = upstream / tree.repository / entry.commit / entry.upstream_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / entry.path, target)
    template = upstream.as_uri() + "/{repository}/{commit}/{path}"
    fetch_sources(tmp_path / "c", template, manifest=manifest)
    for name in "abc":
        assert check_tree(tmp_path / name, manifest) == []
    with pytest.raises(SourcesError, match=r"app/ALLOW/r\.json: cannot download file://.*/main/"):
        fetch_sources(tmp_path / "d", upstream.as_uri() + "/{repository}/main/{path}",
                      manifest=manifest)
    with pytest.raises(SourcesError, match="mirror folder does not exist"):
        fetch_sources(tmp_path / "e", str(tmp_path / "nowhere"), manifest=manifest)


def test_an_occupied_destination_needs_force(tiny: tuple[Path, SourcesManifest],
                                             tmp_path: Path) -> None:
    src, manifest = tiny
    dest = tmp_path / "dest"
    fetch_sources(dest, str(src), manifest=manifest)
    extra = dest / "cedar-examples" / "cedar-example-use-cases" / "app" / "ALLOW" / "x.json"
    extra.write_text("{}")
    (dest / "notes.txt").write_text("mine")
    assert check_tree(dest, manifest) == [
        "cedar-examples/cedar-example-use-cases/app/ALLOW/x.json: not in the manifest"]
    with pytest.raises(SourcesError, match="--force"):
        fetch_sources(dest, str(src), manifest=manifest)
    fetch_sources(dest, str(src), force=True, manifest=manifest)
    assert check_tree(dest, manifest) == [] and (dest / "notes.txt").read_text() == "mine"
    with pytest.raises(SourcesError, match="not a folder"):
        fetch_sources(dest / "notes.txt", str(src), manifest=manifest)


def test_resolution_falls_back_to_the_fetch_destination(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    assert default_fetch_dest() == tmp_path / "cache" / "sources"
    monkeypatch.setattr("authpairs.tracks.native.sources.repo_root", lambda: tmp_path / "repo")
    monkeypatch.delenv(SOURCES_ENV, raising=False)
    assert default_sources() == tmp_path / "cache" / "sources"
    with pytest.raises(ValueError, match="authpairs data fetch-sources"):
        resolve_sources()
    (tmp_path / "shared" / "sources").mkdir(parents=True)
    assert default_sources() == tmp_path / "shared" / "sources"
    monkeypatch.setenv(SOURCES_ENV, str(tmp_path / "env"))
    assert default_sources() == tmp_path / "env"


def test_shipped_manifest_matches_the_staged_sources(staged_sources: Path) -> None:
    shipped = load_manifest()
    assert build_manifest(staged_sources) == shipped
    assert check_tree(staged_sources) == []
    assert len(shipped.files) == 186
    assert shipped.trees["cedar-examples"].commit.startswith("ea76414411d9")
    commits = {f.commit for f in shipped.files if f.tree == "openfga-sample-stores"}
    assert len(commits) > 5  # the OpenFGA set is assembled from several commits
    package_data = json.loads(shipped.to_json())
    assert package_data["format"] == 1


def test_cli_fetches_the_staged_set_from_a_git_mirror(staged_sources: Path,
                                                      tmp_path: Path) -> None:
    revision = _git_mirror(staged_sources, tmp_path / "mirror")
    dest = tmp_path / "sources"
    result = runner.invoke(app, ["data", "fetch-sources", "--dest", str(dest), "--from",
                                 str(tmp_path / "mirror")])
    assert result.exit_code == 0, result.output
    assert "fetched 186 files" in result.output and revision in result.output
    checked = runner.invoke(app, ["data", "fetch-sources", "--check", "--dest", str(dest)])
    assert checked.exit_code == 0, checked.output
    for tree in ("openfga-sample-stores", "cedar-examples"):
        fetched, staged = read_provenance(dest / tree), read_provenance(staged_sources / tree)
        for entry in (f for f in load_manifest().files if f.tree == tree):
            assert fetched.commit_for(entry.upstream_path) == entry.commit, entry.path
            # the staged provenance names the licence files' commit only in prose
            assert staged.commit_for(entry.upstream_path) in ("", entry.commit), entry.path
    # Cases built from the fetched trees equal those from the staged ones (revisions included).
    built = [Dataset("native", split_drafts(cedar_drafts(label_cedar_tree(
        root / "cedar-examples")))).manifest().full_sha256 for root in (dest, staged_sources)]
    assert built[0] == built[1]
    (dest / "cedar-examples" / "NOTICE").write_text("changed\n")
    checked = runner.invoke(app, ["data", "fetch-sources", "--check", "--dest", str(dest)])
    assert checked.exit_code == 1 and "cedar-examples/NOTICE: SHA-256" in checked.output
    refused = runner.invoke(app, ["data", "fetch-sources", "--dest", str(dest), "--from",
                                  str(staged_sources)])
    assert refused.exit_code == 2 and "--force" in refused.output
