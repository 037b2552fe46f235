"""Root never follows a link the formgrader account planted (issue 44, item 2).

The formgrader service runs as the system account ``decodelab-formgrader``, which reads and writes
nbgrader's files of the course. Root's autograde writes into ``autograded/`` and, for a submission
that fails, removes ``autograded/<student>/<assignment>``. Here, on a real course folder with the
real account: the account replaces ``autograded/<student>`` with a link to a root-only folder outside
the course, and root runs ``decodelab classroom autograde --force`` on a submission that fails (its
notebook is not JSON). Root must neither delete nor write anything at the link's end.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from hubkit import open_tmp  # noqa: E402

from decodelab.classroom import exchange  # noqa: E402
from decodelab.classroom.assignments import write_course  # noqa: E402
from decodelab.classroom.cli import autograde_command as autograde_main  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.classroom,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the formgrader account is a real system user")]

A = "exam-02"
ROOT = Path(__file__).resolve().parents[1]


def _as(user: str, *argv: str) -> subprocess.CompletedProcess:
    pw = pwd.getpwnam(user)
    return subprocess.run(list(argv), user=pw.pw_uid, group=pw.pw_gid, extra_groups=[], cwd="/",
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})


@pytest.fixture
def course(monkeypatch):
    from test_classroom_sandbox import sandbox_or_skip

    sandbox_or_skip()
    base = open_tmp("rootfiles")
    course = base / "course"
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    write_course(course)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:  # as `init` does
        fh.write(exchange.course_config_block(100.0))
    r = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", A], cwd=course,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    exchange._formgrader_account(course, exchange.FORMGRADER_USER)  # what the hub does when it starts as root
    return base, course


def test_a_link_from_the_formgrader_account_is_never_followed(course, capsys):
    base, course = course
    victim = base / "root-only"  # outside the course, root's only
    (victim / A).mkdir(parents=True)
    (victim / A / "precious.txt").write_text("root's", encoding="utf-8")
    victim.chmod(0o700)
    sub = course / "submitted" / "mallory" / A
    sub.mkdir(parents=True)
    (sub / f"{A}.ipynb").write_text("{not json", encoding="utf-8")  # her autograde fails
    (sub / "timestamp.txt").write_text("2026-12-01 00:00:00.000000 UTC", encoding="utf-8")
    g = exchange.FORMGRADER_USER
    pw = pwd.getpwnam(g)
    # a course whose hub gave these folders to the account (as decodelab did before): it may write there
    for name in ("autograded", "feedback"):
        os.chown(course / name, pw.pw_uid, pw.pw_gid)
    # the account plants links where root's autograde writes and, on failure, removes
    for name in ("autograded", "feedback"):
        r = _as(g, "ln", "-s", str(victim), str(course / name / "mallory"))
        assert r.returncode == 0, r.stderr
    assert autograde_main([str(course), A, "--student=mallory", "--force"]) != 0  # not JSON: fails
    assert (victim / A / "precious.txt").read_text(encoding="utf-8") == "root's"
    assert sorted(p.name for p in victim.iterdir()) == [A]
    assert sorted(p.name for p in (victim / A).iterdir()) == ["precious.txt"]
    for name in ("autograded", "feedback"):
        st = os.lstat(course / name)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o022, name
        assert not any(p.is_symlink() for p in (course / name).rglob("*")), name
    # formgrader still reads what root graded (through its group), but can no longer write there
    (course / "autograded" / "alice").mkdir(exist_ok=True)
    assert _as(g, "ls", str(course / "autograded")).returncode == 0
    assert _as(g, "touch", str(course / "autograded" / "x")).returncode != 0
    assert _as(g, "ln", "-s", str(victim), str(course / "autograded" / "alice" / A)).returncode != 0


def test_a_link_in_a_submission_never_brings_a_root_only_file_to_the_formgrader_account(course):
    """A link the account puts beside a submitted notebook (``submitted/`` was the account's) was
    copied by root's autograde, with the root-only file at its end, into ``autograded/``, which the
    account reads. Root's nbgrader removes such links first; the folders are root's from then on."""
    import shutil

    base, course = course
    secret = base / "root-only" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("root's secret", encoding="utf-8")
    secret.parent.chmod(0o700)
    g = exchange.FORMGRADER_USER
    pw = pwd.getpwnam(g)
    os.chown(course / "submitted", pw.pw_uid, pw.pw_gid)  # as decodelab's hub left it before
    sub = course / "submitted" / "mallory" / A
    for cmd in (["mkdir", "-p", str(sub)], ["ln", "-s", str(secret), str(sub / "notes.txt")]):
        r = _as(g, *cmd)
        assert r.returncode == 0, r.stderr
    shutil.copyfile(course / "source" / A / f"{A}.ipynb", sub / f"{A}.ipynb")  # what root's collect puts there
    (sub / "timestamp.txt").write_text("2026-12-01 00:00:00.000000 UTC", encoding="utf-8")
    autograde_main([str(course), A, "--student=mallory"])
    leaked = [p for p in (course / "autograded").rglob("*") if p.is_file() and b"root's secret" in p.read_bytes()]
    assert leaked == []
    assert not (sub / "notes.txt").is_symlink()
    st = os.lstat(course / "submitted")
    assert st.st_uid == 0 and not st.st_mode & 0o022
    assert _as(g, "ln", "-s", str(secret), str(sub / "again.txt")).returncode != 0
