"""The class poll (decodelab/classroom/polls.py) on a real JupyterHub on loopback, demo mode, with
real system users (the students' servers run as ``decodelab-demo``; the hub as root). One hub for
the module; the tests run in order and build on each other:

1. three students commit a prediction from their own kernels (``ex.PredictView`` -> commit, the
   code a notebook runs); the lecturer's view (the service's API with the lecturer's token) shows
   exactly those three, under the names the hub gave the tokens, a kernel's own claim
   (``JUPYTERHUB_USER=bob`` in Alice's kernel) changing nothing;
2. attacks that must fail: posting for another student, reading the class's or another's answers,
   closing/resetting/revealing an item, no token, a token in the URL, a bad token, a token
   without the poll's scope, the browser cookie;
3. the lecturer's widget in Chromium (the lecturer's own notebook on the hub): the count and the
   histogram of the three, names only after ticking 이름 보기, a new answer arriving live, 마감
   closes the item (a later post is refused), the lecturer's own reveal shows the measured value
   (screenshot ``artifacts/screenshots/class-poll.png``);
4. load: 200 simulated students (hub users with their own tokens) post at once, twice, through
   the hub's auth, with the students' client code: none lost, the second answer kept; p50/p99
   latency printed (``-s``) and in ``$DECODELAB_POLL_LOAD_JSON`` if set;
5. the hub restarts: every answer and the item states are still there; the database is root's,
   mode 0600, and the service listened on 127.0.0.1 only.

Also: ``decodelab classroom init`` registers the service in class mode too.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import hubkit
from browserkit import CHROMIUM, CHROMIUM_ARGS, JS_OPEN, SCREENSHOTS
from decodelab.assess.exercises import classpoll
from decodelab.classroom.polls import LECTURER_CACHE_S, SERVICE

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_polls")]

STUDENTS, LECTURER, PASSWORD, ADMIN_PASSWORD = (hubkit.DEMO_STUDENTS, hubkit.LECTURER, hubkit.DEMO_PASSWORD,
                                                hubkit.ADMIN_PASSWORD)
ITEM = "03-predict-speedup-20x"  # number, unit 배
LOAD_ITEM = "01-predict-kv-step"  # number
PREDICTIONS = {"alice": "2", "bob": "20", "carol": "3.5"}
N_LOAD = 200
STATE: dict = {}  # what the earlier tests leave for the later ones (same module, run in order)


@pytest.fixture(scope="module")
def hub():
    missing = hubkit.missing_parts()
    if missing:
        hubkit.unavailable("classroom poll test", "missing: " + ", ".join(missing))
    if os.geteuid() != 0:
        hubkit.unavailable("classroom poll test", "the demo hub runs as root")
    course = hubkit.open_tmp("polls") / "course"
    hubkit.init_course(course, STUDENTS, lecturer=LECTURER)
    env = {"DECODELAB_POLLS_PORT": str(hubkit.free_port())}
    # window.jupyterapp for the browser part (replaces the ipc transport, whose socket paths under the
    # demo homes are too long; as tests/test_classroom_hub.py does)
    args = ["--Spawner.args=--LabApp.expose_app_in_browser=True"]
    h = hubkit.start_hub(course, PASSWORD, ADMIN_PASSWORD, extra_args=args, env_extra=env)
    STATE["start"] = (course, env, args)
    holder = {"hub": h}
    yield holder
    holder["hub"].stop()


def _poll_url(hub) -> str:
    return f"http://127.0.0.1:{STATE['start'][1]['DECODELAB_POLLS_PORT']}/services/{SERVICE}"


def _api(hub, token: str | None, method: str, path: str, **kw):
    import httpx

    headers = {**({"Authorization": f"token {token}"} if token else {}), **kw.pop("headers", {})}
    return httpx.request(method, f"{_poll_url(hub)}/api/{path}", headers=headers, timeout=60, **kw)


@pytest.fixture(scope="module")
def people(hub):
    """The three students logged in with their servers running, and the lecturer logged in (no
    server yet); an API token of each (the hub's own, with the owner's permissions)."""
    h = hub["hub"]
    out = hubkit.log_in_and_spawn(h, STUDENTS, PASSWORD)
    lecturer = hubkit.Student(h, LECTURER)
    lecturer.login(ADMIN_PASSWORD, spawn=False)
    assert lecturer.logged_in
    out[LECTURER] = lecturer
    tokens = {name: s.token() for name, s in out.items()}
    return {"session": out, "token": tokens}


COMMIT = """
import json, os
{before}
from decodelab.assess import exercises as ex
v = ex.PredictView({item!r})
v.input.value = {value!r}
v.commit()
v.sending.join(30)
print(json.dumps({{"feedback": v.feedback.value, "alive": v.sending.is_alive(),
                  "saved": ex.PredictView({item!r}).store.get({item!r})["response"]}}))
"""


def _commit_in_kernel(h, name: str, token: str, value: str, before: str = "") -> dict:
    try:
        kernel = hubkit.start_kernel(h, name, token)
    except Exception as e:  # noqa: BLE001 - the server's own log says why
        raise AssertionError(f"{name}'s kernel did not start: {e}\n{h.log_text()[-4000:]}") from None
    try:
        out = hubkit.run_code(h, name, token, kernel, COMMIT.format(item=ITEM, value=value, before=before))
    finally:
        hubkit.server_api(h, name, token, "DELETE", f"/kernels/{kernel}")
    assert out["status"] == "ok", out
    return json.loads(out["stdout"].strip().splitlines()[-1])


def test_three_students_commit_from_their_kernels_and_the_lecturer_sees_exactly_those(hub, people):
    h, tokens = hub["hub"], people["token"]
    for name, value in PREDICTIONS.items():
        # Alice's kernel claims to be Bob: the name comes from the hub's answer about her token
        before = 'os.environ["JUPYTERHUB_USER"] = "bob"' if name == "alice" else ""
        got = _commit_in_kernel(h, name, tokens[name], value, before)
        assert got["saved"] == float(value) and not got["alive"], got  # saved locally, the send is done
        assert "예측을 저장했습니다" in got["feedback"] and "수업 집계" not in got["feedback"], got  # no failure note
    view = _api(h, tokens[LECTURER], "GET", f"items/{ITEM}?names=1")
    assert view.status_code == 200, view.text
    data = view.json()
    assert data["count"] == 3 and data["state"] == "open" and data["revealed"] is None
    assert data["values"] == [2.0, 3.5, 20.0]
    assert data["names"] == {"alice": 2.0, "bob": 20.0, "carol": 3.5}
    assert "names" not in _api(h, tokens[LECTURER], "GET", f"items/{ITEM}").json()  # names only when asked
    # each student reads back their own answer, and only theirs
    for name, value in PREDICTIONS.items():
        mine = _api(h, tokens[name], "GET", f"answers/{ITEM}").json()
        assert (mine["student"], mine["value"]) == (name, float(value))


def test_attacks_on_the_poll_fail(hub, people):
    h, tokens, sessions = hub["hub"], people["token"], people["session"]
    alice = tokens["alice"]
    expected = {"alice": 2.0, "bob": 20.0, "carol": 3.5}

    def answers() -> dict:
        return _api(h, tokens[LECTURER], "GET", f"items/{ITEM}?names=1").json()["names"]

    # posting for another student: a name in the body is refused, not used
    for body in ({"value": 99, "student": "bob"}, {"value": 99, "user": "bob"}, {"value": 99, "name": "bob"}):
        r = _api(h, alice, "POST", f"answers/{ITEM}", json=body)
        assert r.status_code == 400 and "토큰" in r.json()["error"], r.text
    # nor by a header a proxy might set
    r = _api(h, alice, "POST", f"answers/{ITEM}", json={"value": 99},
             headers={"X-Forwarded-User": "bob", "REMOTE_USER": "bob"})
    assert r.status_code == 200 and r.json()["student"] == "alice"
    assert answers() == {**expected, "alice": 99.0}
    assert _api(h, alice, "POST", f"answers/{ITEM}", json={"value": 2}).status_code == 200
    assert answers() == expected
    # reading the class's answers, or one classmate's
    for path in (f"items/{ITEM}", f"items/{ITEM}?names=1", "items"):
        r = _api(h, alice, "GET", path)
        assert r.status_code == 403 and "bob" not in r.text and "20.0" not in r.text, (path, r.status_code, r.text)
    assert _api(h, alice, "GET", f"answers/{ITEM}/bob").status_code == 404
    mine = _api(h, alice, "GET", f"answers/{ITEM}?student=bob").json()  # the query is ignored: her own
    assert (mine["student"], mine["value"]) == ("alice", 2.0)
    # steering the item: reset, close, open, reveal
    for action, body in (("reset", None), ("close", None), ("open", None), ("reveal", {"value": 20})):
        r = _api(h, alice, "POST", f"items/{ITEM}/{action}", json=body)
        assert r.status_code == 403 and "강의자" in r.json()["error"], (action, r.text)
    assert answers() == expected
    assert _api(h, tokens[LECTURER], "GET", f"items/{ITEM}").json()["state"] == "open"
    # no token, a token in the URL (never accepted), a made-up token
    assert _api(h, None, "POST", f"answers/{ITEM}", json={"value": 1}).status_code == 401
    assert _api(h, None, "GET", f"items/{ITEM}?token={tokens[LECTURER]}").status_code == 401
    assert _api(h, "0" * 32, "POST", f"answers/{ITEM}", json={"value": 1}).status_code == 401
    # a token of Alice's without the poll's scope: the hub names her, the service refuses her
    r = sessions["alice"].hub_api("POST", "/users/alice/tokens", json={"scopes": ["read:users:name!user=alice"]})
    assert r.status_code == 201, r.text
    assert _api(h, r.json()["token"], "POST", f"answers/{ITEM}", json={"value": 1}).status_code == 403
    # the browser's hub cookie (through the proxy) is no credential: a page on another site cannot post
    r = sessions["alice"].client.post(f"/services/{SERVICE}/api/answers/{ITEM}", json={"value": 1})
    assert r.status_code == 401, (r.status_code, r.text[:200])
    # a body far larger than an answer is refused before it is read (nothing stored)
    import httpx

    try:
        big = _api(h, alice, "POST", f"answers/{ITEM}", content=b'{"value": 5, "pad": "' + b"x" * 100_000 + b'"}',
                   headers={"Content-Type": "application/json"})
        assert big.status_code >= 400, big.status_code
    except httpx.TransportError:
        pass  # tornado may also just close the connection
    assert answers() == expected
    # bad values and unknown items
    assert _api(h, alice, "POST", f"answers/{ITEM}", json={"value": "2"}).status_code == 400
    assert _api(h, alice, "POST", f"answers/{ITEM}", json={"value": True}).status_code == 400
    assert _api(h, alice, "POST", "answers/02-predict-batch-tpot", json={"value": "z"}).status_code == 400
    assert _api(h, alice, "POST", "answers/01-written-decode-definition", json={"value": 1}).status_code == 404
    assert _api(h, alice, "POST", "answers/99-predict-nothing", json={"value": 1}).status_code == 404
    assert answers() == expected
    # a teaching assistant: not an admin, but in the hub group "instructors", reads the distribution
    lecturer = sessions[LECTURER]
    assert lecturer.hub_api("POST", "/users/ta1").status_code == 201
    r = lecturer.hub_api("POST", "/users/ta1/tokens", json={"note": "poll test"})
    assert r.status_code == 201, r.text
    ta = r.json()["token"]
    assert _api(h, ta, "GET", f"items/{ITEM}").status_code == 403  # not yet in the group
    assert lecturer.hub_api("POST", "/groups/instructors", json={"users": ["ta1"]}).status_code == 201
    time.sleep(LECTURER_CACHE_S + 0.5)  # the service asks the hub again after its cache time
    assert _api(h, ta, "GET", f"items/{ITEM}?names=1").json()["names"] == expected


JS_NEW_NOTEBOOK = """
async ([path, cells]) => {
  const app = window.jupyterapp;
  await app.restored;
  await app.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content: {
    nbformat: 4, nbformat_minor: 5,
    metadata: {kernelspec: {name: 'python3', display_name: 'Python 3', language: 'python'}},
    cells: cells.map(s => ({cell_type: 'code', source: s, metadata: {}, outputs: [], execution_count: null}))}});
  return true;
}
"""

JS_RUN_CELL = """
async (i) => {
  const w = window.__nb;
  w.content.activeCellIndex = i;
  w.content.deselectAll();
  await window.jupyterapp.commands.execute('notebook:run-cell');
  return i;
}
"""

#: the hub's default URL opens notebook 01 in the lecturer's lab: wait for it, then keep only our
#: notebook open (the late tab would otherwise cover it)
JS_FIRST_OPEN = """
() => Array.from(window.jupyterapp.shell.widgets('main')).some(w => w.context && w.context.path.endsWith('01_decode_phase.ipynb'))
"""
JS_CLOSE_OTHERS = """
async () => {
  const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w === window.__nb) continue;
    if (w.sessionContext) await w.sessionContext.shutdown();
    w.dispose();
  }
  app.shell.activateById(window.__nb.id);
  return Array.from(app.shell.widgets('main')).length;
}
"""



def test_the_lecturers_widget_in_chromium(hub, people):
    """The lecturer logs in in Chromium, opens a notebook of their own and runs ``class_poll``: the
    widget shows 3 answers in the histogram without names; 이름 보기 shows them; Carol's new
    answer arrives without a click; 마감 closes the item (Bob's post is then refused with 409);
    the lecturer's own reveal of the item shows the measured value."""
    sync_playwright = hubkit.sync_playwright("classroom poll test", CHROMIUM)
    h, tokens = hub["hub"], people["token"]
    cells = [f"from decodelab.classroom.polls_view import class_poll\nclass_poll({ITEM!r}, interval_s=1)",
             f"from decodelab.assess import exercises as ex\nex.reveal_record({ITEM!r}, 20.0)[0]['revealed']"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR").new_page()
        page.set_default_timeout(180_000)
        try:
            page.goto(f"{h.url}/hub/login")
            page.fill("#username_input", LECTURER)
            page.fill("#password_input", ADMIN_PASSWORD)
            page.click("#login_submit")
            page.wait_for_url(re.compile(rf"/user/{LECTURER}/lab"))
            page.wait_for_function("() => window.jupyterapp !== undefined")
            page.wait_for_function(JS_FIRST_OPEN)
            page.evaluate(JS_NEW_NOTEBOOK, ["poll.ipynb", cells])
            assert page.evaluate(JS_OPEN, "poll.ipynb") == "python3"
            assert page.evaluate(JS_CLOSE_OTHERS) == 1
            page.evaluate(JS_RUN_CELL, 0)
            box = page.locator(".decodelab-poll")
            box.wait_for(state="visible")
            status = box.locator(".decodelab-poll-status")
            page.wait_for_selector('.decodelab-poll-status[data-count="3"]')
            assert status.get_attribute("data-state") == "open"
            assert "답한 학생 3명" in status.inner_text() and "받는 중" in status.inner_text()
            bins = box.locator(".decodelab-poll-bin")
            assert sum(int(bins.nth(i).get_attribute("data-count")) for i in range(bins.count())) == 3
            text = box.inner_text()
            assert not any(name in text for name in STUDENTS) and "실제 값" not in text
            box.get_by_role("checkbox", name="이름 보기").check()
            names = box.locator(".decodelab-poll-names")
            names.wait_for(state="visible")
            assert [r.split("\t")[0].split(" ")[0] for r in names.inner_text().splitlines()] == STUDENTS
            assert "20 배" in names.inner_text() and "3.5 배" in names.inner_text()
            # live: Carol changes her mind; the widget shows it with no click
            r = classpoll.send_prediction(ITEM, 200.0, endpoint=(_poll_url(h), tokens["carol"]))
            assert r.ok, r
            page.wait_for_function("() => document.querySelector('.decodelab-poll-names').innerText.includes('200 배')")
            # 마감: the item closes; a student's post is refused
            box.get_by_role("button", name="마감", exact=True).click()
            page.wait_for_selector('.decodelab-poll-status[data-state="closed"]')
            r = classpoll.send_prediction(ITEM, 1.0, endpoint=(_poll_url(h), tokens["bob"]))
            assert r.status == 409 and classpoll.failure_note(r, None).startswith("강의자가 이 질문의 집계를 마감")
            assert "실제 값" not in box.inner_text()
            # the lecturer's own reveal in this kernel: the widget sends it and shows it
            page.evaluate(JS_RUN_CELL, 1)
            box.locator(".decodelab-poll-revealed").wait_for(state="visible")
            assert "실제 값: 20 배" in box.inner_text()
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "class-poll.png"))  # for a person to look at
            page.evaluate("() => window.__nb.sessionContext.shutdown()")
        finally:
            browser.close()
    data = _api(h, tokens[LECTURER], "GET", f"items/{ITEM}?names=1").json()
    assert data["state"] == "closed" and data["revealed"] == 20.0
    assert data["names"] == {"alice": 2.0, "bob": 20.0, "carol": 200.0}
    STATE[ITEM] = data["names"]


def test_200_students_posting_at_once_lose_nothing(hub, people):
    """200 hub users, each with their own token, post through the hub's auth at the same moment
    (the students' client code, :func:`classpoll.send_prediction`), then all again with a new
    value: every one is stored, the second value of each. Bounded: 200 users, 400 requests, a 60 s
    timeout each, on loopback."""
    h, lecturer = hub["hub"], people["session"][LECTURER]
    names = [f"sim{i:03d}" for i in range(N_LOAD)]
    r = lecturer.hub_api("POST", "/users", json={"usernames": names})
    assert r.status_code == 201, r.text[:500]
    tokens = {}
    for name in names:
        r = lecturer.hub_api("POST", f"/users/{name}/tokens", json={"note": "poll load test", "expires_in": 3600})
        assert r.status_code == 201, r.text
        tokens[name] = r.json()["token"]
    url = _poll_url(h)

    def post(args):
        name, value = args
        t0 = time.perf_counter()
        res = classpoll.send_prediction(LOAD_ITEM, value, endpoint=(url, tokens[name]), timeout_s=60)
        return name, res, time.perf_counter() - t0

    rounds = []
    for round_no in (1, 2):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(N_LOAD) as pool:
            results = list(pool.map(post, [(n, float(i) + round_no / 10) for i, n in enumerate(names)]))
        wall = time.perf_counter() - t0
        bad = [(n, res) for n, res, _ in results if not (res and res.ok and res.body["student"] == n)]
        assert bad == [], bad[:5]
        lat = sorted(dt for _, _, dt in results)
        rounds.append({"round": round_no, "requests": len(lat), "wall_s": round(wall, 3),
                       "p50_ms": round(1000 * lat[len(lat) // 2], 1),
                       "p99_ms": round(1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
                       "max_ms": round(1000 * lat[-1], 1)})
    data = _api(h, people["token"][LECTURER], "GET", f"items/{LOAD_ITEM}?names=1").json()
    assert data["count"] == N_LOAD
    assert data["names"] == {n: float(i) + 0.2 for i, n in enumerate(names)}  # the second answer of each
    report = {"students": N_LOAD, "rounds": rounds, "cpu_count": os.cpu_count()}
    print("\n[poll load]", json.dumps(report))
    if os.environ.get("DECODELAB_POLL_LOAD_JSON"):
        Path(os.environ["DECODELAB_POLL_LOAD_JSON"]).write_text(json.dumps(report, indent=1), encoding="utf-8")
    STATE[LOAD_ITEM] = data["names"]


def test_the_answers_survive_a_hub_restart(hub):
    import psutil

    h = hub["hub"]
    course, env, args = STATE["start"]
    db = course / "state" / "polls.sqlite"
    st = db.stat()
    assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o600  # root's, the hub's user only
    # the service listens on loopback only
    service = [p for p in psutil.Process(h.proc.pid).children(recursive=True)
               if "decodelab.classroom.polls" in " ".join(p.cmdline())]
    assert len(service) == 1
    listening = {c.laddr.ip for c in service[0].net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}
    assert listening == {"127.0.0.1"}, listening
    h.stop()
    assert not service[0].is_running()
    h2 = hubkit.start_hub(course, PASSWORD, ADMIN_PASSWORD, extra_args=args, env_extra=env)
    hub["hub"] = h2  # the fixture stops this one
    lecturer = hubkit.Student(h2, LECTURER)
    lecturer.login(ADMIN_PASSWORD, spawn=False)
    token = lecturer.token()
    deadline = time.monotonic() + 60
    while True:  # the service starts with the hub, maybe a moment later
        try:
            r = _api(h2, token, "GET", f"items/{ITEM}?names=1")
            break
        except Exception:  # noqa: BLE001 - not listening yet
            assert time.monotonic() < deadline, h2.log_text()[-3000:]
            time.sleep(0.5)
    assert r.status_code == 200, r.text
    assert r.json()["names"] == STATE[ITEM] and r.json()["state"] == "closed" and r.json()["revealed"] == 20.0
    assert _api(h2, token, "GET", f"items/{LOAD_ITEM}?names=1").json()["names"] == STATE[LOAD_ITEM]
    items = {i["item"]: i["count"] for i in _api(h2, token, "GET", "items").json()["items"]}
    assert items == {ITEM: 3, LOAD_ITEM: N_LOAD}


def test_class_mode_registers_the_poll_too(tmp_path):
    """``init`` without --demo-users (class mode) registers the same service, roles and kernel
    environment."""
    from jupyterhub.app import JupyterHub

    from decodelab.classroom.cli import main as classroom

    course = tmp_path / "course"
    assert classroom(["init", str(course), "--python", hubkit.student_python()]) == 0
    app = JupyterHub()
    app.load_config_file(str(course / "jupyterhub_config.py"))
    cfg = app.config
    (svc,) = [s for s in cfg.JupyterHub.services if s["name"] == SERVICE]
    assert svc["url"].startswith("http://127.0.0.1:") and svc["command"][1:3] == ["-m", "decodelab.classroom.polls"]
    assert svc["command"][3] == f"--db={course.resolve() / 'state' / 'polls.sqlite'}"
    roles = {r["name"]: r for r in cfg.JupyterHub.load_roles}
    assert roles[SERVICE]["scopes"] == ["read:users:name", "read:users:groups"]
    assert f"access:services!service={SERVICE}" in roles["user"]["scopes"] and "self" in roles["user"]["scopes"]
    assert f"access:services!service={SERVICE}" in cfg.Spawner.server_token_scopes
    assert cfg.Spawner.environment["DECODELAB_POLLS_URL"].startswith("http://127.0.0.1:")
    assert cfg.JupyterHub.authenticator_class == "decodelab.classroom.auth.NativeAuthenticator"
