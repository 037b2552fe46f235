"""Class mode on the real JupyterHub: NativeAuthenticator (the pinned 1.3 with JupyterHub 6.1),
sign-up approved by the lecturer, and a roster.

One hub (``decodelab classroom init DIR --roster roster.csv``, no servers spawned: class mode
spawns as one system user per student, which this test does not create on the machine). Over
HTTP with the hub's own forms: the lecturer signs up and is an admin at once; a roster student
signs up and can log in; a name outside the roster can sign up but never log in, even after the
lecturer approves it at ``/hub/authorize``; a student cannot open ``/hub/authorize`` or
``/hub/admin``; a too-short password is refused at sign-up.
"""

from __future__ import annotations

import pytest

import hubkit

pytestmark = pytest.mark.slow

LECTURER_PW = "lecturer-pw-7f3a9c2e"
STUDENT_PW = "student-pw-19c0b7d4"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing = hubkit.missing_parts()
    if missing:
        if hubkit.os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("class-mode hub test cannot run under CI: missing " + ", ".join(missing))
        pytest.skip("missing: " + ", ".join(missing))
    root = tmp_path_factory.mktemp("classmode")
    roster = root / "roster.csv"
    roster.write_text("username,name\nminji,김민지\njunho,박준호\n", encoding="utf-8")
    course = root / "course"
    hubkit.init_course(course, None, lecturer="prof", args=["--roster", str(roster)])
    h = hubkit.start_hub(course)
    yield h
    h.stop()


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
    assert 'authenticator_class = "decodelab.classroom.auth.NativeAuthenticator"' in config and "{'junho', 'minji'}" in config

    prof, _ = _signup(hub, "prof", LECTURER_PW)
    prof.login(LECTURER_PW)
    assert _logged_in(prof)
    assert prof.client.get("/hub/admin").status_code == 200
    assert prof.client.get("/hub/authorize").status_code == 200

    minji, _ = _signup(hub, "minji", STUDENT_PW)
    minji.login(STUDENT_PW)
    assert _logged_in(minji)  # on the roster: approved at sign-up
    assert minji.client.get("/hub/admin").status_code == 403
    assert minji.client.get("/hub/authorize").status_code == 403
    assert minji.hub_api("GET", "/users/junho").status_code in (403, 404)

    short, text = _signup(hub, "junho", "short")
    short.login("short")
    assert not _logged_in(short)  # too short for minimum_password_length = 10: no account

    eve, _ = _signup(hub, "eve", STUDENT_PW)
    eve.login(STUDENT_PW)
    assert not _logged_in(eve)  # not on the roster, not approved
    assert prof.client.get("/hub/authorize/eve").status_code == 200  # the lecturer approves...
    assert "eve" in prof.client.get("/hub/authorize").text
    eve2 = hubkit.Student(hub, "eve")
    eve2.login(STUDENT_PW)
    assert not _logged_in(eve2)  # ...but the roster still decides who may log in
