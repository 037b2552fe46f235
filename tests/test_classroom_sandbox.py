"""The autograde sandbox on its own: who runs students' code, what it can reach, what is refused.

Real bubblewrap and (as root) the real grader account; where bubblewrap cannot start outside CI the
sandboxed tests skip and say why (scripts/install_sandbox.sh installs it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from decodelab.classroom import sandbox  # noqa: E402
from decodelab.classroom.cli import autograde_command as autograde_main  # noqa: E402
from decodelab.classroom.sandbox import SandboxError, mode, probe, run_function  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def sandbox_or_skip() -> dict:
    """What :func:`probe` saw; skips (outside CI) when the sandbox cannot start here."""
    try:
        return probe()
    except SandboxError as e:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            raise
        pytest.skip(f"bubblewrap 격리 환경을 쓸 수 없습니다 (scripts/install_sandbox.sh): {e}")


def test_root_without_bubblewrap_is_refused_in_korean(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.setenv("DECODELAB_AUTOGRADE_SANDBOX", "off")  # no opt-out for root
    with pytest.raises(SandboxError, match="root 권한으로 실행하지 않습니다.*apt-get install -y bubblewrap"):
        mode()
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    assert autograde_main([str(tmp_path), "exam-02"]) == 2
    assert "root 권한으로 실행하지 않습니다" in capsys.readouterr().err


def test_ordinary_user_without_bubblewrap_must_opt_out(monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv("DECODELAB_AUTOGRADE_SANDBOX", raising=False)
    with pytest.raises(SandboxError, match="DECODELAB_AUTOGRADE_SANDBOX=off"):
        mode()
    monkeypatch.setenv("DECODELAB_AUTOGRADE_SANDBOX", "off")
    with pytest.warns(UserWarning, match="격리 없이"):
        assert mode() == "off"


def test_autograde_needs_a_course_folder(tmp_path, capsys):
    assert autograde_main([str(tmp_path), "exam-02"]) == 2
    assert "nbgrader_config.py가 없습니다" in capsys.readouterr().err


def test_probe_runs_unprivileged():
    seen = sandbox_or_skip()
    assert seen["uid"] != 0 and seen["gid"] != 0
    if os.geteuid() == 0:
        import pwd

        assert seen["mode"] == "account" and seen["uid"] == pwd.getpwnam(sandbox.SANDBOX_USER).pw_uid


def test_code_under_test_gets_inputs_only_and_cannot_tamper(tmp_path):
    """A task's function runs alone: it sees no decodelab, no bank, no file of the host's course,
    no network; ending the process or running forever gives errors, never values."""
    sandbox_or_skip()
    secret = tmp_path / "gradebook.db"
    secret.write_text("key", encoding="utf-8")
    src = f"""
import os, socket
def f(x):
    if x == 0:
        return os.getuid()
    if x == 1:
        import decodelab
    if x == 2:
        return len(open({str(secret)!r}).read())
    if x == 3:
        return len(open({str(ROOT / 'classroom' / 'exam' / 'items.yaml')!r}).read())
    if x == 4:
        socket.create_connection(("127.0.0.1", 22), timeout=2)
    return x * 2.5
"""
    res = run_function(src, "f", [(0,), (1,), (2,), (3,), (4,), (5,)])
    assert res[0]["value"] != 0
    assert "ModuleNotFoundError" in res[1]["error"]
    assert "FileNotFoundError" in res[2]["error"] and "FileNotFoundError" in res[3]["error"]
    assert "error" in res[4]
    assert res[5] == {"value": 12.5}
    died = run_function("import os\ndef f(x):\n    os._exit(0)\n", "f", [(1,), (2,)])
    assert all("error" in r for r in died)
    forever = run_function("def f(x):\n    while True:\n        pass\n", "f", [(1,)], timeout_s=3)
    assert "시간 초과" in forever[0]["error"]
    none = run_function("def f(x):\n    return None\n", "f", [(1,)])
    assert "TypeError" in none[0]["error"]


def test_a_python_below_tmp_is_bound_over_the_empty_tmp(tmp_path):
    """A checkout or virtualenv made under /tmp (a clone in /tmp, as CI or a new user may make)
    is bound read-only over the sandbox's empty /tmp, so the students' Python starts; /tmp itself,
    a folder above it and the course folder never are."""
    venv = tmp_path / "clone" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("", encoding="utf-8")
    binds = sandbox.python_binds(str(venv / "bin" / "python"), packages=False)
    assert os.path.realpath(venv) in binds
    assert not any(b == "/tmp" or "/tmp".startswith(b.rstrip("/") + "/") for b in binds)
    course = tmp_path / "clone"
    assert os.path.realpath(venv) not in sandbox.python_binds(str(venv / "bin" / "python"), packages=False,
                                                              exclude=[str(course)])
