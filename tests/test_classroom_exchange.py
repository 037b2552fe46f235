"""Who submitted and when: nbgrader's exchange behind the hub (ngshare), due dates, the late policy,
formgrader for the lecturer, and the LMS roster's headers.

One class-mode hub on loopback (``decodelab classroom init --roster ... --due ...``, run as root:
three real system users are created for the students, ``decodelab-formgrader`` for formgrader). The
students' servers are really spawned; each student runs nbgrader in their own kernel, as their own
system user, with their own hub token, as the Assignments tab would. The lecturer runs nbgrader as
root in the course folder (release, collect), as lecturer/grading.md says.

- ``nbgrader submit --student OTHER`` and an edited ``~/.jupyter/nbgrader_config.py`` (another
  student id, another ``$JUPYTERHUB_USER``) never produce a submission in the other student's name;
- a resubmission after the due date does not replace the on-time one, and collect names it;
- a late submission carrying a backdated ``timestamp.txt`` is collected with the server's time and
  nbgrader counts it late (and the course's late policy takes the whole score);
- formgrader, reached through the hub as the lecturer, lists the collected submissions; a student
  is refused;
- sign-up with the roster: its names are approved at sign-up, no other name can log in even when
  the lecturer approves it, and only the lecturer opens ``/hub/admin`` and ``/hub/authorize``.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

import hubkit

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_exchange")]

A = "exam-02"
PW = "exchange-pw-5d1c9e7a"
LATE_PERCENT = 100.0


def _root_or_skip():
    missing = hubkit.missing_parts()
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if missing:
        if ci:
            pytest.fail("exchange test cannot run under CI: missing " + ", ".join(missing))
        pytest.skip("missing: " + ", ".join(missing))
    if os.geteuid() != 0:
        pytest.skip("class mode creates system users: run as root")
    _needs_ngshare_exchange()


def _needs_ngshare_exchange():
    """Skip without ngshare-exchange (scripts/install_hub.sh installs it); never import it here:
    decodelab.classroom.exchange_plugin must be what imports it first (it sets $USER for it)."""
    import importlib.util

    if importlib.util.find_spec("ngshare_exchange") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("ngshare-exchange missing under CI: bash scripts/install_hub.sh")
        pytest.skip("ngshare-exchange missing: bash scripts/install_hub.sh")


def _signup_login(hub, name: str, *, spawn: bool = True) -> hubkit.Student:
    s, _ = hubkit.sign_up(hub, name, PW)
    s.login(PW, spawn=spawn)
    assert s.logged_in, f"{name} could not log in"
    return s


def _lecturer_nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` as root in the course folder (the lecturer's own commands)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER")}
    env.update(PYTHONPATH=str(hubkit.REPO), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                          text=True, timeout=300)


class Seat:
    """A student at their own spawned server: nbgrader runs in their kernel (their system user,
    their hub token, their home)."""

    def __init__(self, hub, name):
        """Sign up, log in and ask for the server; :meth:`ready` waits for it (so several seats'
        servers start together)."""
        self.hub, self.name = hub, name
        self.s = _signup_login(hub, name)
        self.token = self.s.token()
        assert self.s.spawn().status_code in (201, 202), hub.log_text()[-3000:]

    def ready(self) -> "Seat":
        """Wait for the server, open a kernel in it and define ``nb(*args)`` there."""
        self.s.wait_ready()
        self.kernel = hubkit.start_kernel(self.hub, self.name, self.token)
        self.run(textwrap.dedent("""
            import os, subprocess, sys
            from pathlib import Path
            HOME = Path.home()
            def nb(*args, env=None):
                r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=HOME, capture_output=True,
                                   text=True, env=env)
                print(f"rc={r.returncode}")
                print(r.stdout[-3000:] + r.stderr[-3000:])
        """))
        return self

    def run(self, code: str) -> str:
        out = hubkit.run_code(self.hub, self.name, self.token, self.kernel, code, timeout_s=300)
        assert out["status"] == "ok", out
        return out["stdout"]

    def mark(self, text: str, timestamp: str | None = None) -> None:
        """Write ``mark.txt`` (and, for a backdating attempt, ``timestamp.txt``) into the fetched assignment."""
        code = f"(HOME / {A!r} / 'mark.txt').write_text({text!r})\n"
        if timestamp:
            code += f"(HOME / {A!r} / 'timestamp.txt').write_text({timestamp!r})\n"
        self.run(code)

    def nbgrader(self, *args: str, env: dict | None = None) -> str:
        extra = f", env={{**os.environ, **{env!r}}}" if env else ""
        return self.run(f"nb(*{list(args)!r}{extra})")


@pytest.fixture(scope="module")
def klass():
    _root_or_skip()
    base = hubkit.open_tmp("exchange")
    tag = uuid.uuid4().hex[:5]
    alice, bob, carol, prof = (f"{n}{tag}" for n in ("alice", "bob", "carol", "prof"))
    # minji and junho: roster students who sign up in test_signup_roster_and_lecturer_approval; eve is not on it
    minji, junho, eve = (f"{n}{tag}" for n in ("minji", "junho", "eve"))
    roster = base / "roster.csv"
    roster.write_text(f"username,name\n{alice},앨리스\n{bob},밥\n{carol},캐럴\n{minji},김민지\n{junho},박준호\n",
                      encoding="utf-8")
    course = base / "course"
    hubkit.init_course(course, None, lecturer=prof,
                       args=["--roster", str(roster), "--due", "2099-01-01 00:00", "--late-penalty", str(LATE_PERCENT)])
    ports = {"DECODELAB_NGSHARE_PORT": str(hubkit.free_port()), "DECODELAB_FORMGRADER_PORT": str(hubkit.free_port())}
    hub = hubkit.start_hub(course, env_extra=ports)
    try:
        for step in (("generate_assignment", A), ("release_assignment", A)):
            r = _lecturer_nbgrader(course, *step)
            assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, r.stdout + r.stderr
        seats = {n: Seat(hub, n) for n in (alice, bob, carol)}
        for seat in seats.values():
            seat.ready()
        for seat in seats.values():
            out = seat.nbgrader("fetch_assignment", A)
            fetched = seat.run(f"print((HOME / {A!r} / '{A}.ipynb').is_file())")
            assert "rc=0" in out and "True" in fetched, out + hub.log_text()[-4000:]
        yield {"hub": hub, "course": course, "alice": seats[alice], "bob": seats[bob], "carol": seats[carol],
               "prof": prof, "minji": minji, "junho": junho, "eve": eve,
               "ngshare_port": int(ports["DECODELAB_NGSHARE_PORT"])}
    finally:
        hub.stop()
        for n in (alice, bob, carol, prof, minji, junho, eve):  # the lecturer signs up as a system user too
            subprocess.run(["userdel", "--remove", n], capture_output=True)


@pytest.fixture(scope="module")
def collected(klass):
    """The whole story up to collect: on-time work, the attacks, the due date passing, late work."""
    alice, bob, carol, course = klass["alice"], klass["bob"], klass["carol"], klass["course"]
    bob.mark("bob on time")
    assert "rc=0" in bob.nbgrader("submit", A)
    alice.mark("written by alice")
    attempts = [alice.nbgrader("submit", A, "--student", bob.name)]
    # an edited config: another student id, and the hub user name faked in the environment too
    edit = f"\nc.CourseDirectory.student_id = {bob.name!r}\nimport os\nos.environ['JUPYTERHUB_USER'] = {bob.name!r}\n"
    alice.run(f"with (HOME / '.jupyter' / 'nbgrader_config.py').open('a') as fh: fh.write({edit!r})")
    attempts.append(alice.nbgrader("submit", A, env={"JUPYTERHUB_USER": bob.name}))
    # the due date passes (the lecturer moves it to now, in nbgrader's gradebook)
    time.sleep(1.0)
    due = datetime.now(timezone.utc).replace(tzinfo=None)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "decodelab") as gb:
        gb.update_or_create_assignment(A, duedate=due)
    time.sleep(1.0)
    bob.mark("bob late resubmission")
    assert "rc=0" in bob.nbgrader("submit", A)
    carol.mark("carol late", timestamp="2020-01-01 00:00:00.000000 UTC")  # backdated by hand
    assert "rc=0" in carol.nbgrader("submit", A)
    r = _lecturer_nbgrader(course, "collect", A)
    assert r.returncode == 0, r.stdout + r.stderr
    return {**klass, "due": due, "attempts": attempts, "collect_log": r.stdout + r.stderr}


def test_signup_roster_and_lecturer_approval(klass):
    """Sign-up with a roster (NativeAuthenticator, the pinned 1.3 with JupyterHub 6.1), no server
    spawned: the lecturer signs up and is an admin at once; a roster student signs up and can log
    in; a name outside the roster can sign up but never log in, even after the lecturer approves it
    at ``/hub/authorize``; a student cannot open ``/hub/authorize`` or ``/hub/admin``; a too-short
    password is refused at sign-up."""
    hub, prof, minji, junho, eve = (klass[k] for k in ("hub", "prof", "minji", "junho", "eve"))
    config = (hub.course / "jupyterhub_config.py").read_text()
    roster = sorted([klass[k].name for k in ("alice", "bob", "carol")] + [junho, minji])
    assert 'authenticator_class = "decodelab.classroom.auth.NativeAuthenticator"' in config
    assert "c.Authenticator.allowed_users = {" + ", ".join(map(repr, roster)) + "}" in config

    lecturer = _signup_login(hub, prof, spawn=False)  # PW: test_formgrader_through_the_hub... logs in with it
    assert lecturer.client.get("/hub/admin").status_code == 200
    assert lecturer.client.get("/hub/authorize").status_code == 200

    student = _signup_login(hub, minji, spawn=False)  # on the roster: approved at sign-up
    assert student.client.get("/hub/admin").status_code == 403
    assert student.client.get("/hub/authorize").status_code == 403
    assert student.hub_api("GET", f"/users/{junho}").status_code in (403, 404)

    short, _ = hubkit.sign_up(hub, junho, "short")
    short.login("short")
    assert not short.logged_in  # too short for minimum_password_length = 10: no account

    outsider, _ = hubkit.sign_up(hub, eve, PW)
    outsider.login(PW)
    assert not outsider.logged_in  # not on the roster, not approved
    assert lecturer.client.get(f"/hub/authorize/{eve}").status_code == 200  # the lecturer approves...
    assert eve in lecturer.client.get("/hub/authorize").text
    again = hubkit.Student(hub, eve)
    again.login(PW)
    assert not again.logged_in  # ...but the roster still decides who may log in


def _mark(course: Path, student: str) -> str | None:
    p = course / "submitted" / student / A / "mark.txt"
    return p.read_text() if p.is_file() else None


def test_another_students_name_cannot_be_used(collected):
    course, alice, bob = collected["course"], collected["alice"], collected["bob"]
    assert _mark(course, bob.name) == "bob on time"  # bob's own work, never alice's
    for out in collected["attempts"]:
        assert "written by alice" not in (_mark(course, bob.name) or "")
        assert "Submitted as" not in out or bob.name not in out.split("Submitted as")[-1].split("\n")[0], out
    # whatever alice's attempts did, anything they left is hers (the hub login of her token)
    assert _mark(course, alice.name) in (None, "written by alice")


def test_late_resubmission_does_not_replace_the_on_time_one(collected):
    course, bob = collected["course"], collected["bob"]
    assert _mark(course, bob.name) == "bob on time"
    log = collected["collect_log"]
    assert "Late resubmission" in log and bob.name in log, log  # named, not silent


def test_backdated_submission_is_late_and_penalised(collected):
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    from decodelab.classroom.exchange_plugin import LatePenalty

    course, carol, due = collected["course"], collected["carol"], collected["due"]
    assert _mark(course, carol.name) == "carol late"
    stamp = parse_utc((course / "submitted" / carol.name / A / "timestamp.txt").read_text().strip())
    assert stamp > due and stamp.year >= 2026  # the server's clock, not the student's 2020
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "decodelab") as gb:
        gb.update_or_create_student(carol.name)
        sub = gb.update_or_create_submission(A, carol.name, timestamp=stamp)  # what autograde records
        late = sub.total_seconds_late
    assert late > 0
    assert LatePenalty(percent_per_day=LATE_PERCENT).late_submission_penalty(carol.name, 7.0, late) == 7.0
    text = (course / "nbgrader_config.py").read_text()
    assert "c.ExchangeCollect.before_duedate = True" in text and f"percent_per_day = {LATE_PERCENT!r}" in text


def test_formgrader_through_the_hub_lists_the_submissions(collected):
    hub, prof, alice = collected["hub"], collected["prof"], collected["alice"]
    lecturer = _signup_login(hub, prof, spawn=False)  # formgrader is a hub service: no server of the lecturer's
    page = lecturer.client.get("/services/formgrader/formgrader")
    assert page.status_code == 200, page.text[-2000:]
    r = lecturer.client.get(f"/services/formgrader/formgrader/api/submissions/{A}")
    assert r.status_code == 200, r.text[-2000:]
    listed = {s["student"]: s for s in r.json()}
    for seat in (collected["bob"], collected["carol"]):
        assert listed[seat.name]["submitted"] is True
    assert alice.s.client.get(f"/services/formgrader/formgrader/api/submissions/{A}").status_code in (403, 404)
    # the hub's formgrader service loads the course's extension (decodelab.classroom.exchange.FORMGRADER_ARGS):
    # its route for students' files answers sandboxed, its own pages do not
    r = lecturer.client.get("/services/formgrader/formgrader/submissions/no-such-id/evil.html")
    assert "sandbox" in r.headers.get("Content-Security-Policy", "").split("; "), (r.status_code, dict(r.headers))
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    assert "sandbox" not in page.headers.get("Content-Security-Policy", "")


def test_ngshare_listens_on_loopback_only(klass):
    """ngshare 0.6.0 binds 0.0.0.0; the course's service binds 127.0.0.1 (only the hub's proxy reaches it)."""
    import psutil

    port = klass["ngshare_port"]
    listening = [c.laddr.ip for c in psutil.net_connections("inet") if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
    assert listening == ["127.0.0.1"], listening


def test_late_penalty_per_started_day():
    _needs_ngshare_exchange()
    from decodelab.classroom.exchange_plugin import LatePenalty

    p = LatePenalty(percent_per_day=10.0)
    assert p.late_submission_penalty("s", 8.0, 0) is None
    assert p.late_submission_penalty("s", 8.0, 1) == pytest.approx(0.8)  # 1 s late: one started day
    assert p.late_submission_penalty("s", 8.0, 86400 * 2 + 1) == pytest.approx(2.4)  # three started days
    assert p.late_submission_penalty("s", 8.0, 86400 * 30) == 8.0  # never more than the score


def test_due_dates_are_korean_time_unless_an_offset_is_given():
    from decodelab.classroom.exchange import due_options, parse_due

    assert parse_due("2026-12-20 23:59") == datetime(2026, 12, 20, 14, 59)
    assert parse_due("2026-12-20T23:59+00:00") == datetime(2026, 12, 20, 23, 59)
    both = due_options(["exam-03=2026-12-21 09:00", "2026-12-20 09:00"], ["exam-02", "exam-03"])
    assert both == {"exam-03": datetime(2026, 12, 21, 0, 0), "exam-02": datetime(2026, 12, 20, 0, 0)}
    with pytest.raises(ValueError, match="마감 시각 '내일'"):
        parse_due("내일")
    with pytest.raises(ValueError, match="과제 exam-09이\\(가\\) 없습니다"):
        due_options(["exam-09=2026-12-20 09:00"], ["exam-02"])


def test_moodle_roster_headers_match_without_regard_to_case(tmp_path, capsys, monkeypatch):
    pytest.importorskip("nbgrader")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    from nbgrader.api import Gradebook

    from decodelab.classroom.cli import export_command as export_main

    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "decodelab") as gb:
        gb.update_or_create_assignment(A)
        for sid in ("minji", "junho"):
            gb.update_or_create_student(sid)
    roster = tmp_path / "participants.csv"  # Moodle's participants export: "Username", "ID number"
    roster.write_text("First name,Username,Email address\n민지,minji,m@example.ac.kr\n준호,junho,j@example.ac.kr\n",
                      encoding="utf-8")
    out = tmp_path / "moodle.csv"
    assert export_main([str(course), "--lms", "moodle", "-o", str(out), "--roster", str(roster)]) == 0
    assert "내보낸 학생: 2명" in capsys.readouterr().err
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["username", "idnumber", A, f"{A} 늦은 제출 감점"] and sorted(r[0] for r in rows[1:]) == ["junho", "minji"]
    # a roster whose names match nobody is an error, not an empty file with exit 0
    other = tmp_path / "other.csv"
    other.write_text("USERNAME\nsomeone\n", encoding="utf-8")
    assert export_main([str(course), "--lms", "moodle", "-o", str(out), "--roster", str(other)]) == 1
    assert "한 명도 찾지 못했습니다" in capsys.readouterr().err
    # no column that names a student: said, with the headers found
    bad = tmp_path / "bad.csv"
    bad.write_text("이름,이메일\n민지,m@example.ac.kr\n", encoding="utf-8")
    assert export_main([str(course), "--lms", "moodle", "-o", str(out), "--roster", str(bad)]) == 2
    assert "학생을 알아볼 열이 없습니다 (찾은 열: 이름, 이메일)" in capsys.readouterr().err



def test_ngshare_stores_what_it_builds_through_back_references_under_sqlalchemy_2():
    """ngshare 0.6.0 makes ``Assignment(name, course)`` and ``Submission(user, assignment)``; under
    SQLAlchemy 2 neither was stored (a release listed no assignment). With the service module's
    adaptation both are, with their files."""
    pytest.importorskip("ngshare")
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    from ngshare.database.database import Assignment, Base, Course, File, Submission, User

    from decodelab.classroom.ngshare_service import adopt_backref_objects

    adopt_backref_objects(Base)
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    session = sessionmaker(bind=engine)
    db = session()
    db.add(User("minji"))
    db.add(Course("decodelab", [User("prof")]))
    db.commit()
    db = session()
    course = db.query(Course).one()
    released = Assignment(A, course)  # what ngshare's release handler does
    released.files.append(File("exam-02.ipynb", b"{}"))
    db.commit()
    db = session()
    (stored,) = db.query(Assignment).all()
    assert stored.id == A and [f.filename for f in stored.files] == ["exam-02.ipynb"]
    sub = Submission(db.query(User).filter(User.id == "minji").one(), stored)  # ngshare's submit handler
    sub.files.append(File("exam-02.ipynb", b"{1}"))
    db.commit()
    db = session()
    assert [(s.student.id, len(s.files)) for s in db.query(Submission)] == [("minji", 1)]


def test_a_course_the_grader_account_cannot_reach_starts_without_formgrader(tmp_path, capsys):
    """A course under a folder others cannot enter (pytest's tmp_path is 0700; /root is too): the
    formgrader service (running as decodelab-formgrader) would exit at once and stop the whole hub.
    It is left out with a Korean message naming the closed folder; ngshare keeps its admin token."""
    if os.geteuid() != 0:
        pytest.skip("the grader account is used only when the hub runs as root")
    from decodelab.classroom.exchange import FORMGRADER, NGSHARE, hub_services

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    course = closed / "course"
    course.mkdir()
    got = hub_services(course, python=sys.executable, lecturer="prof")
    services = {s["name"]: s for s in got["services"]}
    assert set(services) == {NGSHARE, FORMGRADER}
    assert "command" not in services[FORMGRADER] and services[FORMGRADER]["api_token"] == got["token"]
    assert got["roles"] == []
    err = capsys.readouterr().err
    first_closed = next(str(f) for f in reversed(course.parents) if not f.stat().st_mode & 0o001)
    assert f"formgrader를 띄우지 않습니다: {first_closed}에는 다른 사용자가 들어갈 수 없어" in err
    assert f"강좌 폴더 {course}에 닿지 못합니다. 'chmod o+x {first_closed}'" in err


def test_a_json_config_the_grader_account_adds_never_steers_roots_nbgrader(tmp_path):
    """nbgrader reads nbgrader_config.json of its folder after nbgrader_config.py and lets it win.
    The grader account may add files to the course folder (1770), so a JSON config of its own
    could give root's ``nbgrader autograde`` the plain Execute step (students' code unsandboxed, as
    root). The hub now keeps a root-owned empty one there (the sticky bit keeps it root's), and
    replaces one of any other owner."""
    if os.geteuid() != 0:
        pytest.skip("the grader account is used only when the hub runs as root")
    import pwd

    from decodelab.classroom.exchange import FORMGRADER_USER, hub_services

    course = hubkit.open_tmp("jsoncfg") / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = 120\n", encoding="utf-8")
    hub_services(course, python=sys.executable, lecturer="prof")  # makes the grader account, as the hub does
    grader = pwd.getpwnam(FORMGRADER_USER)
    planted = course / "nbgrader_config.json"
    planted.unlink(missing_ok=True)
    planted.write_text('{"Execute": {"timeout": 7}, "Autograde": {"autograde_preprocessors": '
                       '["nbgrader.preprocessors.Execute"]}}', encoding="utf-8")
    os.chown(planted, grader.pw_uid, grader.pw_gid)
    hub_services(course, python=sys.executable, lecturer="prof")  # the hub starts again
    st = os.lstat(planted)
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o644)
    probe = ("from nbgrader.apps import NbGraderApp; a = NbGraderApp(); a.load_config_file(); "
             "print(a.config.Execute.timeout, 'Autograde' in a.config)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=course, capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["120", "False"], r.stdout + r.stderr


def test_the_course_config_gives_ngshares_classes_only_options_they_have(tmp_path, monkeypatch):
    """The course's nbgrader_config.py names the file exchange's folder (c.Exchange.root) for
    nbgrader without the hub; with the hub's block the exchange is ngshare's, which has no such
    option, and every collect printed "Config option `root` not recognized by `ExchangeCollect`"."""
    pytest.importorskip("nbgrader")
    from traitlets.config.loader import PyFileConfigLoader

    from decodelab.classroom import exchange, exchange_plugin
    from decodelab.classroom.assignments import write_course

    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "x")  # lecturer_side reads state/ otherwise
    write_course(tmp_path)
    with open(tmp_path / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(exchange.course_config_block(100.0))
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    for cls in (exchange_plugin.ExchangeCollect, exchange_plugin.ExchangeReleaseAssignment):
        for section in ("Exchange", cls.__name__):
            unknown = set(cfg[section]) - set(cls.class_trait_names()) if section in cfg else set()
            assert not unknown, (section, cls.__name__, unknown)
