"""The unrelated-resource check: a digest of every row and every file in the sandbox.

:func:`snapshot` keys every SQLite row by table and primary key and every file or directory by its
path (regular files by SHA-256, links by their target). :func:`changed_outside` compares two
snapshots and lists the resources that changed, appeared or disappeared outside the targets.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable

from authpairs.enforce.verify.base import ResourceKey
from authpairs.enforce.verify.channel import ReadChannel

Snapshot = dict[ResourceKey, str]
_DB_FILES = ("state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "state.sqlite-journal")


def _sql(ch: ReadChannel, out: Snapshot) -> None:
    tables = [r[0] for r in ch.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name")]
    for table in tables:
        quoted = '"' + table.replace('"', '""') + '"'
        info = ch.query(f"PRAGMA table_info({quoted})")
        pk = [i for _, i in sorted((r[5], n) for n, r in enumerate(info) if r[5] > 0)]
        for row in ch.query(f"SELECT * FROM {quoted}"):
            key = ("sql", table, *(str(row[i]) for i in pk)) if pk else ("sql", table, repr(row))
            out[key] = repr(row)


def _files(path: str, rel: tuple[str, ...], out: Snapshot) -> None:
    with os.scandir(path) as entries:
        for entry in entries:
            if not rel and entry.name in _DB_FILES:
                continue
            key = ("file", *rel, entry.name)
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                out[key] = "link:" + os.readlink(entry.path)
            elif stat.S_ISDIR(st.st_mode):
                out[key] = f"dir:{st.st_mode:o}"
                _files(entry.path, (*rel, entry.name), out)
            elif stat.S_ISREG(st.st_mode):
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                with os.fdopen(fd, "rb") as fh:
                    out[key] = f"file:{st.st_mode:o}:" + hashlib.sha256(fh.read()).hexdigest()
            else:
                out[key] = f"special:{st.st_mode:o}"


def snapshot(ch: ReadChannel) -> Snapshot:
    """Digest every row of every table and every file under the sandbox root."""
    out: Snapshot = {}
    _sql(ch, out)
    _files(str(ch.root), (), out)
    return out


def _covered(key: ResourceKey, targets: Iterable[ResourceKey]) -> bool:
    return any(key[:len(t)] == t for t in targets)


def changed(before: Snapshot, after: Snapshot) -> list[ResourceKey]:
    """Every resource that changed, appeared or disappeared."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def changed_outside(before: Snapshot, after: Snapshot,
                    targets: Iterable[ResourceKey]) -> list[ResourceKey]:
    """Changed resources not covered by any target prefix."""
    targets = list(targets)
    return [k for k in changed(before, after) if not _covered(k, targets)]
