"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace``.

A reader (or a crash, or a kernel restart in the middle of a write) sees either the old file or the
new one, never half of one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text"]


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
