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


def _remove_users(names) -> None:
    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        subprocess.run(["userdel", "--remove", name], capture_output=True)


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
    _remove_users([PROF, STUDENT])


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
