"""Confined file access: no link is followed, no component escapes, writes are atomic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from authpairs.enforce.safepath import ContainmentError, exists, read_file, write_file


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.mark.parametrize("part", ["", ".", "..", ".hidden", "a/b", "a\\b", "nul\x00"])
def test_unsafe_components(root: Path, part: str) -> None:
    with pytest.raises(ContainmentError, match="unsafe path component"):
        write_file(root, ("d", part), b"x")


def test_write_read_roundtrip_and_replace(root: Path) -> None:
    write_file(root, ("a", "b", "f.txt"), b"one")
    write_file(root, ("a", "b", "f.txt"), b"two")
    assert read_file(root, ("a", "b", "f.txt"), 10) == b"two"
    assert exists(root, ("a", "b", "f.txt")) and not exists(root, ("a", "zz", "f.txt"))
    assert [p.name for p in (root / "a" / "b").iterdir()] == ["f.txt"]  # no temp file left
    with pytest.raises(ContainmentError, match="exceeds 2 bytes"):
        read_file(root, ("a", "b", "f.txt"), 2)


def test_symlinked_directory_and_file_are_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"keep")
    (root / "d").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ContainmentError, match="symbolic link"):
        write_file(root, ("d", "f.txt"), b"evil")
    with pytest.raises(ContainmentError, match="symbolic link"):
        read_file(root, ("d", "f.txt"), 100)
    (root / "e").mkdir()
    (root / "e" / "f.txt").symlink_to(outside / "f.txt")
    with pytest.raises(ContainmentError, match="not a regular file"):
        write_file(root, ("e", "f.txt"), b"evil")
    with pytest.raises(ContainmentError, match="symbolic link"):
        read_file(root, ("e", "f.txt"), 100)
    assert (outside / "f.txt").read_bytes() == b"keep"
    assert os.listdir(outside) == ["f.txt"]


def test_directory_at_destination_is_refused(root: Path) -> None:
    (root / "d" / "f").mkdir(parents=True)
    with pytest.raises(ContainmentError, match="not a regular file"):
        write_file(root, ("d", "f"), b"x")


def test_symlinked_root_is_refused(tmp_path: Path, root: Path) -> None:
    link = tmp_path / "link-root"
    link.symlink_to(root, target_is_directory=True)
    with pytest.raises(ContainmentError, match="not a plain directory"):
        write_file(link, ("f",), b"x")
