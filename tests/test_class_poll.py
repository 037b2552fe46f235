"""The class poll without a hub: the student's side sends nothing unless the kernel runs on the
course's hub, never loses or holds up the local answer when sending fails; the poll's database
keeps the latest answer per student, refuses answers to a closed item, and loses none of 200
concurrent writers; the lecturer's histogram bins. (The poll on a real hub:
tests/test_classroom_polls.py.)"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from decodelab.assess import exercises as ex
from decodelab.assess.exercises import classpoll
from decodelab.assess.quiz.store import AnswerStore

ITEM = "03-predict-speedup-20x"  # kind: number, unit 배
CHOICE_ITEM = "02-predict-batch-tpot"  # kind: choice a/b/c


@pytest.fixture
def answers(tmp_path, monkeypatch):
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))
    for key in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER", "JUPYTERHUB_SERVICE_PREFIX", classpoll.POLLS_URL_ENV):
        monkeypatch.delenv(key, raising=False)
    return tmp_path / "answers"


class _Recorder:
    """A loopback HTTP server that records every request and answers ``status`` with ``{}``."""

    def __init__(self, status: int = 200):
        self.requests: list[dict] = []
        rec = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                     "body": json.loads(body or b"null")})
                out = json.dumps({"error": "마감"} if status != 200 else {"ok": True}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self):  # noqa: N802 - a lecturer's view of an item: nothing revealed, 1 answer
                rec.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": None})
                out = json.dumps({"item": ITEM, "state": "open", "revealed": None, "kind": "number", "unit": "배",
                                  "prompt": "?", "count": 1, "choices": [], "values": [2.0]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *_a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/decodelab-polls"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder():
    r = _Recorder()
    yield r
    r.close()


def _commit(value: str) -> ex.PredictView:
    v = ex.PredictView(ITEM)
    v.input.value = value
    v.commit()
    if v.sending is not None:
        v.sending.join(10)
    return v


def test_without_a_hub_nothing_is_sent_and_nothing_changes(answers, recorder, monkeypatch):
    """A student alone: no hub token, so not a byte leaves, whatever else the environment holds
    (a service URL alone, or a token alone); with both (a hub), the one request carries the
    token and only the value."""
    monkeypatch.setenv(classpoll.POLLS_URL_ENV, recorder.url)  # a URL but no hub token
    v = _commit("2")
    assert v.sending is None and recorder.requests == []
    assert "예측을 저장했습니다" in v.feedback.value and "수업" not in v.feedback.value
    assert AnswerStore("course").get(ITEM)["response"] == 2.0
    monkeypatch.delenv(classpoll.POLLS_URL_ENV)
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "tok-123")  # a token but no service
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    v = _commit("3")
    assert v.sending is None and recorder.requests == []
    assert classpoll.send_prediction(ITEM, 3.0) is None
    # on the hub: sent, with the token, the value only (never a name: the service asks the hub)
    monkeypatch.setenv(classpoll.POLLS_URL_ENV, recorder.url)
    v = _commit("4.5")
    assert v.sending is not None
    assert recorder.requests == [{"path": f"/services/decodelab-polls/api/answers/{ITEM}", "auth": "token tok-123",
                                  "body": {"value": 4.5}}]
    assert "보내지 못했습니다" not in v.feedback.value and "들어가지 않았습니다" not in v.feedback.value
    assert AnswerStore("course").get(ITEM)["response"] == 4.5


def test_a_failed_send_keeps_the_answer_and_says_so_quietly(answers, monkeypatch):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "tok-123")
    monkeypatch.setenv(classpoll.POLLS_URL_ENV, f"http://127.0.0.1:{port}/services/decodelab-polls")
    v = _commit("7")
    assert AnswerStore("course").get(ITEM)["response"] == 7.0  # saved before sending, kept after
    assert "예측을 저장했습니다" in v.feedback.value
    assert "수업 집계에 예측을 보내지 못했습니다" in v.feedback.value and "그대로 저장되어 있습니다" in v.feedback.value


def test_a_closed_item_is_a_quiet_note_too(answers, monkeypatch):
    closed = _Recorder(status=409)
    try:
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "tok-123")
        monkeypatch.setenv(classpoll.POLLS_URL_ENV, closed.url)
        v = _commit("9")
        assert len(closed.requests) == 1
        assert "마감해서 수업 집계에는 들어가지 않았습니다" in v.feedback.value
        assert AnswerStore("course").get(ITEM)["response"] == 9.0
    finally:
        closed.close()


def test_poll_store_keeps_the_latest_answer_and_refuses_a_closed_item(tmp_path):
    from decodelab.classroom.polls import ItemClosed, PollStore

    db = tmp_path / "polls.sqlite"
    store = PollStore(db)
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    store.answer(ITEM, "alice", 2.0)
    store.answer(ITEM, "bob", 20.0)
    store.answer(ITEM, "alice", 5.0)  # changed her mind: the latest counts
    assert store.answers(ITEM) == {"alice": 5.0, "bob": 20.0}
    assert store.set_state(ITEM, "closed")["state"] == "closed"
    with pytest.raises(ItemClosed):
        store.answer(ITEM, "alice", 6.0)
    with pytest.raises(ItemClosed):
        store.answer(ITEM, "carol", 6.0)
    assert store.answers(ITEM) == {"alice": 5.0, "bob": 20.0}
    store.set_state(ITEM, "open")
    store.answer(ITEM, "carol", 1.5)
    assert store.reveal(ITEM, 20.0) == {"item": ITEM, "state": "closed", "revealed": 20.0}
    assert store.items() == [{"item": ITEM, "state": "closed", "count": 3, "revealed": 20.0}]
    store.engine.dispose()
    again = PollStore(db)  # a restart: everything is read back from the file
    assert again.answers(ITEM) == {"alice": 5.0, "bob": 20.0, "carol": 1.5}
    assert again.item(ITEM)["revealed"] == 20.0
    assert again.reset(ITEM) == {"item": ITEM, "state": "open", "revealed": None}
    assert again.answers(ITEM) == {} and again.mine(ITEM, "alice") is None


def test_poll_store_loses_none_of_200_concurrent_writers(tmp_path):
    """200 writers at once, each on its own connection (engine) to the one file, each answering
    twice: 200 rows, each the writer's second answer."""
    from concurrent.futures import ThreadPoolExecutor

    from decodelab.classroom.polls import PollStore

    db = tmp_path / "polls.sqlite"
    PollStore(db).engine.dispose()
    stores = [PollStore(db) for _ in range(8)]

    def write(i: int) -> None:
        s = stores[i % len(stores)]
        s.answer(ITEM, f"s{i:03d}", float(i))
        s.answer(ITEM, f"s{i:03d}", float(i) + 0.5)

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(write, range(200)))
    got = PollStore(db).answers(ITEM)
    assert got == {f"s{i:03d}": i + 0.5 for i in range(200)}


def test_histogram_bins():
    from decodelab.classroom.polls_view import histogram

    assert histogram([2.0, 2.0, 2.0]) == ([2.0, 2.0], [3], False)
    edges, counts, log = histogram([1.0, 2.0, 3.0, 4.0])  # 4 distinct values: 4 bins of width 0.75
    assert (edges, counts, log) == ([1.0, 1.75, 2.5, 3.25, 4.0], [1, 1, 1, 1], False)
    edges, counts, log = histogram([1.0, 10.0, 100.0])  # 100x spread: log10 bins 0, 2/3, 4/3, 2
    assert log and counts == [1, 1, 1] and edges[0] == 1.0 and edges[-1] == 100.0
    assert edges[1] == pytest.approx(10 ** (2 / 3)) and edges[2] == pytest.approx(10 ** (4 / 3))
    edges, counts, log = histogram([-1.0, 0.0, 1.0, 1.0])
    # 3 distinct values: 3 bins of width 2/3; the right edge (1.0, twice) is in the last bin
    assert not log and edges == pytest.approx([-1.0, -1 / 3, 1 / 3, 1.0]) and counts == [1, 1, 2]
    with pytest.raises(ValueError):
        histogram([])


def test_render_shows_counts_names_only_when_asked_and_the_value_only_when_revealed():
    from decodelab.classroom.polls_view import render

    data = {"kind": "choice", "unit": None, "count": 3, "revealed": None,
            "choices": [{"id": "a", "text": "줄어든다"}, {"id": "b", "text": "그대로"}, {"id": "c", "text": "늘어난다"}],
            "counts": {"a": 2, "b": 1, "c": 0}, "names": {"alice": "a", "bob": "a", "carol": "b"}}
    html = render(data)
    assert 'data-choice="a" data-count="2"' in html and 'data-choice="c" data-count="0"' in html
    assert "alice" not in html and "실제 값" not in html
    html = render({**data, "revealed": "b"}, names=True)
    assert "alice" in html and "실제 값: b" in html


def test_lecturer_view_without_a_hub_says_so(answers):
    from decodelab.classroom.polls_view import ClassPollView

    v = ClassPollView(ITEM, live=False)
    assert "JupyterHub 강좌 서버에서 돌지 않아" in v.status.value
    assert v.close_button.disabled and v.reset_button.disabled and v.chart.value == ""


def test_lecturer_view_sends_only_a_reveal_made_after_it_began(answers, recorder):
    """A reveal already in the lecturer's answers (preparing the lesson) is not sent when the view
    starts, nor after 초기화; the lecturer's reveal during the lesson is sent once."""
    import time

    from decodelab.classroom.polls_view import ClassPollView

    ex.reveal_record(ITEM, 3.0)  # preparing the lesson
    v = ClassPollView(ITEM, live=False, endpoint=(recorder.url, "lecturer-token"))
    reveals = lambda: [r["body"] for r in recorder.requests if r["path"].endswith("/reveal")]  # noqa: E731
    assert reveals() == [] and 'data-count="1"' in v.status.value
    time.sleep(1.1)  # the record's time has whole seconds
    ex.reveal_record(ITEM, 3.47)  # the measuring cell in the lesson
    v.refresh()
    v.refresh()
    assert reveals() == [{"value": 3.47}]
    assert all(r["auth"] == "token lecturer-token" for r in recorder.requests)
    v.act("reset")
    v.refresh()
    assert reveals() == [{"value": 3.47}]


def test_render_numbers_as_a_histogram_with_the_median_and_the_measured_bin():
    from decodelab.classroom.polls_view import render

    data = {"kind": "number", "unit": "배", "count": 3, "revealed": None, "values": [2.0, 3.5, 20.0], "choices": []}
    html = render(data)
    counts = [int(c) for c in re.findall(r'class="decodelab-poll-bin" data-count="(\d+)"', html)]
    assert counts == [2, 0, 1]  # a 10x spread: log10 bins 2-4.31-9.28-20
    assert "중앙값 3.5 배 · 구간은 로그 눈금" in html and "실제 값" not in html
    html = render({**data, "revealed": 3.47})
    assert html.count("#ef6c00") == 2  # the measured value's bin (the first, 2-4.31: 2 and 3.5) and its line
    assert "실제 값: 3.47 배" in html
    assert "모든 예측보다 큽니다" in render({**data, "revealed": 50.0})


@pytest.fixture
def poll_service(tmp_path, monkeypatch):
    """The poll's tornado application in this process, on a loopback port, with the hub's answer about a
    token stood in: the token's text is the user's name (the service's own handlers, values and database)."""
    import asyncio

    from jupyterhub.services import auth as hub_auth
    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_sockets

    from decodelab.classroom import polls

    async def get_user(self, handler, sync=True):
        name = handler.request.headers.get("Authorization", "").removeprefix("token ")
        return {"name": name, "kind": "user", "scopes": [polls.ACCESS_SCOPE], "admin": False, "groups": []}

    monkeypatch.setattr(hub_auth.HubAuth, "get_user", get_user)
    store = polls.PollStore(tmp_path / "polls.sqlite")
    started, box = threading.Event(), {}

    def serve():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        app = polls.make_app(store, prefix="/services/decodelab-polls/", hub_api_url="http://127.0.0.1:9/hub/api",
                             api_token="x")
        server = HTTPServer(app)
        sock = bind_sockets(0, "127.0.0.1")
        server.add_sockets(sock)
        box.update(loop=loop, server=server, port=sock[0].getsockname()[1])
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    yield f"http://127.0.0.1:{box['port']}/services/decodelab-polls/api"
    box["loop"].call_soon_threadsafe(box["server"].stop)
    box["loop"].call_soon_threadsafe(box["loop"].stop)
    thread.join(10)
    store.engine.dispose()


def test_poll_service_answers_400_never_500_to_odd_values_and_one_time_format(poll_service):
    """A student's attack: a value nested 5000 deep or an integer of 401 digits was HTTP 500 (a
    RecursionError / OverflowError escaped); NaN, infinities, huge and odd values are 400 too. The
    POST answered the time with ``+00:00`` and the GET without a time zone: both the same now."""
    import httpx

    url, auth = f"{poll_service}/answers/{ITEM}", {"Authorization": "token alice"}
    bodies = ['{"value": ' + "[" * 5000 + "]" * 5000 + "}", '{"value": 1' + "0" * 400 + "}",
              '{"value": -1' + "0" * 400 + "}", '{"value": 1' + "0" * 5000 + "}", '{"value": NaN}',
              '{"value": Infinity}', '{"value": 1e400}', '{"value": 1e13}', '{"value": true}', '{"value": "2"}',
              '{"value": {"a": 1}}', "[" * 5000 + "]" * 5000, '{"a": ' * 3000 + "1" + "}" * 3000]
    for body in bodies:
        r = httpx.post(url, headers={**auth, "Content-Type": "application/json"}, content=body, timeout=30)
        assert r.status_code == 400, (body[:40], r.status_code, r.text[:200])
        assert r.json()["error"] and len(r.text) < 500, r.text[:600]
    choice = f"{poll_service}/answers/{CHOICE_ITEM}"
    for body in ('{"value": ' + "[" * 5000 + "]" * 5000 + "}", '{"value": 1' + "0" * 400 + "}", '{"value": ["a"]}'):
        r = httpx.post(choice, headers=auth, content=body, timeout=30)
        assert r.status_code == 400, (body[:40], r.status_code, r.text[:200])
    posted = httpx.post(url, headers=auth, json={"value": 20}, timeout=30)
    assert posted.status_code == 200, posted.text
    got = httpx.get(url, headers=auth, timeout=30)
    assert got.status_code == 200, got.text
    assert got.json() == posted.json()  # the same record, the same time, in the same ISO format
    from datetime import datetime, timedelta

    when = datetime.fromisoformat(got.json()["answered_at"])
    assert when.utcoffset() == timedelta(0) and got.json()["answered_at"].endswith("+00:00")
    assert got.json()["value"] == 20.0


def test_the_service_listens_on_loopback_and_on_every_interface_only_when_asked():
    """One server: the service's URL must name a loopback host (the hub reaches it there; nothing
    else on the network may). A Kubernetes pod (classroom/k8s/class-poll.yaml) listens on every
    interface: only with ``--listen-all`` and only the wildcard address, never one interface's."""
    from decodelab.classroom.polls import PORT, listen_address

    assert listen_address("http://127.0.0.1:10103") == ("127.0.0.1", 10103)
    assert listen_address("http://localhost") == ("localhost", PORT)
    assert listen_address("http://[::1]:9") == ("::1", 9)
    for url in ("http://0.0.0.0:8080", "http://[::]:8080", "http://10.1.2.3:8080", "http://decodelab-polls:8080"):
        with pytest.raises(SystemExit) as e:
            listen_address(url)
        assert "루프백 주소에서만" in str(e.value), url
    with pytest.raises(SystemExit, match="--listen-all"):
        listen_address("http://0.0.0.0:8080")  # the refusal says what to add
    assert listen_address("http://0.0.0.0:8080", listen_all=True) == ("0.0.0.0", 8080)
    assert listen_address("http://[::]:8080", listen_all=True) == ("::", 8080)
    assert listen_address("http://127.0.0.1:7", listen_all=True) == ("127.0.0.1", 7)
    for url in ("http://10.1.2.3:8080", "http://decodelab-polls:8080"):
        with pytest.raises(SystemExit):
            listen_address(url, listen_all=True)


def test_main_refuses_every_interface_without_the_flag_and_serves_there_with_it(tmp_path):
    """``python -m decodelab.classroom.polls`` with ``JUPYTERHUB_SERVICE_URL=http://0.0.0.0:PORT``
    exits before it opens the database; with ``--listen-all`` (the pod's command) it listens on
    every interface: reached here on 127.0.0.1, it answers a request without a token 401."""
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTERHUB_SERVICE_URL": f"http://0.0.0.0:{port}",
           "JUPYTERHUB_SERVICE_PREFIX": "/services/decodelab-polls/",
           "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api", "JUPYTERHUB_API_TOKEN": "x" * 32}
    command = [sys.executable, "-m", "decodelab.classroom.polls", f"--db={tmp_path / 'polls.sqlite'}"]
    r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--listen-all" in r.stderr, (r.returncode, r.stderr[-500:])
    assert not (tmp_path / "polls.sqlite").exists()
    proc = subprocess.Popen([*command, "--listen-all"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/services/decodelab-polls/api/", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.poll() is not None else "timeout"
                time.sleep(0.3)
        assert answer.status_code == 401, answer.text
        assert stat.S_IMODE((tmp_path / "polls.sqlite").stat().st_mode) == 0o600
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert f"decodelab-polls: 0.0.0.0:{port}/services/decodelab-polls/" in out, out[-1000:]


def test_the_hub_token_goes_through_no_proxy_and_no_redirect(recorder, monkeypatch):
    """The kernel's hub token reaches the poll's own address only: an ``http_proxy`` in the
    environment (a school proxy) is not used, and a redirect is not followed with the token."""
    proxy = _Recorder()
    try:
        for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
            monkeypatch.setenv(var, proxy.url.rsplit("/services", 1)[0])
        for var in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(var, raising=False)
        r = classpoll.request("POST", f"answers/{ITEM}", {"value": 1}, endpoint=(recorder.url, "tok-abc"))
        assert r.status == 200 and [q["auth"] for q in recorder.requests] == ["token tok-abc"]
        assert proxy.requests == []
    finally:
        proxy.close()

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.send_response(307)
            self.send_header("Location", recorder.url + "/api/stolen")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    before = len(recorder.requests)
    try:
        r = classpoll.request("POST", "answers/x", {"value": 1},
                              endpoint=(f"http://127.0.0.1:{server.server_address[1]}/services/decodelab-polls", "tok"))
        assert r.status == 307  # answered as it is, not followed
    finally:
        server.shutdown()
        server.server_close()
    assert len(recorder.requests) == before  # the redirect's target never saw the token
