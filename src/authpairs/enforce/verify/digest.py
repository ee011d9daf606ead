"""The unrelated-resource check: a digest of every row and every file in the sandbox.

:class:`Digester` keys every SQLite row by table and primary key and every file, directory or
link by its path (regular files by mode and SHA-256 of their bytes, links by their target).
:func:`changed_outside` compares two snapshots and lists the resources that changed, appeared or
disappeared outside the targets.

Re-hashing every file twice per case is the dominant cost, so file digests are cached the way
git's index avoids "racy" entries: a cached digest is reused only when the file's full ``lstat``
signature (device, inode, mode, size, mtime, ctime) is unchanged **and** its ctime lies more than
:data:`RACY_MARGIN_NS` before the moment the digest was taken. User space cannot set ctime (any
write, rename, chmod or ``utime`` moves it to the current kernel time), so a file modified after
it was hashed necessarily shows a different signature; a file modified too close to the hashing
moment (within the timestamp granularity) is simply hashed again.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Hashable, Iterable

from authpairs.enforce.verify.base import ResourceKey
from authpairs.enforce.verify.channel import ReadChannel

Snapshot = dict[ResourceKey, Hashable]
RACY_MARGIN_NS = 100_000_000
"""A file whose ctime is within 100 ms of its hashing is never served from the cache."""
_DB_FILES = ("state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "state.sqlite-journal")

_Sig = tuple[int, int, int, int, int, int]


class Digester:
    """Takes snapshots of one sandbox through a verifier :class:`ReadChannel`."""

    def __init__(self, ch: ReadChannel) -> None:
        self._ch = ch
        self._files: dict[str, tuple[_Sig, str, int]] = {}
        self._pks: dict[tuple[str, str], list[int]] = {}
        self.hashed = 0
        """Number of file digests computed (not served from the cache)."""

    def snapshot(self) -> Snapshot:
        """Digest every row of every table and every file under the sandbox root."""
        out: Snapshot = {}
        self._sql(out)
        self._walk(str(self._ch.root), (), time.time_ns(), out)
        return out

    def refresh(self, previous: Snapshot, subtrees: Iterable[tuple[str, ...]]) -> Snapshot:
        """A full snapshot built from ``previous`` with only ``subtrees`` re-walked.

        All rows are re-read; every file key outside ``subtrees`` keeps its value from
        ``previous``. This is *conservative*: should anything outside the subtrees have changed
        since ``previous`` was taken, the change is not hidden -- it shows up in the next
        comparison against a full snapshot and is attributed to that comparison.
        """
        prefixes = [("file", *t) for t in subtrees]
        out: Snapshot = {k: v for k, v in previous.items()
                         if k[0] == "file" and not any(k[:len(p)] == p for p in prefixes)}
        self._sql(out)
        started = time.time_ns()
        root = self._ch.root
        for sub in subtrees:
            path = root.joinpath(*sub)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            self._record(str(path), sub, st, started, out)
        return out

    def _sql(self, out: Snapshot) -> None:
        ch = self._ch
        for table, sql in ch.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                   "AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            quoted = '"' + table.replace('"', '""') + '"'
            pk = self._pks.get((table, sql))
            if pk is None:
                info = ch.query(f"PRAGMA table_info({quoted})")
                pk = [i for _, i in sorted((r[5], n) for n, r in enumerate(info) if r[5] > 0)]
                self._pks[(table, sql)] = pk
            for row in ch.query(f"SELECT * FROM {quoted}"):
                if pk:
                    out[("sql", table, *(str(row[i]) for i in pk))] = row
                else:
                    out[("sql", table, repr(row))] = row

    def _file_digest(self, path: str, st: os.stat_result, started_ns: int) -> str:
        sig: _Sig = (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns,
                     st.st_ctime_ns)
        cached = self._files.get(path)
        if cached is not None and cached[0] == sig and sig[5] < cached[2] - RACY_MARGIN_NS:
            return cached[1]
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        self._files[path] = (sig, digest, started_ns)
        self.hashed += 1
        return digest

    def _record(self, path: str, rel: tuple[str, ...], st: os.stat_result, started_ns: int,
                out: Snapshot) -> None:
        """Record one entry by its ``lstat``: a link by its target (never followed), a directory
        and everything under it, a regular file by mode and digest."""
        key = ("file", *rel)
        if stat.S_ISLNK(st.st_mode):
            out[key] = ("link", os.readlink(path))
        elif stat.S_ISDIR(st.st_mode):
            out[key] = ("dir",)
            self._walk(path, rel, started_ns, out)
        elif stat.S_ISREG(st.st_mode):
            out[key] = ("file", st.st_mode, self._file_digest(path, st, started_ns))
        else:
            out[key] = ("special", st.st_mode)

    def _walk(self, path: str, rel: tuple[str, ...], started_ns: int, out: Snapshot) -> None:
        with os.scandir(path) as entries:
            for entry in entries:
                if rel or entry.name not in _DB_FILES:
                    self._record(entry.path, (*rel, entry.name),
                                 entry.stat(follow_symlinks=False), started_ns, out)

def changed(before: Snapshot, after: Snapshot) -> list[ResourceKey]:
    """Every resource that changed, appeared or disappeared."""
    return sorted({k for k, _ in before.items() ^ after.items()})


def changed_outside(before: Snapshot, after: Snapshot,
                    targets: Iterable[ResourceKey]) -> list[ResourceKey]:
    """Changed resources not covered by any target prefix."""
    targets = list(targets)
    return [k for k in changed(before, after) if not any(k[:len(t)] == t for t in targets)]
