"""A student-attacker's cases on a real class-mode hub (NativeAuthenticator, one real system user per
student, loopback), each a regression test:

- **A student's own Jupyter config** (``~/.jupyter/jupyter_server_config.py``) was loaded by their
  server: a student took the CSP sandbox off the files their server serves, and since students share
  the hub's origin (no subdomains), a page ``/user/<student>/files/help.html`` opened by the lecturer
  made a lecturer token and made the student admin. The hub now sets
  ``c.Spawner.disable_user_config``: the student's config file, written from their kernel, has no
  effect after a restart (no marker file, the files keep the sandbox), and nbgrader's lecturer
  extensions stay off (their switch is in a root-owned folder on ``JUPYTER_CONFIG_PATH``).
- **Reserved names**: a student signed up as ``decodelab-grader`` (the autograde sandbox's account)
  and, approved before the first autograde, got that system account; autograde then ran the
  classmates' submissions as it. Sign-up refuses every reserved name in Korean, a login under one
  is refused, no server is spawned for one, and ``sandbox_account()`` / the formgrader account take
  only a system account (uid below ``UID_MIN``), never an ordinary user's.

The system users the hub creates carry this run's suffix and are removed afterwards (root only).
"""

from __future__ import annotations

import logging
import os
import pwd
import secrets
import subprocess
import time
import types

import httpx
import pytest

import hubkit

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_attacks"),
              pytest.mark.skipif(os.geteuid() != 0, reason="class mode creates real system users: root only")]

SUFFIX = secrets.token_hex(3)
PROF = f"prof{SUFFIX}"
STUDENT = f"atk{SUFFIX}"
LECTURER_PW = "lecturer-pw-5e1c0a77"
STUDENT_PW = "student-pw-0b9d44f2"
MARKER = "user-config-ran"


@pytest.fixture(scope="module")
def hub():
    missing = hubkit.missing_parts()
    if missing:
        pytest.skip("missing: " + ", ".join(missing))
    course = hubkit.open_tmp("attacks") / "course"
    hubkit.init_course(course, None, lecturer=PROF)
    h = hubkit.start_hub(course)
    yield h
    h.stop()
    hubkit.remove_users([PROF, STUDENT])


@pytest.fixture(scope="module")
def prof(hub):
    p, _ = hubkit.sign_up(hub, PROF, LECTURER_PW)
    p.login(LECTURER_PW, spawn=False)
    assert p.logged_in, hub.log_text()[-2000:]
    return p


@pytest.fixture(scope="module")
def student(hub, prof):
    """The attacker: signed up, approved by the lecturer, logged in, server running."""
    hubkit.sign_up(hub, STUDENT, STUDENT_PW)
    assert prof.client.get(f"/hub/authorize/{STUDENT}").status_code == 200
    s = hubkit.Student(hub, STUDENT)
    s.login(STUDENT_PW, spawn=False)
    assert s.logged_in
    assert s.spawn().status_code in (201, 202)
    s.wait_ready()
    return s


# the attacker's file, as written from the student's own kernel: a marker, and the CSP sandbox off
EVIL_CONFIG = f'''
import os
open(os.path.expanduser("~/{MARKER}"), "w").write("ran")
import jupyter_server.files.handlers as _h
_h.FilesHandler.content_security_policy = property(lambda self: "frame-ancestors 'self'")
'''
WRITE_EVIL = f"""
import os
os.makedirs(os.path.expanduser("~/.jupyter"), exist_ok=True)
open(os.path.expanduser("~/.jupyter/jupyter_server_config.py"), "w").write({EVIL_CONFIG!r})
open(os.path.expanduser("~/help.html"), "w").write("<html><body><script>document.title='x'</script>hello</body></html>")
print("written")
"""


def _restart(s: hubkit.Student) -> None:
    assert s.hub_api("DELETE", f"/users/{s.name}/server").status_code in (202, 204)
    deadline = time.monotonic() + 60
    while (s.hub_api("GET", f"/users/{s.name}").json().get("servers") or {}) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert s.spawn().status_code in (201, 202)
    s.wait_ready()


def test_a_students_own_jupyter_config_does_not_load(hub, student):
    token = student.token()
    kernel = hubkit.start_kernel(hub, STUDENT, token)
    out = hubkit.run_code(hub, STUDENT, token, kernel, WRITE_EVIL, timeout_s=120)
    assert out["status"] == "ok" and "written" in out["stdout"], out
    home = pwd.getpwnam(STUDENT).pw_dir
    assert os.path.isfile(os.path.join(home, ".jupyter", "jupyter_server_config.py"))
    _restart(student)
    token = student.token()
    assert not os.path.exists(os.path.join(home, MARKER)), "the student's jupyter_server_config.py ran in their server"
    auth = {"Authorization": f"token {token}"}
    r = httpx.get(f"{hub.url}/user/{STUDENT}/files/help.html", headers=auth, timeout=60)
    assert r.status_code == 200 and "hello" in r.text, (r.status_code, r.text[:300])
    csp = r.headers.get("content-security-policy", "")
    assert "sandbox" in csp and csp != "frame-ancestors 'self'", csp  # the served file runs in an opaque origin
    # nbgrader's lecturer side is still off (its switch is outside the home), the Assignments tab still on
    import nbgrader

    answers = {path: httpx.get(f"{hub.url}/user/{STUDENT}{path}", headers=auth, timeout=60).status_code
               for path in ("/formgrader", "/formgraders", f"/nbgrader_version?version={nbgrader.__version__}")}
    assert list(answers.values()) == [404, 404, 200], answers


RESERVED = ["decodelab-grader", "decodelab-formgrader", f"decodelab-x{SUFFIX}", "formgrader", "ngshare", "nobody",
            "root", "bin", "daemon"]


def test_sign_up_and_login_refuse_every_reserved_name(hub, prof):
    """``decodelab-grader`` signed up (and, once approved, became the autograde sandbox's account):
    every reserved name is refused at sign-up with a Korean reason, never listed for approval, and a
    login under one does not get in."""
    for name in RESERVED:
        s, text = hubkit.sign_up(hub, name, STUDENT_PW)
        assert "강좌의 서비스 계정이나 이 서버의 시스템 계정 이름이라" in text, (name, text[-800:])
        s.login(STUDENT_PW, spawn=False)
        assert not s.logged_in, name
    page = prof.client.get("/hub/authorize").text
    listed = [n for n in RESERVED if f"<td>{n}</td>" in page]
    assert not listed, listed
    assert "decodelab-grader" not in {u["name"] for u in prof.hub_api("GET", "/users").json()}


def test_reserved_names_are_refused_at_spawn_roster_and_login_check():
    """The same rule in the places a name arrives other than sign-up: the spawn hook (never
    ``useradd`` for such a name), the roster/demo names of ``init``, and the authenticator's
    login check (a name approved before this rule, or put on a roster)."""
    from decodelab.classroom import accounts, auth, course, hub

    name = f"decodelab-y{SUFFIX}"
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name, admin=False), environment={},
                                    log=logging.getLogger("test"))
    with pytest.raises(RuntimeError, match="계정 이름이라 학생 서버를 띄우지 않습니다"):
        hub.pre_spawn_hook(hubkit.REPO / "notebooks", system_users=True)(spawner)
    with pytest.raises(KeyError):
        pwd.getpwnam(name)
    for bad in ("decodelab-grader", "ngshare", "bin"):
        with pytest.raises(ValueError, match="학생 이름으로 쓸 수 없습니다"):
            course.check_names(["minji", bad], "명단")
    assert course.check_names(["minji"], "명단") == ["minji"]
    authenticator = auth.NativeAuthenticator.__new__(auth.NativeAuthenticator)  # its rules only: no hub database
    assert not authenticator.check_blocked_users("decodelab-grader")
    assert not authenticator.check_blocked_users("daemon")
    assert authenticator.check_blocked_users(f"minji{SUFFIX}")
    assert not authenticator.validate_username("formgrader") and authenticator.validate_username("minji")
    assert accounts.reserved_name("nobody") and not accounts.reserved_name(f"minji{SUFFIX}")


def test_the_grader_accounts_must_be_system_accounts(tmp_path):
    """An ordinary account (what the hub made for a student who signed up as ``decodelab-grader``) is
    refused as the autograde sandbox's account and as formgrader's, with a Korean reason; a system
    account is taken."""
    from decodelab.classroom import accounts, exchange, sandbox

    ordinary, system = f"dlord{SUFFIX}", f"dlsys{SUFFIX}"
    try:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/bash", ordinary], check=True, capture_output=True)
        assert pwd.getpwnam(ordinary).pw_uid >= accounts.uid_min()
        with pytest.raises(sandbox.SandboxError, match="시스템 계정이 아닌 일반 사용자 계정입니다"):
            sandbox.sandbox_account(ordinary)
        course = tmp_path / "course"
        course.mkdir()
        with pytest.raises(accounts.AccountError, match="formgrader 계정.*일반 사용자 계정입니다"):
            exchange._formgrader_account(course, ordinary)
        uid, gid = sandbox.sandbox_account(system)  # missing: made as a system account, then taken
        assert 0 < uid < accounts.uid_min() and gid != 0
        assert sandbox.sandbox_account(system) == (uid, gid)
    finally:
        hubkit.remove_users([ordinary, system])
