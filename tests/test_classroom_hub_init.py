"""``decodelab classroom init`` / ``hub`` without a running hub, the spawn hook, and the identity
the quiz and exercise widgets take from ``$JUPYTERHUB_USER``."""

from __future__ import annotations

import json
import logging
import os
import sys
import types
from pathlib import Path

import pytest

import hubkit
from decodelab.classroom import hub
from decodelab.classroom.cli import main as classroom
from decodelab.assess.quiz import quiz_widget
from decodelab.assess.quiz.shuffle import choice_order
from decodelab.assess.quiz.store import AnswerStore

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


_ALEMBIC_HEAD: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _alembic_head_asked_once(monkeypatch):
    """nbgrader runs ``alembic heads`` (a Python subprocess, about a CPU-second) for every new
    gradebook.db that ``init`` creates; the answer is one per installed nbgrader, so this module's
    twenty ``init`` runs ask it once (the real command, its real answer)."""
    import nbgrader.api

    real = nbgrader.api.get_alembic_version

    def heads() -> str:
        if "head" not in _ALEMBIC_HEAD:
            _ALEMBIC_HEAD["head"] = real()
        return _ALEMBIC_HEAD["head"]

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", heads)


def _load(config: Path):
    from jupyterhub.app import JupyterHub

    app = JupyterHub()
    app.load_config_file(str(config))
    return app.config


def _init(argv: list[str]) -> int:
    """``decodelab classroom init *argv`` with a students' Python an unprivileged user can run
    (``init`` refuses one it cannot: this machine's own Python may sit in root's home)."""
    return classroom(["init", *argv, "--python", hubkit.student_python()])


def test_init_demo_writes_a_config_jupyterhub_loads(tmp_path, monkeypatch, capsys):
    course = tmp_path / "course"
    assert _init([str(course), "--demo-users", "alice,bob,carol"]) == 0
    out = capsys.readouterr().out
    assert "데모 모드입니다" in out and "실제 수업에 쓰지 마세요" in out
    assert sorted(p.name for p in (course / "notebooks").glob("*.ipynb")) == NOTEBOOKS
    assert {"01_decode_phase.ipynb", "02_prefill_vs_decode.ipynb", "03_agent_loops.ipynb", "04_speculative_decoding.ipynb",
            "05_chips.ipynb", "06_review.ipynb", "07_real_server.ipynb"} <= set(NOTEBOOKS)
    assert not (course / "homes").exists()  # the demo homes are outside the course folder...
    assert course.stat().st_mode & 0o007 == 0  # ...which no student's server can look into
    monkeypatch.setenv(hub.PASSWORD_ENV, "class-pw-1234")
    monkeypatch.setenv(hub.ADMIN_PASSWORD_ENV, "L" * 40)
    monkeypatch.setattr(hub.os, "geteuid", lambda: 0)  # a demo hub starts as root only
    cfg = _load(course / "jupyterhub_config.py")
    assert cfg.JupyterHub.authenticator_class == "shared-password"
    assert cfg.SharedPasswordAuthenticator.user_password == "class-pw-1234"
    assert cfg.SharedPasswordAuthenticator.admin_password == "L" * 40
    assert cfg.Authenticator.allowed_users == {"alice", "bob", "carol"}
    assert cfg.Authenticator.admin_users == {"lecturer"}
    # every demo server as the unprivileged decodelab-demo, never root nor the hub's user
    assert cfg.JupyterHub.spawner_class == "decodelab.classroom.spawner.DemoSpawner"
    homes = hub.demo_homes(course)
    assert homes.parent == Path("/home/decodelab-demo") and homes.name.startswith("course-")
    assert cfg.DemoSpawner.home_dir_template == str(homes / "{username}")
    # no --allow-root; kernels on Unix sockets in the home, never TCP ports another student could listen to
    assert cfg.Spawner.args == ["--KernelManager.transport=ipc"]
    assert cfg.Spawner.disable_user_config is True  # never the student's ~/.jupyter (tests/test_classroom_attacks.py)
    from decodelab.classroom.spawner import DEMO_USER, DemoSpawner

    assert DEMO_USER == hub.DEMO_USER and DemoSpawner.system_user.default_value == "decodelab-demo"
    assert cfg.JupyterHub.ip == "127.0.0.1"
    assert cfg.Spawner.default_url == "/lab/tree/01_decode_phase.ipynb"
    assert cfg.JupyterHub.services[0]["command"][1:3] == ["-m", "jupyterhub_idle_culler"]
    assert "class-pw-1234" not in (course / "jupyterhub_config.py").read_text()


def test_demo_hub_refuses_to_start_unless_root_so_students_never_run_as_the_hub(tmp_path, monkeypatch):
    """A demo hub of a plain user would run the students' code as itself (its environment with the
    passwords, its database and cookie secret readable): it refuses, in Korean, saying to use sudo."""
    course = tmp_path / "course"
    assert _init([str(course), "--demo-users", "alice"]) == 0
    monkeypatch.setenv(hub.PASSWORD_ENV, "class-pw-1234")
    monkeypatch.setattr(hub.os, "geteuid", lambda: 1000)
    with pytest.raises(SystemExit, match="데모 모드 허브는 root로 시작해야 합니다") as e:
        _load(course / "jupyterhub_config.py")
    assert "decodelab-demo" in str(e.value) and "sudo" in str(e.value)


def test_demo_hub_refuses_to_start_without_a_good_password(tmp_path, monkeypatch):
    course = tmp_path / "course"
    assert _init([str(course), "--demo-users", "alice"]) == 0
    monkeypatch.setattr(hub.os, "geteuid", lambda: 0)
    monkeypatch.delenv(hub.PASSWORD_ENV, raising=False)
    with pytest.raises(SystemExit, match=hub.PASSWORD_ENV):
        _load(course / "jupyterhub_config.py")
    monkeypatch.setenv(hub.PASSWORD_ENV, "short")
    with pytest.raises(SystemExit, match=r"너무 짧습니다 \(5자\)") as e:
        _load(course / "jupyterhub_config.py")
    assert "short" not in str(e.value).replace("너무 짧습니다", "")


def test_demo_hub_refuses_a_non_ascii_password_and_the_guides_example_starts(tmp_path, monkeypatch):
    """JupyterHub's shared-password login compares with ``hmac.compare_digest`` on str, which raises
    TypeError for non-ASCII text: a Hangul password made every login HTTP 500. The hub refuses it at
    start, in Korean, saying why. The guide's own example (lecturer/classroom.md section 9) was a
    30-character Hangul lecturer password: its passwords must pass the hub's checks."""
    import hmac
    import re
    import shlex

    with pytest.raises(TypeError):  # why: what JupyterHub does with such a password at every login
        hmac.compare_digest("강의자-비밀번호", "강의자-비밀번호")
    course = tmp_path / "course"
    assert _init([str(course), "--demo-users", "alice"]) == 0
    monkeypatch.setattr(hub.os, "geteuid", lambda: 0)
    for env, value in ((hub.PASSWORD_ENV, "학생용-비밀번호-1234"), (hub.ADMIN_PASSWORD_ENV, "강의자용-" + "긴" * 40)):
        monkeypatch.setenv(hub.PASSWORD_ENV, "class-pw-1234")
        monkeypatch.setenv(hub.ADMIN_PASSWORD_ENV, "L" * 40)
        monkeypatch.setenv(env, value)
        with pytest.raises(SystemExit, match=f"{env}의 비밀번호에 한글 등 ASCII가 아닌 글자가 있습니다") as e:
            _load(course / "jupyterhub_config.py")
        assert "HTTP 500" in str(e.value) and value not in str(e.value)
    guide = (hubkit.REPO / "lecturer" / "classroom.md").read_text(encoding="utf-8")
    section = guide[guide.index("## 9. 데모 모드"):guide.index("## 10.")]
    line = re.search(r"^env (DECODELAB_HUB_PASSWORD=.*?) \\$", section, re.M)[1]
    given = dict(word.split("=", 1) for word in shlex.split(line))
    assert set(given) == {hub.PASSWORD_ENV, hub.ADMIN_PASSWORD_ENV}
    for env, value in given.items():
        monkeypatch.setenv(env, value)
    cfg = _load(course / "jupyterhub_config.py")
    assert cfg.SharedPasswordAuthenticator.user_password == given[hub.PASSWORD_ENV]
    assert cfg.SharedPasswordAuthenticator.admin_password == given[hub.ADMIN_PASSWORD_ENV]
    assert hmac.compare_digest(given[hub.ADMIN_PASSWORD_ENV], given[hub.ADMIN_PASSWORD_ENV])


def test_init_class_mode_with_a_roster(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("username,name\nminji,김민지\njunho,박준호\n", encoding="utf-8")
    course = tmp_path / "course"
    assert _init([str(course), "--roster", str(roster), "--lecturer", "prof"]) == 0
    cfg = _load(course / "jupyterhub_config.py")
    assert cfg.JupyterHub.authenticator_class == "decodelab.classroom.auth.NativeAuthenticator"
    assert cfg.NativeAuthenticator.open_signup is False
    assert cfg.Authenticator.allowed_users == {"minji", "junho"}
    assert cfg.Authenticator.admin_users == {"prof"}
    assert cfg.JupyterHub.spawner_class == "localprocess"
    assert not (course / "homes").exists()
    assert course.stat().st_mode & 0o007 == 0  # students (other system users) cannot look inside
    assert cfg.JupyterHub.ip == "127.0.0.1"  # loopback unless `classroom hub --ip` says otherwise


def test_init_message_says_how_students_are_approved(tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("username\nminji\n", encoding="utf-8")
    assert _init([str(tmp_path / "a"), "--roster", str(roster)]) == 0
    out = capsys.readouterr().out
    assert "명단의 이름은 가입하는 즉시 승인되고" in out and "/hub/authorize" not in out
    assert _init([str(tmp_path / "b")]) == 0
    assert "강의자가 /hub/authorize 에서 한 명씩 승인합니다" in capsys.readouterr().out

@pytest.mark.parametrize("args, message", [
    (["--demo-users", "alice,Bob!"], "쓸 수 없는 사용자 이름 ['Bob!']"),
    (["--demo-users", "alice,alice"], "두 번 나온 이름 ['alice']"),
    (["--demo-users", "alice,lecturer"], "강의자 이름 'lecturer'이(가) 학생 명단에도 있습니다"),
    (["--idle-timeout", "5"], "--idle-timeout은 60초 이상"),
])
def test_init_refuses_bad_options_in_korean(tmp_path, capsys, args, message):
    assert _init([str(tmp_path / "c"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_init_refuses_a_roster_without_username_column_and_keeps_an_existing_config(tmp_path, capsys):
    roster = tmp_path / "r.csv"
    roster.write_text("학번,이름\n1,가\n", encoding="utf-8")
    assert _init([str(tmp_path / "c"), "--roster", str(roster)]) == 2
    assert "username 열이 있어야 합니다" in capsys.readouterr().err
    assert _init([str(tmp_path / "c"), "--demo-users", "alice"]) == 0
    before = (tmp_path / "c" / "jupyterhub_config.py").read_text()
    assert _init([str(tmp_path / "c"), "--demo-users", "bob"]) == 2
    assert "--force" in capsys.readouterr().err
    assert (tmp_path / "c" / "jupyterhub_config.py").read_text() == before


def test_init_says_in_korean_why_the_course_folder_cannot_be_made(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert _init([str(afile), "--demo-users", "a"]) == 2
    assert "폴더가 아니라 파일이라 강좌 폴더를 만들 수 없습니다" in capsys.readouterr().err
    assert _init([str(afile / "sub"), "--demo-users", "a"]) == 2
    assert "폴더가 아닌 파일이 있습니다" in capsys.readouterr().err
    assert _init(["/proc/decodelab-x", "--demo-users", "a"]) == 2
    err = capsys.readouterr().err
    assert "강좌 폴더 /proc/decodelab-x을(를) 만들 수 없습니다" in err and "Traceback" not in err


def test_roster_from_korean_excel_and_unreadable_rosters(tmp_path, capsys):
    cp949 = tmp_path / "excel.csv"
    cp949.write_bytes("username,이름\nminji,김민지\njunho,박준호\n".encode("cp949"))
    assert hub.read_roster(cp949) == ["minji", "junho"]
    bom = tmp_path / "bom.csv"
    bom.write_bytes("username,이름\nminji,김민지\n".encode("utf-8-sig"))
    assert hub.read_roster(bom) == ["minji"]
    # Moodle's participants export writes "Username": the header's case does not matter
    moodle = tmp_path / "moodle.csv"
    moodle.write_text("First name, Username ,Email address\n민지,minji,m@example.ac.kr\n", encoding="utf-8")
    assert hub.read_roster(moodle) == ["minji"]
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b"username\n\xff\xfe\xff\n")
    header_only = tmp_path / "empty.csv"
    header_only.write_text("username,name\n", encoding="utf-8")
    for path, message in [(broken, "'CSV UTF-8(쉼표로 분리)'로 다시 저장하세요"),
                          (tmp_path / "none.csv", "을(를) 읽을 수 없습니다 (없는 경로입니다"),
                          (tmp_path, "을(를) 읽을 수 없습니다 (파일이 아니라 폴더입니다"),
                          (header_only, "username 열 아래에 학생 이름이 하나도 없습니다")]:
        assert _init([str(tmp_path / "c"), "--roster", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Errno" not in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["init"], "필수 인자가 빠졌습니다: dir"),
    (["init", "c", "--idle-timeout", "q"], "인자 --idle-timeout: 'q' 대신 정수 값을 주세요"),
    (["hub"], "필수 인자가 빠졌습니다: dir"),
    (["hub", "c", "--port", "x"], "인자 --port: 'x' 대신 정수 값을 주세요"),
    (["variant"], "필수 인자가 빠졌습니다: dir"),
    (["export", "c"], "필수 인자가 빠졌습니다: --lms, -o/--output"),
    (["export", "c", "--lms", "bb", "-o", "x"], "'bb'은(는) 고를 수 있는 값이 아닙니다"),
])
def test_classroom_usage_errors_and_help_are_korean(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        classroom(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("사용법: decodelab classroom") and message in err
    with pytest.raises(SystemExit) as exc:
        classroom([argv[0], "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "이 도움말을 보여 주고 끝냅니다" in out and "show this help" not in out and "usage:" not in out


@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_hub_refuses_a_port_outside_1_to_65535_before_starting(tmp_path, capsys, monkeypatch, port):
    assert _init([str(tmp_path / "c"), "--demo-users", "alice"]) == 0
    monkeypatch.setattr(hub.os, "execv", lambda *a: pytest.fail("jupyterhub started"))
    monkeypatch.setattr(hub.subprocess, "call", lambda *a: pytest.fail("jupyterhub started"))
    assert classroom(["hub", str(tmp_path / "c"), f"--port={port}"]) == 2
    err = capsys.readouterr().err
    assert "포트(--port)" in err and "65535" in err


@pytest.fixture
def started(monkeypatch, tmp_path):
    """What ``decodelab classroom hub`` would start, instead of starting it: each entry is
    ``(SIGINT disposition, command line)`` of a jupyterhub exec (or subprocess call), which then
    exits with 0 (``SystemExit``). The test runs in ``tmp_path`` (the command changes into the
    course folder)."""
    import signal

    monkeypatch.chdir(tmp_path)
    seen = []

    def execv(exe, cmd):
        seen.append((signal.getsignal(signal.SIGINT), cmd))
        raise SystemExit(0)

    monkeypatch.setattr(hub.os, "execv", execv)
    monkeypatch.setattr(hub.subprocess, "call", lambda cmd, *a, **k: execv(None, cmd))
    return seen


def test_hub_started_with_sigint_ignored_gives_jupyterhub_the_default(tmp_path, started):
    """A hub started in the background inherits SIGINT as ignored; JupyterHub stops its idle culler
    with SIGINT (then waits 10 s for it), so the disposition jupyterhub is exec'd with must be the
    default one."""
    import signal

    assert _init([str(tmp_path / "c"), "--demo-users", "alice"]) == 0
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(SystemExit):
            classroom(["hub", str(tmp_path / "c"), "--ConfigurableHTTPProxy.command=/bin/true"])
    finally:
        signal.signal(signal.SIGINT, before)
    assert [(disposition, cmd[3]) for disposition, cmd in started] == [(signal.SIG_DFL, "jupyterhub")]


def test_root_never_imports_a_module_added_to_the_course_folder(tmp_path, monkeypatch, started):
    """The hub and autograde run in the course folder, where the grader account (formgrader) may add
    files (root:decodelab-formgrader 1770). ``python -m`` puts the current folder first on
    ``sys.path``, so a ``jupyterhub.py`` or ``nbgrader.py`` put there ran as root instead of the real
    one. Both now run their module without the current folder on ``sys.path``."""
    import subprocess

    course = tmp_path / "c"
    assert _init([str(course), "--demo-users", "alice"]) == 0
    for name in ("jupyterhub", "nbgrader"):
        (course / f"{name}.py").write_text(f"open({str(tmp_path / name)!r}, 'w').write('planted ran')\n")
    with pytest.raises(SystemExit):
        classroom(["hub", str(course), "--ConfigurableHTTPProxy.command=/bin/true"])
    ((_, cmd),) = started
    r = subprocess.run([*cmd[:4], "--version"], cwd=course, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr[-2000:]  # the real jupyterhub answered
    from decodelab.classroom import cli

    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd, env: calls.append((cmd, cwd)) or 0)
    monkeypatch.setattr("decodelab.classroom.sandbox.probe", lambda: {"uid": 1, "mode": "off"})
    assert classroom(["autograde", str(course), "exam-02"]) == 0
    ((cmd, cwd),) = calls
    r = subprocess.run([*cmd[:4], "--version"], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr[-2000:]
    assert not (tmp_path / "jupyterhub").exists() and not (tmp_path / "nbgrader").exists()


def test_init_refuses_a_students_python_an_unprivileged_user_cannot_run(tmp_path, capsys):
    """The students' servers run as unprivileged users: a virtualenv whose Python lies in (or links
    into) a folder only root can enter made every spawn fail with HTTP 500 PermissionError. init
    refuses it in Korean, naming the closed folder and how to build one that works."""
    import sysconfig

    top = hubkit.open_tmp("closed")
    private = top / "private"  # as /root/.pyenv/...: the Python the virtualenv is made from
    private.mkdir(mode=0o700)
    (private / "python3").symlink_to(hubkit.base_python())
    site = f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})"
    hubkit._linked_venv(private / "venv", site, base=str(private / "python3"))  # inside the closed folder
    hubkit._linked_venv(top / "venv", site, base=str(private / "python3"))  # open, but links into it
    link = top / "venv" / "bin" / "python"
    assert Path(os.readlink(link.parent / "python3")).parent == private
    for python in (private / "venv" / "bin" / "python", link):
        assert classroom(["init", str(tmp_path / "c"), "--demo-users", "a", "--python", str(python)]) == 2
        err = capsys.readouterr().err
        assert f"--python {python}: 권한 없는 사용자는 이 Python을 실행할 수 없습니다 ({private}에는 root" in err, err
        assert "/usr/bin/python3 -m venv /opt/decodelab-students" in err and "install-singleuser.sh" in err
        # the link is named with where it leads (the open virtualenv's python itself is in /tmp)
        assert f"이 Python은 링크로 {python.resolve()} 을(를) 가리킵니다" in err, err
        assert not (tmp_path / "c").exists()
    private.chmod(0o755)  # the same environment, opened: accepted
    assert classroom(["init", str(tmp_path / "c"), "--demo-users", "a", "--python", str(link)]) == 0


def test_hub_binds_loopback_unless_ip_is_given(tmp_path, started, capsys):
    assert _init([str(tmp_path / "c"), "--demo-users", "alice"]) == 0
    for extra in ([], ["--ip", "0.0.0.0"]):
        with pytest.raises(SystemExit):
            classroom(["hub", str(tmp_path / "c"), "--ConfigurableHTTPProxy.command=/bin/true", *extra])
    assert not any(a.startswith("--ip") for a in started[0][1])  # the config's 127.0.0.1
    assert "--ip=0.0.0.0" in started[1][1]
    assert "HTTPS 리버스 프록시" in capsys.readouterr().err


def test_init_checks_the_python_of_the_students_servers(tmp_path, capsys):
    script = tmp_path / "notpython"
    script.write_text("#!/bin/sh\nexit 1\n")
    plain = tmp_path / "plain"
    plain.write_text("")
    bare = tmp_path / "bare"  # a Python that cannot find decodelab
    bare.write_text(f"#!/bin/sh\nexec env -u PYTHONPATH {sys.executable} -I -S \"$@\"\n")
    # decodelab and JupyterHub but no ngshare-exchange (each student's nbgrader submits through it):
    # importlib.util.find_spec answers None for a name whose sys.modules entry is None
    no_exchange = tmp_path / "no-exchange"
    no_exchange.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"import sys; sys.modules['ngshare_exchange'] = None; "
                           "exec(sys.argv[-1])\" \"$@\"\n")
    for f in (script, bare, no_exchange):
        f.chmod(0o755)
    for python, message in [("/nonexist/python", "그런 파일이 없습니다"),
                            (str(plain), "실행할 수 없는 파일입니다"),
                            (str(script), "Python으로 실행되지 않습니다"),
                            (str(bare), "이 Python에는 decodelab이 설치되어 있지 않습니다"),
                            (str(no_exchange), "이 Python에는 과제를 받고 내는 데 쓰는 ngshare-exchange가 없습니다: "
                                               f"'{no_exchange} -m pip install --no-deps ngshare-exchange==0.5.3'")]:
        assert classroom(["init", str(tmp_path / "c"), "--demo-users", "a", "--python", python]) == 2
        assert f"--python {python}: {message}" in capsys.readouterr().err
        assert not (tmp_path / "c").exists()
    assert classroom(["init", str(tmp_path / "c"), "--demo-users", "a", "--python", hubkit.student_python()]) == 0


def test_variant_refuses_names_the_hub_never_has_and_warns_on_unknown_students(tmp_path, capsys):
    course = tmp_path / "c"
    assert _init([str(course), "--demo-users", "alice,bob"]) == 0
    assert hub.course_students(course) == {"alice", "bob"}
    capsys.readouterr()
    assert classroom(["variant", str(course), "--list"]) == 0
    item = capsys.readouterr().out.split()[0]
    assert classroom(["variant", str(course), item, "alice"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"문항 {item}, 학생 alice\n") and err == ""
    for name, hint in [("Alice", "'alice'로 적으세요"), (" alice", "'alice'로 적으세요"),
                       ("Bob!", "영어 소문자로 시작하고")]:
        assert classroom(["variant", str(course), item, name]) == 2
        out, err = capsys.readouterr()
        assert out == "" and f"{name!r}은(는) 쓸 수 없는 사용자 이름입니다: {hint}" in err
    assert classroom(["variant", str(course), item, "carol"]) == 0
    out, err = capsys.readouterr()
    assert "학생 carol" in out and "'carol'은(는) 이 강좌의 학생 명단에 없습니다 (명단: alice, bob)" in err
    roster = tmp_path / "r.csv"
    roster.write_text("username\nminji\n", encoding="utf-8")
    assert _init([str(tmp_path / "k"), "--roster", str(roster)]) == 0
    assert hub.course_students(tmp_path / "k") == {"minji"}
    assert hub.course_students(tmp_path / "none") is None


def test_hub_without_a_course_directory(tmp_path, capsys):
    assert classroom(["hub", str(tmp_path / "none")]) == 2
    assert "decodelab classroom init" in capsys.readouterr().err


def test_pre_spawn_hook_gives_missing_notebooks_and_keeps_the_students_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXCHANGE_ROOT", str(tmp_path / "exchange"))
    src = tmp_path / "notebooks"
    src.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (src / name).write_text(name, encoding="utf-8")
    home = tmp_path / "homes" / "alice"
    home.mkdir(parents=True)
    (home / "01_a.ipynb").write_text("alice's edits", encoding="utf-8")
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name="alice"), home_dir=str(home),
                                    log=logging.getLogger("test"), environment={"KEEP": "1"})
    config_dir = tmp_path / "student-jupyter"
    monkeypatch.setattr(hub, "STUDENT_CONFIG_DIR", config_dir)  # a root hub's (/etc/decodelab/...), here a temp one
    monkeypatch.setattr(hub.os, "geteuid", lambda: 0)
    hub.pre_spawn_hook(src, system_users=False)(spawner)
    assert (home / "01_a.ipynb").read_text() == "alice's edits"
    assert (home / "02_b.ipynb").read_text() == "02_b.ipynb"
    assert spawner.environment == {"KEEP": "1", "DECODELAB_ANSWERS_DIR": str(home / ".decodelab" / "answers"),
                                   "JUPYTER_RUNTIME_DIR": str(home / ".jupyter" / "runtime"),
                                   "JUPYTER_CONFIG_PATH": str(config_dir)}
    # nbgrader's lecturer side off outside the home (read with disable_user_config), never in ~/.jupyter
    server = json.loads((config_dir / "jupyter_server_config.d" / "nbgrader.json").read_text(encoding="utf-8"))
    assert server == {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                                                            "nbgrader.server_extensions.course_list": False}}}
    page = json.loads((config_dir / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert set(page["disabledExtensions"]) == {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                                               "@jupyter/nbgrader:create-assignment"}
    assert {oct(p.stat().st_mode & 0o777) for p in config_dir.rglob("*")} == {"0o755", "0o644"}
    assert not (home / ".jupyter" / "jupyter_server_config.d").exists()
    assert not (home / ".jupyter" / "labconfig").exists()
    # the student side of nbgrader: course, exchange (created, world-writable + sticky), login as student id
    assert (tmp_path / "exchange").stat().st_mode & 0o7777 == 0o1777
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(home / ".jupyter")).load_config()
    assert (cfg.CourseDirectory.course_id, cfg.Exchange.root, cfg.CourseDirectory.student_id) == (
        "decodelab", str(tmp_path / "exchange"), "alice")


# ---------------------------------------------------------------- identity from the hub


def test_on_the_hub_the_login_is_the_student_id(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    store = AnswerStore("course", tmp_path)
    assert store.student_id() == "alice" and store.shuffle_key() == "alice"
    rec = store.save("01-decode-definition", "c", score=1.0)
    assert rec["student"] == "alice"
    assert json.loads((tmp_path / "course" / "01-decode-definition.json").read_text())["student"] == "alice"
    with pytest.raises(ValueError, match="alice\\(으\\)로 로그인했으므로"):
        store.export("bob", tmp_path)
    path = store.export("", tmp_path)
    sub = json.loads(path.read_text(encoding="utf-8"))
    assert (sub["student_id"], sub["shuffle_key"], path.name) == ("alice", "alice", "decodelab-course-alice.json")


def test_hub_login_replaces_an_earlier_typed_id_for_the_choice_order(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    (tmp_path / "student.json").write_text(json.dumps({"student_id": "typed-1", "shuffle_key": "typed-1"}))
    assert AnswerStore("course", tmp_path).shuffle_key() == "typed-1"
    monkeypatch.setenv("JUPYTERHUB_USER", "carol")
    assert AnswerStore("course", tmp_path).shuffle_key() == "carol"


def test_quiz_widget_shows_the_hub_login_locked(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "bob")
    w = quiz_widget("01", answers_dir=tmp_path, student_id="someone-else")
    assert (w.student.value, w.student.disabled, w.student.description) == ("bob", True, "JupyterHub")
    view = w.views["01-decode-definition"]
    assert view.order == choice_order("01-decode-definition", "bob", ["a", "b", "c", "d"])
    view.set_response("c")
    view.submit()
    assert AnswerStore("course", tmp_path).get("01-decode-definition")["student"] == "bob"
    monkeypatch.delenv("JUPYTERHUB_USER")
    w2 = quiz_widget("01", answers_dir=tmp_path / "other", student_id="2026-1")
    assert (w2.student.value, w2.student.disabled, w2.student.description) == ("2026-1", False, "학번")


@pytest.mark.skipif(os.geteuid() != 0, reason="the demo's servers run as the system user decodelab-demo: root only")
def test_demo_kernels_sockets_fit_the_unix_limit_for_the_longest_name():
    """A demo student's kernels talk over Unix sockets in their Jupyter runtime folder; a socket's
    path holds at most 107 bytes. Under the demo home (/home/decodelab-demo/<course>-<hex>/<name>/
    .jupyter/runtime) a 6-letter name already passed it and no kernel started; the hook gives a
    short folder of the demo user's, mode 0700, one per course and student."""
    import socket
    import uuid

    course = hubkit.open_tmp("demo-rt") / "course"
    (course / "notebooks").mkdir(parents=True)
    runtimes = set()
    for name in ("lecturer", "a" * 32):
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name, admin=False), environment={},
                                        log=logging.getLogger("test"), home_dir=str(hub.demo_homes(course) / name),
                                        system_user=hub.DEMO_USER)
        hub.pre_spawn_hook(course / "notebooks", system_users=False)(spawner)
        runtime = Path(spawner.environment["JUPYTER_RUNTIME_DIR"])
        runtimes.add(runtime)
        try:
            st = runtime.stat()
            import pwd

            assert st.st_uid == pwd.getpwnam(hub.DEMO_USER).pw_uid and st.st_mode & 0o777 == 0o700
            # jupyter_client's ipc sockets: <runtime>/kernel-<uuid>-ipc-<n>
            path = runtime / f"kernel-{uuid.uuid4()}-ipc-5"
            assert len(str(path).encode()) <= hub.SOCKET_PATH_MAX, path
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(str(path))
            path.unlink()
        finally:
            import shutil

            shutil.rmtree(runtime, ignore_errors=True)
            shutil.rmtree(hub.demo_homes(course), ignore_errors=True)
    assert len(runtimes) == 2
