"""The whole-sandbox digest: exhaustive, cache-safe for in-place writes, conservative refresh."""

from __future__ import annotations

import os
import time
from pathlib import Path

from authpairs.enforce.sandbox import Sandbox
from authpairs.enforce.verify.channel import ReadChannel
from authpairs.enforce.verify.digest import (
    RACY_MARGIN_NS,
    Digester,
    changed,
    changed_outside,
)


def _channel(sb: Sandbox) -> ReadChannel:
    return ReadChannel(sb.root, sb.db_path, sb.base_url)


def test_snapshot_covers_rows_files_links_and_dirs(tmp_path: Path) -> None:
    with Sandbox(tmp_path) as sb:
        ch = _channel(sb)
        try:
            snap = Digester(ch).snapshot()
            assert ("sql", "accounts", "global", "treasury") in snap
            assert ("file", "files", "outbox", "global", "archive", "manifest.txt") in snap
            assert ("file", "keys", "private") in snap
            assert not any(k[1].startswith("state.sqlite") for k in snap if k[0] == "file")
            (sb.root / "files" / "planted").symlink_to("/etc")
            snap2 = Digester(ch).snapshot()
            assert snap2[("file", "files", "planted")] == ("link", "/etc")
            assert changed(snap, snap2) == [("file", "files", "planted")]
            assert changed_outside(snap, snap2, [("file", "files")]) == []
        finally:
            ch.close()


def test_in_place_same_size_write_is_detected_right_after_hashing(tmp_path: Path) -> None:
    with Sandbox(tmp_path) as sb:
        ch = _channel(sb)
        try:
            dig = Digester(ch)
            target = sb.root / "files" / "outbox" / "global" / "archive" / "manifest.txt"
            first = dig.snapshot()
            with open(target, "r+b") as fh:  # same size, same inode, within the same tick
                fh.write(b"G")
            assert changed(first, dig.snapshot()) == [
                ("file", "files", "outbox", "global", "archive", "manifest.txt")]
        finally:
            ch.close()


def test_cached_digest_is_invalidated_by_any_later_write(tmp_path: Path) -> None:
    with Sandbox(tmp_path) as sb:
        ch = _channel(sb)
        try:
            dig = Digester(ch)
            target = sb.root / "www" / "downloads" / "global" / "public" / "readme.txt"
            time.sleep(RACY_MARGIN_NS / 1e9 * 1.5)
            first = dig.snapshot()
            hashed = dig.hashed
            assert dig.snapshot() == first and dig.hashed == hashed  # served from the cache
            st = target.stat()
            with open(target, "r+b") as fh:
                fh.write(b"P")
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # restore mtime; ctime moves
            assert changed(first, dig.snapshot()) == [
                ("file", "www", "downloads", "global", "public", "readme.txt")]
        finally:
            ch.close()


def test_refresh_rewalks_subtrees_and_never_hides_other_changes(tmp_path: Path) -> None:
    with Sandbox(tmp_path) as sb:
        ch = _channel(sb)
        try:
            dig = Digester(ch)
            previous = dig.snapshot()
            (sb.root / "files" / "outbox" / "c-new").mkdir()
            (sb.root / "files" / "outbox" / "c-new" / "f.txt").write_bytes(b"seeded")
            (sb.root / "files" / "documents" / "global" / "DOC-0001" / "charter.txt"
             ).write_bytes(b"changed outside the refreshed subtree")
            refreshed = dig.refresh(previous, [("files", "outbox", "c-new")])
            assert ("file", "files", "outbox", "c-new", "f.txt") in refreshed
            full = dig.snapshot()
            # the outside change is still visible against the next full snapshot
            assert changed(refreshed, full) == [
                ("file", "files", "documents", "global", "DOC-0001", "charter.txt")]
        finally:
            ch.close()
