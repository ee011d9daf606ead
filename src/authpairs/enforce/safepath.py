"""File access confined beneath the sandbox root (used by executors, seeding and the HTTP server).

Paths are walked one component at a time from a directory descriptor with ``O_NOFOLLOW``, so a
symbolic link planted anywhere inside the sandbox is refused instead of followed, and a component
can never be ``..``, absolute or contain a separator. Writes go to a fresh temporary file that is
renamed into place, so a planted hard link or symbolic link at the destination is never written
through and a reader never sees a partial file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Sequence
from pathlib import Path

from authpairs.errors import EnforcementError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ContainmentError(EnforcementError, ValueError):
    """An operation would leave the sandbox, follow a link, or overwrite a non-file."""


def check_component(part: str) -> str:
    """Reject a path component that is empty, '.', '..', hidden or contains a separator/NUL."""
    if (not part or part in (".", "..") or part.startswith(".") or "/" in part
            or "\\" in part or "\x00" in part):
        raise ContainmentError(f"unsafe path component {part!r}")
    return part


def open_dir(root: Path, parts: Sequence[str], create: bool = False) -> int:
    """Open the directory ``root/parts...`` without following links; the caller closes the fd."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise ContainmentError(f"sandbox root {root} is not a plain directory: {exc}") from None
    walked = ""
    try:
        for part in parts:
            check_component(part)
            walked = f"{walked}/{part}"
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ContainmentError(
                        f"'{walked.lstrip('/')}' is a symbolic link or not a directory; refusing"
                        " to follow it") from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file(root: Path, parts: Sequence[str], data: bytes, mode: int = 0o644) -> None:
    """Atomically create or replace the regular file ``root/parts...`` with ``data``."""
    *dirs, name = parts
    check_component(name)
    dfd = open_dir(root, dirs, create=True)
    tmp = f".tmp-{uuid.uuid4().hex}"
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ContainmentError(
                f"'{'/'.join(parts)}' exists and is not a regular file (link or directory);"
                " refusing to replace it")
        ffd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      mode, dir_fd=dfd)
        with os.fdopen(ffd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    finally:
        os.close(dfd)


def read_file(root: Path, parts: Sequence[str], max_bytes: int) -> bytes:
    """Read the regular file ``root/parts...`` (no links followed); at most ``max_bytes``."""
    *dirs, name = parts
    check_component(name)
    dfd = open_dir(root, dirs)
    try:
        try:
            ffd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ContainmentError(f"'{'/'.join(parts)}' is a symbolic link") from None
            raise
    finally:
        os.close(dfd)
    with os.fdopen(ffd, "rb") as fh:
        st = os.fstat(ffd)
        if not stat.S_ISREG(st.st_mode):
            raise ContainmentError(f"'{'/'.join(parts)}' is not a regular file")
        if st.st_size > max_bytes:
            raise ContainmentError(f"'{'/'.join(parts)}' exceeds {max_bytes} bytes")
        return fh.read()


def exists(root: Path, parts: Sequence[str]) -> bool:
    """True when ``root/parts...`` exists (as anything, links not followed)."""
    *dirs, name = parts
    check_component(name)
    try:
        dfd = open_dir(root, dirs)
    except FileNotFoundError:
        return False
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(dfd)
