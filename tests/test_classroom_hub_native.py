"""Class mode on the real JupyterHub: NativeAuthenticator (the pinned 1.3 with JupyterHub 6.1),
sign-up approved by the lecturer, with and without a roster.

Two hubs, over HTTP with the hub's own forms:

- with a roster (``init DIR --roster roster.csv``, no server spawned): the lecturer signs up and
  is an admin at once; a roster student signs up and can log in; a name outside the roster can
  sign up but never log in, even after the lecturer approves it at ``/hub/authorize``; a student
  cannot open ``/hub/authorize`` or ``/hub/admin``; a too-short password is refused at sign-up.
- without a roster, on the students' Python of :func:`hubkit.student_python` (one an unprivileged
  user can run), as a lecturer following lecturer/classroom.md would: the lecturer logs in and
  approves a student, who logs in and whose server spawns as a real system user the hub creates
  (removed again after the test; root only); the NFC and NFD spellings and the case variants of
  one name are one account; every socket of the hub's processes listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import unicodedata
from urllib.parse import unquote

import psutil
import pytest

import hubkit

pytestmark = pytest.mark.slow

LECTURER_PW = "lecturer-pw-7f3a9c2e"
STUDENT_PW = "student-pw-19c0b7d4"
# Logging in spawns the user's server (JupyterHub's default), and class mode makes each a system
# user of this machine: every name carries this run's suffix, and the fixtures remove those users.
SUFFIX = secrets.token_hex(3)
PROF, MINJI, JUNHO, EVE = (f"{n}{SUFFIX}" for n in ("prof", "minji", "junho", "eve"))


def _remove_users(names) -> None:
    """``userdel --remove`` each of ``names`` that exists (the hub created it at a spawn)."""
    import pwd

    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        subprocess.run(["userdel", "--remove", name], capture_output=True)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing = hubkit.missing_parts()
    if missing:
        if hubkit.os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("class-mode hub test cannot run under CI: missing " + ", ".join(missing))
        pytest.skip("missing: " + ", ".join(missing))
    root = hubkit.open_tmp("classmode")  # formgrader's account must reach the course folder
    roster = root / "roster.csv"
    roster.write_text(f"username,name\n{MINJI},김민지\n{JUNHO},박준호\n", encoding="utf-8")
    course = root / "course"
    hubkit.init_course(course, None, lecturer=PROF, args=["--roster", str(roster)])
    h = hubkit.start_hub(course)
    yield h
    h.stop()
    _remove_users([PROF, MINJI, JUNHO, EVE])


def _signup(hub, name: str, password: str):
    s = hubkit.Student(hub, name)
    s.client.get("/hub/signup")
    r = s.client.post("/hub/signup", data={"username": name, "signup_password": password,
                                           "signup_password_confirmation": password, "_xsrf": s._xsrf()})
    assert r.status_code == 200
    return s, r.text


def _logged_in(s) -> bool:
    return "jupyterhub-session-id" in s.client.cookies


def test_signup_roster_and_lecturer_approval(hub):
    config = (hub.course / "jupyterhub_config.py").read_text()
    assert 'authenticator_class = "decodelab.classroom.auth.NativeAuthenticator"' in config and f"{{{JUNHO!r}, {MINJI!r}}}" in config

    prof, _ = _signup(hub, PROF, LECTURER_PW)
    prof.login(LECTURER_PW)
    assert _logged_in(prof)
    assert prof.client.get("/hub/admin").status_code == 200
    assert prof.client.get("/hub/authorize").status_code == 200

    minji, _ = _signup(hub, MINJI, STUDENT_PW)
    minji.login(STUDENT_PW)
    assert _logged_in(minji)  # on the roster: approved at sign-up
    assert minji.client.get("/hub/admin").status_code == 403
    assert minji.client.get("/hub/authorize").status_code == 403
    assert minji.hub_api("GET", f"/users/{JUNHO}").status_code in (403, 404)

    short, text = _signup(hub, JUNHO, "short")
    short.login("short")
    assert not _logged_in(short)  # too short for minimum_password_length = 10: no account

    eve, _ = _signup(hub, EVE, STUDENT_PW)
    eve.login(STUDENT_PW)
    assert not _logged_in(eve)  # not on the roster, not approved
    assert prof.client.get(f"/hub/authorize/{EVE}").status_code == 200  # the lecturer approves...
    assert EVE in prof.client.get("/hub/authorize").text
    eve2 = hubkit.Student(hub, EVE)
    eve2.login(STUDENT_PW)
    assert not _logged_in(eve2)  # ...but the roster still decides who may log in


# ---------------------------------------------------------------- without a roster


STUDENT = f"dlt{SUFFIX}"  # a real system user on this machine while the test runs
HANGUL = f"김민지{SUFFIX}"


@pytest.fixture(scope="module")
def open_hub(tmp_path_factory):
    """A class-mode hub without a roster; the system users it creates are removed afterwards."""
    missing = hubkit.missing_parts()
    if missing:
        pytest.skip("missing: " + ", ".join(missing))
    if os.geteuid() != 0:
        pytest.skip("class mode creates one system user per student: needs root")
    course = hubkit.open_tmp("open") / "course"
    hubkit.init_course(course, None, lecturer=PROF)
    h = hubkit.start_hub(course)
    yield h
    h.stop()
    _remove_users([PROF, STUDENT, HANGUL + "a"])


def _approve(prof, name: str) -> None:
    """The lecturer's approve link on /hub/authorize/<name> (it toggles: call it once per name)."""
    r = prof.client.get(f"/hub/authorize/{name}")
    assert r.status_code == 200, r.status_code


PROBE = """
import json, os, pwd
out = {"uid": os.getuid(), "user": pwd.getpwuid(os.getuid()).pw_name, "home": os.environ["HOME"]}
try:
    os.listdir(COURSE)
    out["course"] = "readable"
except PermissionError:
    out["course"] = "closed"
print(json.dumps(out))
"""


def test_without_a_roster_the_lecturer_logs_in_approves_and_the_student_spawns(open_hub):
    """Today nobody, not even the lecturer, could log in without a roster (JupyterHub 5+ lets no
    one in without allowed_users or allow_all)."""
    prof, _ = _signup(open_hub, PROF, LECTURER_PW)
    prof.login(LECTURER_PW)
    assert _logged_in(prof), open_hub.log_text()[-2000:]
    assert prof.client.get("/hub/admin").status_code == 200

    student, text = _signup(open_hub, STUDENT, STUDENT_PW)
    assert "has been sent to the admin" in text
    student.login(STUDENT_PW)
    assert not _logged_in(student)  # not approved yet
    assert STUDENT in prof.client.get("/hub/authorize").text
    _approve(prof, STUDENT)
    student = hubkit.Student(open_hub, STUDENT)
    student.login(STUDENT_PW)
    assert _logged_in(student)
    assert student.client.get("/hub/authorize").status_code == 403

    # first try: the server spawns as the student's own (new) system user, on a Python it can run
    assert student.spawn().status_code in (201, 202)
    student.wait_ready()
    token = student.token()
    kernel = hubkit.start_kernel(open_hub, STUDENT, token)
    out = hubkit.run_code(open_hub, STUDENT, token, kernel, f"COURSE = {str(open_hub.course)!r}\n" + PROBE)
    assert out["status"] == "ok", out
    got = json.loads(out["stdout"].strip().splitlines()[-1])
    import pwd

    pw = pwd.getpwnam(STUDENT)
    assert got == {"uid": pw.pw_uid, "user": STUDENT, "home": pw.pw_dir, "course": "closed"}
    assert pw.pw_uid != 0


def test_nfc_nfd_and_case_spellings_of_a_name_are_one_account(open_hub):
    """An NFD spelling (macOS, some input methods) of a Hangul name and an upper-case variant are
    the account of the NFC, lower-case name: sign-up refuses them as taken, login accepts them."""
    nfd = unicodedata.normalize("NFD", HANGUL)
    assert nfd != HANGUL and unicodedata.normalize("NFC", nfd) == HANGUL
    prof = hubkit.Student(open_hub, PROF)
    prof.login(LECTURER_PW)
    assert _logged_in(prof)

    _, text = _signup(open_hub, HANGUL + "A", STUDENT_PW)  # stored as 김민지a
    assert "has been sent to the admin" in text
    for spelling in (nfd + "A", HANGUL + "a", nfd + "a"):
        _, text = _signup(open_hub, spelling, STUDENT_PW + "x")
        assert "already in use" in text, spelling
    name = HANGUL + "a"
    _approve(prof, name)
    for spelling in (nfd + "A", HANGUL + "a", nfd + "a", HANGUL + "A"):
        s = hubkit.Student(open_hub, spelling)
        s.login(STUDENT_PW)
        assert _logged_in(s), spelling
        assert s.hub_api("GET", "/user").json()["name"] == name
    names = [u["name"] for u in prof.hub_api("GET", "/users").json()]
    assert names.count(name) == 1 and not [n for n in names if n != name and unicodedata.normalize("NFC", n.casefold()) == name]
    # and one line for it on the lecturer's approval page
    links = [unquote(line) for line in prof.client.get("/hub/authorize").text.splitlines() if "authorize/" in line]
    assert sum(HANGUL in unicodedata.normalize("NFC", line) for line in links) == 1, links


def test_the_hub_listens_on_loopback_only_by_default(open_hub):
    """No --ip given (hubkit passes none): every listening socket of the hub, its proxy and its
    services is on 127.0.0.1."""
    root = psutil.Process(open_hub.proc.pid)
    listening = []
    for p in [root, *root.children(recursive=True)]:
        try:
            conns = p.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        listening += [(p.name(), c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    public = int(open_hub.url.rsplit(":", 1)[1])
    assert any(port == public for _, _, port in listening), listening  # the proxy's public port is there
    assert {ip for _, ip, _ in listening} == {"127.0.0.1"}, listening
