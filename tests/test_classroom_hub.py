"""The course on a real JupyterHub (real configurable-http-proxy) on loopback, demo mode.

One hub for the whole module. The students' environment is what the single-user image gets: the
image's install steps (``classroom/install-singleuser.sh``, run by ``classroom/Dockerfile``) run
into a plain virtualenv on a freshly built wheel, offline; ``decodelab classroom init
--demo-users alice,bob,carol --python <that venv>`` then ``decodelab classroom hub``. Checked:

- three students log in over HTTP with the login form, their servers spawn, and each server's
  contents API lists that student's own copies of notebooks 01-07;
- the hub runs as root (as lecturer/classroom.md starts it), yet a demo student's kernel runs as
  the unprivileged ``decodelab-demo``, cannot read the hub's ``/proc/<pid>/environ`` nor the
  course folder, and no process environment or command line it can read holds a password;
- their kernels run the wheel's decodelab (not this checkout), with the login as
  ``JUPYTERHUB_USER``, answers folder in their own home, and no hub password in the environment;
  nbgrader in a student's server finds the course id and the exchange folder the hub wrote;
  no file of the graded exam bank (``classroom/exam/``) is in the wheel;
- Alice, in headless Chromium (Playwright), opens notebook 01, runs its quiz cell and answers a
  question through the widget: the answer lands in ``<demo homes>/alice/.decodelab/answers`` under her
  hub name, in the choice order of her hub name;
- Alice's cookie and token do not reach Bob's server, files or hub model; the admin page is the
  lecturer's only; a wrong password and a name outside the list are refused; the demo passwords
  appear in no log.

Needs node + configurable-http-proxy (``bash scripts/install_hub.sh``) and, for the browser part,
``/usr/bin/chromium`` + playwright (``scripts/install_browser.sh``); without them the tests skip
(under CI, ``CI=true``, they fail instead).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import zipfile
from pathlib import Path

import httpx
import pytest

import hubkit
from browserkit import CHROMIUM, CHROMIUM_ARGS, JS_OPEN
from decodelab.classroom.hub import demo_homes
from decodelab.assess.quiz.shuffle import choice_order

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_hub")]

STUDENTS, LECTURER, PASSWORD, ADMIN_PASSWORD = (hubkit.DEMO_STUDENTS, hubkit.LECTURER, hubkit.DEMO_PASSWORD,
                                                hubkit.ADMIN_PASSWORD)
NOTEBOOKS = [f"{nb.name}" for nb in sorted((hubkit.REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))]
QID = "01-decode-definition"


@pytest.fixture(scope="module")
def singleuser(tmp_path_factory):
    """The students' environment, built by the single-user image's install steps."""
    if hubkit.shutil.which("bash") is None:
        hubkit.unavailable("classroom hub test", "bash is not available")
    return hubkit.singleuser_env(tmp_path_factory.mktemp("singleuser"))


@pytest.fixture(scope="module")
def hub(tmp_path_factory, singleuser):
    missing = hubkit.missing_parts()
    if missing:
        hubkit.unavailable("classroom hub test", "missing: " + ", ".join(missing))
    course = hubkit.open_tmp("classroom") / "course"  # formgrader's account must reach it
    hubkit.init_course(course, STUDENTS, lecturer=LECTURER, args=["--python", str(singleuser.python)])
    # window.jupyterapp for the browser part (as tests/browserkit.py does for a plain lab)
    h = hubkit.start_hub(course, PASSWORD, ADMIN_PASSWORD,
                         extra_args=["--Spawner.args=--LabApp.expose_app_in_browser=True"])
    yield h
    h.stop()


@pytest.fixture(scope="module")
def students(hub):
    """Each student logged in (login form over HTTP), their server spawned and ready."""
    out = hubkit.log_in_and_spawn(hub, STUDENTS, PASSWORD)
    for s in out.values():
        # as the browser does after the spawn: the server's page, through the hub's OAuth login
        r = s.client.get(f"/user/{s.name}/lab")
        assert r.status_code == 200 and r.url.path.startswith(f"/user/{s.name}/lab"), (s.name, r.status_code, r.url)
    return out


def test_each_student_gets_own_server_with_the_course_notebooks(hub, students):
    assert len(NOTEBOOKS) >= 7
    for name, s in students.items():
        r = s.client.get(f"/user/{name}/api/contents")  # cookie -> hub OAuth -> the student's server
        assert r.status_code == 200, (name, r.status_code, r.text[:300])
        listed = sorted(item["name"] for item in r.json()["content"] if item["type"] == "notebook")
        assert listed == NOTEBOOKS, (name, listed)
        home = demo_homes(hub.course) / name
        assert sorted(p.name for p in home.glob("*.ipynb")) == NOTEBOOKS
        # the student's own copy, made from the course directory's
        assert (home / NOTEBOOKS[0]).read_bytes() == (hub.course / "notebooks" / NOTEBOOKS[0]).read_bytes()


STUDENT_PROBE = """
import json, os, decodelab
from decodelab.assess.quiz.store import answers_root
from decodelab.classroom.hub import course_notebooks_dir
print(json.dumps({"module": decodelab.__file__, "notebooks": str(course_notebooks_dir()), "user": os.environ.get("JUPYTERHUB_USER"),
                  "answers": str(answers_root()), "cwd": os.getcwd(),
                  "secrets": sorted(k for k in os.environ if "PASSWORD" in k or k == "PYTHONPATH")}))
"""


NBGRADER_LIST = """
import subprocess, sys
r = subprocess.run([sys.executable, "-m", "nbgrader", "list"], capture_output=True, text=True, timeout=120)
print(f"rc={r.returncode}", r.stdout, r.stderr)
"""


def test_student_servers_run_the_wheel_with_the_login_as_identity(hub, students, singleuser):
    with zipfile.ZipFile(singleuser.wheel) as z:
        inside = {hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist() if not n.endswith("/")}
        assert not [n for n in z.namelist() if n.startswith("classroom/") or "/exam/" in n]
    bank = [p for p in (hubkit.REPO / "classroom" / "exam").rglob("*") if p.is_file()]
    assert bank and not {hashlib.sha256(p.read_bytes()).hexdigest() for p in bank} & inside
    assert sorted(p.name for p in singleuser.notebooks.glob("*.ipynb")) == NOTEBOOKS  # the image's copy
    # run from the checkout (as lecturer/classroom.md does), it still copies the wheel's notebooks
    copied = next(line for line in singleuser.log.splitlines() if "course notebooks" in line)
    assert Path(copied.split("course notebooks ")[1].split(" -> ")[0]).is_relative_to(singleuser.purelib), copied
    for name in ("alice", "bob"):
        token = students[name].token()
        kernel = hubkit.start_kernel(hub, name, token)
        out = hubkit.run_code(hub, name, token, kernel, STUDENT_PROBE)
        assert out["status"] == "ok", out
        got = json.loads(out["stdout"].strip().splitlines()[-1])
        home = demo_homes(hub.course) / name
        assert Path(got["module"]).is_relative_to(singleuser.purelib), got  # the wheel, not this checkout
        assert Path(got["notebooks"]).is_relative_to(singleuser.purelib), got
        assert (got["user"], got["answers"], got["cwd"]) == (name, str(home / ".decodelab" / "answers"), str(home))
        assert got["secrets"] == [], got  # no hub password, no PYTHONPATH of the hub
        # only the student's side of nbgrader: the Assignments tab's handlers, no formgrader or course list
        auth = {"Authorization": f"token {token}"}
        import nbgrader

        answers = {path: httpx.get(f"{hub.url}/user/{name}{path}", headers=auth, timeout=60).status_code
                   for path in ("/formgrader", "/formgraders", f"/nbgrader_version?version={nbgrader.__version__}")}
        assert list(answers.values()) == [404, 404, 200], answers
        from decodelab.classroom.hub import STUDENT_CONFIG_DIR  # root's, outside the home (disable_user_config)

        page = json.loads((STUDENT_CONFIG_DIR / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
        assert set(page["disabledExtensions"]) == {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                                                   "@jupyter/nbgrader:create-assignment"}
        if name == "alice":  # the Assignments tab's nbgrader finds the course and the exchange the hub set up
            out = hubkit.run_code(hub, name, token, kernel, NBGRADER_LIST)
            assert out["status"] == "ok" and "rc=0" in out["stdout"] and "Released assignments" in out["stdout"], out
        assert hubkit.server_api(hub, name, token, "DELETE", f"/kernels/{kernel}").status_code == 204


DEMO_USER_PROBE = """
import json, os, pwd
out = {"uid": os.getuid(), "euid": os.geteuid(), "user": pwd.getpwuid(os.getuid()).pw_name, "groups": os.getgroups()}
try:
    open(f"/proc/{HUB_PID}/environ", "rb").read()
    out["hub_environ"] = "readable"
except PermissionError:
    out["hub_environ"] = "refused"
for name, path in (("course", COURSE), ("state", COURSE + "/state")):
    try:
        os.listdir(path)
        out[name] = "readable"
    except PermissionError:
        out[name] = "refused"
# everything this student can read of every process: environments and command lines
seen, texts = 0, []
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            texts.append(open(f"/proc/{pid}/{part}", "rb").read().decode("utf-8", "replace"))
            seen += 1
        except OSError:
            pass
out["seen"] = seen
out["texts"] = texts
print(json.dumps(out))
"""


def test_demo_students_never_run_as_root_and_read_no_password(hub, students):
    """The hub runs as root with both passwords in its environment (as the guide starts it). A
    demo student's kernel is the unprivileged decodelab-demo, cannot read the hub's environment,
    the course folder or its state, and finds neither password in any process environment or
    command line it can read."""
    import pwd

    if os.geteuid() != 0:
        hubkit.unavailable("classroom hub test", "the attack needs a hub started as root")
    demo = pwd.getpwnam("decodelab-demo")
    assert demo.pw_uid != 0 and demo.pw_shell == "/usr/sbin/nologin"
    token = students["carol"].token()
    kernel = hubkit.start_kernel(hub, "carol", token)
    code = f"HUB_PID = {hub.proc.pid}\nCOURSE = {str(hub.course)!r}\n" + DEMO_USER_PROBE
    out = hubkit.run_code(hub, "carol", token, kernel, code)
    assert out["status"] == "ok", out
    got = json.loads(out["stdout"].strip().splitlines()[-1])
    assert (got["uid"], got["euid"], got["user"]) == (demo.pw_uid, demo.pw_uid, "decodelab-demo"), got
    assert 0 not in got["groups"]
    assert (got["hub_environ"], got["course"], got["state"]) == ("refused", "refused", "refused"), got
    readable = "\n".join(got["texts"])
    assert "JUPYTERHUB_USER=carol" in readable  # the probe did read environments (its own kernel's)
    assert PASSWORD not in readable and ADMIN_PASSWORD not in readable
    assert "DECODELAB_HUB_ADMIN_PASSWORD" not in readable
    # while the hub's own environment does hold them: the attack had something to find
    assert ADMIN_PASSWORD in Path(f"/proc/{hub.proc.pid}/environ").read_bytes().decode("utf-8", "replace")
    assert hubkit.server_api(hub, "carol", token, "DELETE", f"/kernels/{kernel}").status_code == 204


def test_wrong_password_is_refused(hub):
    mallory = hubkit.Student(hub, "alice")
    r = mallory.login(PASSWORD + "x")
    assert not mallory.logged_in
    assert r.url.path == "/hub/login" and "Invalid username or password" in r.text
    outsider = hubkit.Student(hub, "dave")  # not on the list: the shared password does not let him in
    outsider.login(PASSWORD)
    assert not outsider.logged_in


def test_a_student_cannot_reach_another_students_server(hub, students):
    alice = students["alice"]
    # Bob's server, files and kernels with Alice's cookie: refused by the hub's OAuth (403)
    for path in ("/user/bob/api/contents", "/user/bob/api/contents/01_decode_phase.ipynb", "/user/bob/lab"):
        r = alice.client.get(path)
        assert r.status_code == 403, (path, r.status_code, r.url)
    r = alice.client.put("/user/bob/api/contents/evil.txt", json={"type": "file", "format": "text", "content": "x"})
    assert r.status_code == 403
    assert not (demo_homes(hub.course) / "bob" / "evil.txt").exists()
    # and on the hub: Bob's model, starting/stopping his server, a token for him
    # (403 or 404: the hub does not even say whether the name exists)
    assert alice.hub_api("GET", "/users/bob").status_code in (403, 404)
    assert alice.hub_api("DELETE", "/users/bob/server").status_code in (403, 404)
    assert alice.hub_api("POST", "/users/bob/tokens", json={}).status_code in (403, 404)
    assert students["bob"].hub_api("GET", "/users/bob").json()["servers"][""]["ready"]  # still running
    # Alice's own API token does not open Bob's server either
    token = alice.token()
    assert hubkit.server_api(hub, "alice", token, "GET", "/contents").status_code == 200
    assert hubkit.server_api(hub, "bob", token, "GET", "/contents").status_code == 403


def test_admin_page_is_the_lecturers_only(hub, students):
    alice = students["alice"]
    assert alice.client.get("/hub/admin").status_code == 403
    r = alice.hub_api("GET", "/users")  # the user list: only herself, if anything
    assert r.status_code == 403 or {u["name"] for u in r.json()} <= {"alice"}, r.text[:300]
    # a student cannot log in as the lecturer with the students' password
    fake = hubkit.Student(hub, LECTURER)
    fake.login(PASSWORD)
    assert not fake.logged_in
    lecturer = hubkit.Student(hub, LECTURER)
    assert lecturer.login(ADMIN_PASSWORD).status_code == 200
    assert lecturer.client.get("/hub/admin").status_code == 200
    names = {u["name"] for u in lecturer.hub_api("GET", "/users").json()}
    assert names >= set(STUDENTS) | {LECTURER}


JS_RUN_CELL_WITH = """
async (needle) => {
  const w = window.__nb;
  const i = w.content.widgets.findIndex(c => c.model.sharedModel.getSource().includes(needle));
  if (i < 0) throw new Error('no cell with ' + needle);
  w.content.activeCellIndex = i;
  w.content.deselectAll();
  await window.jupyterapp.commands.execute('notebook:run-cell');
  return i;
}
"""




def test_quiz_answer_in_the_browser_lands_in_the_students_home(hub, students):
    """Alice logs in with the login form in Chromium, opens her notebook 01, runs its quiz cell and
    answers question 1 by clicking option "1" and 제출: the record is in her home, with her hub
    name, and option "1" is the first option in her hub name's order."""
    sync_playwright = hubkit.sync_playwright("classroom hub test", CHROMIUM)
    answers = _answers(demo_homes(hub.course) / "alice")
    assert not (answers / f"{QID}.json").exists()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR").new_page()
        page.set_default_timeout(180_000)
        try:
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", "alice")
            page.fill("#password_input", PASSWORD)
            page.click("#login_submit")
            page.wait_for_url(re.compile(r"/user/alice/lab"))
            page.wait_for_function("() => window.jupyterapp !== undefined")
            assert page.evaluate(JS_OPEN, NOTEBOOKS[0]) == "python3"
            page.evaluate(JS_RUN_CELL_WITH, 'quiz_widget("01")')
            box = page.locator(f".decodelab-quiz-{QID}")
            box.wait_for(state="visible")
            ident = page.locator(".jp-Notebook .widget-text input[disabled]").first
            assert ident.input_value() == "alice"  # the id box shows the login, locked
            box.get_by_role("button", name="1", exact=True).click()
            box.get_by_role("button", name="제출", exact=True).click()
            deadline = time.monotonic() + 60
            while not (answers / f"{QID}.json").is_file():
                assert time.monotonic() < deadline, "the answer was not saved within 60 s"
                time.sleep(0.3)
            page.evaluate("() => window.__nb.sessionContext.shutdown()")
        finally:
            browser.close()
    record = json.loads((answers / f"{QID}.json").read_text(encoding="utf-8"))
    assert record["student"] == "alice"
    assert record["response"] == choice_order(QID, "alice", ["a", "b", "c", "d"])[0]
    assert record["score"] == (1.0 if record["response"] == "c" else 0.0)
    student = json.loads((answers.parent / "student.json").read_text(encoding="utf-8"))
    assert student["shuffle_key"] == "alice"
    # nothing in the other students' homes
    for name in ("bob", "carol"):
        assert not _answers(demo_homes(hub.course) / name).exists()


def _answers(home: Path) -> Path:
    return home / ".decodelab" / "answers" / "course"


def test_demo_passwords_never_in_a_log(hub, students):
    logs = [hub.log, *hub.course.rglob("*.log")]
    for path in logs:
        text = path.read_text(errors="replace")
        assert PASSWORD not in text and ADMIN_PASSWORD not in text, path
    assert PASSWORD not in (hub.course / "jupyterhub_config.py").read_text()
    assert "데모 모드입니다" in hub.log_text()  # the demo says loudly what it is
