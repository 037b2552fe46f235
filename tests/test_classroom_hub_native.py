"""Class mode on the real JupyterHub: NativeAuthenticator (the pinned 1.3 with JupyterHub 6.1),
sign-up approved by the lecturer, without a roster (with one: tests/test_classroom_exchange.py).

One hub, over HTTP with the hub's own forms, without a roster, on the students' Python of
:func:`hubkit.student_python` (one an unprivileged user can run), as a lecturer following
lecturer/classroom.md would: the lecturer logs in and approves a student, who logs in and whose
server spawns as a real system user the hub creates (removed again after the test; root only); the
case variants of a name are one account, a name no system user may have (Hangul, NFC or NFD) is refused at sign-up and at spawn, and a name in the lecturer's URLs in any spelling is never HTTP 500; every socket of the hub's
processes listens on 127.0.0.1 only. Sign-up with a roster is tested on the class-mode hub of
tests/test_classroom_exchange.py (``test_signup_roster_and_lecturer_approval``), which has one.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import unicodedata
from urllib.parse import quote, unquote

import psutil
import pytest

import hubkit

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_hub_native")]

LECTURER_PW = "lecturer-pw-7f3a9c2e"
STUDENT_PW = "student-pw-19c0b7d4"
# Logging in spawns the user's server (JupyterHub's default), and class mode makes each a system
# user of this machine: every name carries this run's suffix, and the fixtures remove those users.
SUFFIX = secrets.token_hex(3)
PROF = f"prof{SUFFIX}"


# ---------------------------------------------------------------- without a roster


STUDENT = f"dlt{SUFFIX}"  # a real system user on this machine while the test runs
HANGUL = f"김민지{SUFFIX}"
MINJI = f"minji{SUFFIX}"


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
    hubkit.remove_users([PROF, STUDENT, MINJI, MALLORY, SYSTEM, SPY, TARGET])


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
    prof, _ = hubkit.sign_up(open_hub, PROF, LECTURER_PW)
    prof.login(LECTURER_PW, spawn=False)
    assert prof.logged_in, open_hub.log_text()[-2000:]
    assert prof.client.get("/hub/admin").status_code == 200

    student, text = hubkit.sign_up(open_hub, STUDENT, STUDENT_PW)
    assert "has been sent to the admin" in text
    student.login(STUDENT_PW)
    assert not student.logged_in  # not approved yet
    assert STUDENT in prof.client.get("/hub/authorize").text
    _approve(prof, STUDENT)
    student = hubkit.Student(open_hub, STUDENT)
    student.login(STUDENT_PW)
    assert student.logged_in
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


def test_one_spelling_per_name_and_only_names_a_system_user_can_have(open_hub):
    """Case variants of a name are one account. A Hangul name, NFC or NFD (macOS and some input
    methods send NFD), is refused at sign-up in Korean: it would be a system user's name (an approved
    김민지 got /home/김민지). A name in the lecturer's URLs, in any spelling, finds the account or is
    HTTP 404 (an NFD name was HTTP 500)."""
    nfd = unicodedata.normalize("NFD", HANGUL)
    assert nfd != HANGUL and unicodedata.normalize("NFC", nfd) == HANGUL
    prof = _lecturer(open_hub)

    _, text = hubkit.sign_up(open_hub, MINJI.capitalize(), STUDENT_PW)  # stored as minji...
    assert "has been sent to the admin" in text
    _, text = hubkit.sign_up(open_hub, MINJI.upper(), STUDENT_PW + "x")
    assert "already in use" in text
    for spelling in (HANGUL, nfd, f"_{MINJI}"):
        _, text = hubkit.sign_up(open_hub, spelling, STUDENT_PW)
        assert "쓸 수 없는 사용자 이름" in text and "영어 소문자로 시작" in text, text[-800:]
    for page in ("authorize", "discard", "change-password"):
        for spelling in (HANGUL, nfd, f"nobody{SUFFIX}"):
            r = prof.client.get(f"/hub/{page}/{quote(spelling)}")
            assert r.status_code == 404, (page, spelling, r.status_code)
    r = prof.client.get(f"/hub/authorize/{quote(MINJI.upper())}")  # approves minji...
    assert r.status_code == 200, r.status_code
    for spelling in (MINJI, MINJI.upper(), MINJI.capitalize()):
        s = hubkit.Student(open_hub, spelling)
        s.login(STUDENT_PW, spawn=False)
        assert s.logged_in, spelling
        assert s.hub_api("GET", "/user").json()["name"] == MINJI
    names = [u["name"] for u in prof.hub_api("GET", "/users").json()]
    assert names.count(MINJI) == 1 and not [n for n in names if unicodedata.normalize("NFC", n) in (HANGUL, nfd)]
    # and one line for it on the lecturer's approval page, none for the refused names
    links = [unquote(line) for line in prof.client.get("/hub/authorize").text.splitlines() if "authorize/" in line]
    assert sum(MINJI in line for line in links) == 1, links
    assert not any(HANGUL in unicodedata.normalize("NFC", line) for line in links), links


def test_a_name_no_system_user_may_have_gets_no_system_user():
    """Whatever let such a name in (an authenticator from the LMS, an older hub's approval), the
    spawn refuses it in Korean before ``useradd``: no /home/김민지."""
    import pwd
    import types

    from decodelab.classroom import hub

    for name in (HANGUL, unicodedata.normalize("NFD", HANGUL), f"_x{SUFFIX}", f"Ab{SUFFIX}"):
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name, admin=False), environment={},
                                        log=types.SimpleNamespace(info=print))
        with pytest.raises(RuntimeError, match="쓸 수 없는 사용자 이름"):
            hub.pre_spawn_hook(hubkit.REPO / "notebooks", system_users=True)(spawner)
        with pytest.raises(KeyError):
            pwd.getpwnam(name)
        assert not os.path.exists(f"/home/{name}")


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


# ---------------------------------------------------------------- what a student plants in their home

MALLORY = f"mal{SUFFIX}"  # a real system user while the test runs
SYSTEM = f"dls{SUFFIX}"  # a system account of the machine (uid below UID_MIN) that a student signs up as


def _lecturer(hub):
    """The lecturer, logged in (signed up first when this test runs alone); no server of theirs
    is started (approving needs only the hub's pages)."""
    prof = hubkit.Student(hub, PROF)
    prof.login(LECTURER_PW, spawn=False)
    if not prof.logged_in:
        prof, _ = hubkit.sign_up(hub, PROF, LECTURER_PW)
        prof.login(LECTURER_PW, spawn=False)
    assert prof.logged_in, hub.log_text()[-2000:]
    return prof


def _approved(hub, prof, name: str):
    s, _ = hubkit.sign_up(hub, name, STUDENT_PW)
    _approve(prof, name)
    s.login(STUDENT_PW)
    assert s.logged_in, hub.log_text()[-2000:]
    return s


def _running(s) -> bool:
    return bool((s.hub_api("GET", f"/users/{s.name}").json().get("servers") or {}).get(""))


def _stop(s) -> None:
    s.hub_api("DELETE", f"/users/{s.name}/server")
    for _ in range(120):
        if not _running(s):
            return
        time.sleep(0.5)
    raise AssertionError(f"{s.name}'s server did not stop")


def test_links_a_student_plants_in_their_home_never_lead_the_hub_outside_it(open_hub):
    """The hub (root) prepares the home before every spawn: the notebooks it lacks and
    ~/.jupyter/nbgrader_config.py. A student replaces ~/.jupyter by a link to a folder of root's and
    a missing course notebook by a dangling link into that folder, then restarts their server.
    Root followed both: it wrote the config into root's folder and gave it (and the folder) to the
    student, so a link to the course folder gave them its nbgrader_config.py (run by root's
    nbgrader), its gradebook and exam bank. Now the home is written as the student: nothing lands
    outside it, the server still starts, and ~/.jupyter is a folder of the student's again."""
    import pwd

    prof = _lecturer(open_hub)
    s = _approved(open_hub, prof, MALLORY)
    if not _running(s):
        assert s.spawn().status_code in (201, 202), open_hub.log_text()[-3000:]
    s.wait_ready()
    decoy = hubkit.open_tmp("decoy") / "roots"
    decoy.mkdir(mode=0o755)
    token = s.token()
    kernel = hubkit.start_kernel(open_hub, MALLORY, token)
    plant = f"""
import os, shutil
home = os.path.expanduser("~")
shutil.rmtree(os.path.join(home, ".jupyter"))
os.symlink({str(decoy)!r}, os.path.join(home, ".jupyter"))
os.remove(os.path.join(home, "02_prefill_vs_decode.ipynb"))
os.symlink({str(decoy / "planted.ipynb")!r}, os.path.join(home, "02_prefill_vs_decode.ipynb"))
print("planted")
"""
    out = hubkit.run_code(open_hub, MALLORY, token, kernel, plant)
    assert out["status"] == "ok" and "planted" in out["stdout"], out
    _stop(s)
    assert s.spawn().status_code in (201, 202), open_hub.log_text()[-3000:]
    s.wait_ready()
    st = decoy.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o755), "the hub gave root's folder to the student"
    assert sorted(p.name for p in decoy.iterdir()) == [], "the hub wrote into root's folder through the student's link"
    pw = pwd.getpwnam(MALLORY)
    conf = os.path.join(pw.pw_dir, ".jupyter")
    assert not os.path.islink(conf) and os.stat(conf).st_uid == pw.pw_uid
    assert os.stat(os.path.join(conf, "nbgrader_config.py")).st_uid == pw.pw_uid


def test_a_student_named_like_a_system_account_never_gets_it(open_hub):
    """Without a roster a student picks the name; the lecturer approves what looks like a name.
    An account of that name already on the machine (``sync`` and ``proxy`` have the home /bin,
    ``backup`` /var/backups) was used as it is: the student's server ran as that system account and
    the hub made its home the student's (chown, mode 0700; /bin is /usr/bin). Now sign-up refuses the
    name in Korean (nothing for the lecturer to approve, no login), and a server for it (a name that
    got in another way: an older hub's approval, an LMS) is refused before the account's home is touched."""
    import types

    from decodelab.classroom import hub

    home = hubkit.open_tmp("syshome") / "home"
    home.mkdir(mode=0o755)
    subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", str(home), "--shell", "/usr/sbin/nologin",
                    SYSTEM], check=True, capture_output=True)
    import pwd

    assert pwd.getpwnam(SYSTEM).pw_uid < 1000
    prof = _lecturer(open_hub)
    s, text = hubkit.sign_up(open_hub, SYSTEM, STUDENT_PW)
    assert "이 서버의 시스템 계정 이름이라" in text, text[-800:]
    assert prof.client.get(f"/hub/authorize/{SYSTEM}").status_code == 404
    s.login(STUDENT_PW)
    assert not s.logged_in
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=SYSTEM, admin=False), environment={},
                                    log=types.SimpleNamespace(info=print))
    with pytest.raises(RuntimeError, match="시스템 계정 이름이라 학생 서버를 띄우지 않습니다"):
        hub.pre_spawn_hook(hubkit.REPO / "notebooks", system_users=True)(spawner)
    st = home.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o755), "the hub gave the system account's home to the student"
    assert not any(home.iterdir())


SPY, TARGET = f"spy{SUFFIX}", f"tgt{SUFFIX}"  # real system users while the test runs

LISTEN = """
import json, threading, time, zmq
ports = []
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    f = line.split()
    if f[3] == "0A" and int(f[7]) == TARGET_UID:  # a listening socket of the other student's processes
        ports.append(int(f[1].split(":")[1], 16))
ctx = zmq.Context()
poller = zmq.Poller()
for port in ports:
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    s.setsockopt(zmq.LINGER, 0)
    s.connect(f"tcp://127.0.0.1:{port}")
    poller.register(s, zmq.POLLIN)
heard = []
STOP = threading.Event()  # set once the other student has printed every mark (at most 120 s)
def listen():
    end = time.time() + 120
    while time.time() < end and not STOP.is_set() and not any(b"MARK-" in m for m in heard):
        for s, _ in poller.poll(250):
            heard.extend(s.recv_multipart())
LISTENER = threading.Thread(target=listen)
LISTENER.start()
print(json.dumps(ports))
"""


def test_another_student_cannot_listen_to_a_students_kernel(open_hub):
    """Jupyter's kernels listened on TCP ports of 127.0.0.1, and their output channel (iopub: each
    cell's code, its output, the widgets' values) is a ZeroMQ PUB socket any local process can
    subscribe to without the kernel's key. So one student, from their own kernel, could follow a
    classmate's kernel during an exam. Now the kernels use Unix sockets in the student's home."""
    import pwd

    prof = _lecturer(open_hub)
    students, seats = {}, {}
    for name in (SPY, TARGET):  # both servers start together
        students[name] = s = _approved(open_hub, prof, name)
        if not _running(s):
            assert s.spawn().status_code in (201, 202), open_hub.log_text()[-3000:]
    for name, s in students.items():
        s.wait_ready()
        token = s.token()
        seats[name] = (token, hubkit.start_kernel(open_hub, name, token))
    spy_token, spy_kernel = seats[SPY]
    target_token, target_kernel = seats[TARGET]
    assert hubkit.run_code(open_hub, TARGET, target_token, target_kernel, "1")["status"] == "ok"  # its sockets are up
    out = hubkit.run_code(open_hub, SPY, spy_token, spy_kernel, f"TARGET_UID = {pwd.getpwnam(TARGET).pw_uid}\n" + LISTEN)
    assert out["status"] == "ok", out
    assert json.loads(out["stdout"].strip().splitlines()[-1]), "no listening socket of the other student found"
    mark = f"MARK-{secrets.token_hex(4)}"
    for _ in range(6):  # while the listener listens (the subscriptions take a moment to join)
        out = hubkit.run_code(open_hub, TARGET, target_token, target_kernel, f"답 = {{'02-x-step-time': '4.0712 ms'}}; print({mark!r})")
        assert out["status"] == "ok" and mark in out["stdout"], out
        time.sleep(1)
    out = hubkit.run_code(open_hub, SPY, spy_token, spy_kernel,
                          "STOP.set()\nLISTENER.join()\nprint(json.dumps([m.decode('utf-8', 'replace') for m in heard if b'MARK-' in m]))")
    assert out["status"] == "ok", out
    heard = json.loads(out["stdout"].strip().splitlines()[-1])
    assert not [m for m in heard if mark in m], f"{SPY} heard {TARGET}'s kernel: {heard[:2]}"
