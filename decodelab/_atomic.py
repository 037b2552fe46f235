"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace``.

A reader (or a crash, or a kernel restart in the middle of a write) sees either the old file or the
new one, never half of one.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "os_reason"]

_REASONS = {
    errno.ENOENT: "없는 경로입니다",
    errno.ENOTDIR: "경로 중간에 폴더가 아닌 파일이 있습니다",
    errno.EACCES: "권한이 없습니다",
    errno.EPERM: "허용되지 않은 작업입니다 (권한 없음)",
    errno.EROFS: "읽기 전용 파일 시스템입니다",
    errno.ENOSPC: "디스크 공간이 부족합니다",
    errno.EEXIST: "같은 이름의 파일이 이미 있습니다",
    errno.EISDIR: "파일이 아니라 폴더입니다",
    errno.ENAMETOOLONG: "경로나 이름이 너무 깁니다",
}


def os_reason(e: OSError, *, path: bool = False) -> str:
    """A short Korean reason for an ``OSError`` (by errno), without Python's ``[Errno N]`` prefix;
    falls back to the system's own text (``strerror``) for an errno not listed. ``path=True`` adds
    the path the error names (``e.filename``), for a message that does not say it already."""
    why = _REASONS.get(e.errno) or e.strerror or type(e).__name__
    return f"{why}: {e.filename}" if path and e.filename else why


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically.

    A new file gets mode 0600 (answers and grades are private); replacing an existing file keeps
    that file's permission bits (a gradebook the lecturer made group-readable stays so).

    Raises:
        FileNotFoundError: the parent folder does not exist.
        OSError: the write failed (disk full, no permission); the old file is left untouched and the
            temporary file is removed.
    """
    path = Path(path)
    parent = path.parent
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode) & 0o777  # permission bits only, never setuid
    except OSError:  # no file yet (or unreadable): keep mkstemp's 0600
        old_mode = None
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if old_mode is not None:
                if hasattr(os, "fchmod"):
                    os.fchmod(f.fileno(), old_mode)
                else:  # pragma: no cover - Windows before Python 3.13
                    os.chmod(tmp, old_mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable (best effort, POSIX only)
        dfd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    return path


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """:func:`atomic_write_bytes` for text."""
    return atomic_write_bytes(path, text.encode(encoding))
