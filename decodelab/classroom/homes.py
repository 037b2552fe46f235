"""Writing into a student's home as that student, never as root.

The hub runs as root and prepares each student's home before every spawn: the course notebooks
the home lacks and ``~/.jupyter/nbgrader_config.py``. The home is the student's: between two spawns
they may replace any of those names by a symbolic link (``~/.jupyter`` -> the course folder,
``~/.jupyter/nbgrader_config.py`` -> ``/etc/shadow``, a dangling ``~/01_decode_phase.ipynb`` ->
``/etc/cron.hourly/x``) or a hard link. Root following such a link would write and ``chown`` to
the student a file or folder anywhere (the course folder with its ``nbgrader_config.py``, which
root's ``nbgrader`` runs, the gradebook and the exam bank; a system file). So every write into a
home is done by a child process that reads the course files as root and then becomes the home's
owner (``setgroups([])``, ``setgid``, ``setuid``) before it touches the home: whatever links the
student planted, the kernel gives the child only the student's own rights. The child gets no
environment of the hub's (the demo's passwords live there) and has a time limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["write_home"]

#: seconds a home's preparation may take (the hub waits for it)
TIMEOUT_S = 60


def _files_in_home(home: Path, files: dict[str, str]) -> None:
    """Write each ``files`` entry (path relative to ``home`` -> text), replacing the entry itself
    (:func:`decodelab._atomic.atomic_write_text`: a new file renamed over it, never written through
    a link that was there)."""
    from .._atomic import atomic_write_text

    for rel, text in files.items():
        path = home / rel
        if path.parent != home and path.parent.is_symlink():  # the student's own link: a folder again
            path.parent.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)


def _stage(src: Path, owner: tuple[int, int]) -> Path:
    """A private copy (a fresh 0700 temporary folder, given to ``owner``) of what
    :func:`decodelab.tools.lab.copy_course` reads from ``src`` (:func:`~decodelab.tools.lab.course_files`):
    the child reads the course's notebooks as root, then copies them into the home as the student
    from this copy."""
    import shutil
    import tempfile

    from ..tools.lab import course_files

    staging = Path(tempfile.mkdtemp(prefix="decodelab-home-"))
    notebooks, extras = course_files(src)
    for item in [*notebooks, *extras]:
        dest = staging / item.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item, dest)
    for p in [staging, *staging.rglob("*")]:
        os.lchown(p, *owner)
    return staging


def _child() -> None:
    """The child process (``python -c``): its job as JSON on stdin; prints the notebooks copied."""
    import shutil

    # everything it runs is imported as root: the hub's Python may sit where the student cannot read
    from ..tools.lab import copy_course

    job = json.loads(sys.stdin.read())
    owner = (int(job["uid"]), int(job["gid"]))
    staging = _stage(Path(job["notebooks"]), owner) if job.get("notebooks") else None
    os.setgroups([])
    os.setgid(owner[1])
    os.setuid(owner[0])
    if os.getuid() != owner[0] or os.geteuid() != owner[0]:
        raise SystemExit("decodelab: could not become the home's owner")
    os.umask(0o022)
    home = Path(job["home"])
    os.chdir(home)
    copied: list[str] = []
    problems: list[str] = []
    try:
        if staging is not None:
            try:  # a link the student planted that leads where they may not write: their server still starts
                copied = copy_course(staging, home)
            except OSError as e:
                problems.append(f"course notebooks not (all) copied: {e}")
        _files_in_home(home, job.get("files") or {})
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    print(json.dumps({"copied": copied, "problems": problems}))


def write_home(home: str | os.PathLike, owner: tuple[int, int] | None, *, notebooks: str | os.PathLike | None = None,
               files: dict[str, str] | None = None, log=None) -> list[str]:
    """Give ``home`` the course notebooks of ``notebooks`` it lacks (:func:`decodelab.tools.lab.copy_course`)
    and write ``files`` (relative path -> text) into it, as the user ``owner`` ``(uid, gid)``.

    ``owner`` None (a hub that is not root, or a spawner without a system user): written by this
    process, as the files are its user's anyway. A ``files`` folder that is a link (the student's)
    becomes a folder again; a notebook that cannot be copied as the student (a link they planted to
    a place they may not write) is reported to ``log`` and the rest goes on, so their server starts.

    Returns:
        The names of the notebooks copied now.

    Raises:
        RuntimeError: the child failed or took longer than :data:`TIMEOUT_S` (its error in the message).
    """
    home, files = Path(home), dict(files or {})
    if owner is None:
        from ..tools.lab import copy_course

        copied = copy_course(Path(notebooks), home) if notebooks is not None else []
        _files_in_home(home, files)
        return copied
    job = {"home": str(home), "uid": owner[0], "gid": owner[1], "files": files,
           "notebooks": str(notebooks) if notebooks is not None else None}
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if os.environ.get("PYTHONPATH"):  # where this decodelab comes from (a checkout), nothing else of the hub's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    try:
        r = subprocess.run([sys.executable, "-c", "from decodelab.classroom.homes import _child; _child()"],
                           input=json.dumps(job), capture_output=True, text=True, env=env, cwd="/",
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"preparing {home} took longer than {TIMEOUT_S} s") from None
    if r.returncode != 0:
        raise RuntimeError(f"preparing {home} as uid {owner[0]} failed: {r.stderr.strip()[-1500:]}")
    done = json.loads(r.stdout.strip().splitlines()[-1])
    for problem in done["problems"]:
        if log is not None:
            log.warning("decodelab: %s: %s", home, problem)
    return done["copied"]
