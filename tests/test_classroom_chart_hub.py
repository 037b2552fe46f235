"""classroom/config.yaml's hub on the Zero to JupyterHub chart's own hub versions, on loopback.

The chart (release 4.4.0, pinned in every install command) runs JupyterHub 5.5.0 with
jupyterhub-nativeauthenticator 1.3.0, SQLAlchemy 2.0.50 and tornado 6.5.7
(tests/fixtures/z2jh-4.4.0/requirements.txt), not the JupyterHub 6 of one server. This test runs
the values Helm would hand the chart for the guide's install command (chart defaults + config.yaml +
the --set-file of decodelab/classroom/auth.py, :func:`chartkit.merged_values`) through the chart's
config order (``hub.config``, ``hub.services``, then ``hub.extraConfig``; :data:`chartkit.LOOPBACK_CONFIG`)
in a virtualenv of exactly those versions (``scripts/install_chart_hub.sh``, git-ignored
``.venv-chart-hub``), with a local spawner and proxy in place of Kubernetes: the lecturer signs up
and logs in, a student's sign-up waits for approval, the lecturer authorizes it, the student logs in
under another spelling of the name and their server spawns. Before auth.py's statsd stand-in had
``incr``/``timing``, GET and POST /hub/login answered HTTP 500 here. Beside the hub run the
containers of classroom/k8s/ngshare.yaml and classroom/k8s/class-poll.yaml (their commands and
environments, on 127.0.0.1), registered as config.yaml's URL-only services: nbgrader's exchange
round trip, and the class poll's (a spawned student's server token posts, the lecturer reads the
room, the attacks a student could try are refused).

The hub runs as user ``nobody`` when the test runs as root (its students' servers with it), never
as root. What it does not show: Kubernetes itself (KubeSpawner, the proxy's HTTPS, network
policies): no cluster runs these tests (lecturer/classroom.md §7 says so).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest
import yaml

import chartkit
import hubkit

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_chart_hub")]

#: where scripts/install_chart_hub.sh puts it (/tmp/... when other users cannot enter the checkout)
VENV = next((v for v in (chartkit.REPO / ".venv-chart-hub", Path("/tmp/decodelab-chart-hub"))
             if (v / "bin" / "python").is_file()), chartkit.REPO / ".venv-chart-hub")
from decodelab.classroom.accounts import NOBODY  # noqa: E402
PROF_PW = "lecturer-pw-5e1d3a77"
STUDENT_PW = "student-pw-0b9c44e2"


def _public_install() -> chartkit.HelmCommand:
    cmds = [c for c in chartkit.helm_commands(chartkit.guide_section(7))
            if not c.set and "classroom/config-lti.yaml" not in c.values]
    assert len(cmds) == 1, [c.text for c in cmds]
    return cmds[0]


def _chart_python() -> str:
    py = VENV / "bin" / "python"
    if not py.is_file():
        pytest.skip(f"no virtualenv of the chart's hub versions at {VENV}: bash scripts/install_chart_hub.sh "
                    "(bash course.sh test runs it; needs the package index)")
    want = next(line.split("==")[1].strip() for line in (chartkit.CHART / "requirements.txt").read_text().splitlines()
                if line.startswith("jupyterhub=="))
    got = subprocess.run([str(py), "-c", "import jupyterhub; print(jupyterhub.__version__)"],
                         capture_output=True, text=True).stdout.strip()
    assert got == want, f"{VENV} has JupyterHub {got!r}, the chart's hub image {want}: rerun scripts/install_chart_hub.sh"
    return str(py)


def _manifests(name: str = "ngshare.yaml") -> dict[tuple[str, str], dict]:
    docs = yaml.safe_load_all((chartkit.REPO / "classroom" / "k8s" / name).read_text(encoding="utf-8"))
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def _pod_process(manifest: str, service: str, data_dir: str, root: Path, port: int, hub_port: int,
                 token: str) -> subprocess.Popen:
    """The container of Deployment ``service`` in classroom/k8s/``manifest`` (its command and
    environment) on loopback: the chart's Secret's token for ``service`` given, the hub's API and the
    pod's own address on 127.0.0.1 (the pod's 0.0.0.0 would open this machine's every interface),
    ``data_dir`` (the volume's mount) under ``root``; on a Python with this checkout's decodelab
    (and ngshare) that user nobody runs. Its output goes to ``root/<service>.log``."""
    (container,) = _manifests(manifest)[("Deployment", service)]["spec"]["template"]["spec"]["containers"]
    data = root / service
    data.mkdir()
    command = [a.replace(data_dir, str(data)) for a in container["command"]]
    assert command[0] == "python"
    command[0] = hubkit.student_python()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": str(chartkit.REPO)}
    for item in container["env"]:
        if "valueFrom" in item:
            assert item["valueFrom"]["secretKeyRef"] == {"name": "hub", "key": f"hub.services.{service}.apiToken"}, item
            env[item["name"]] = token
        else:
            env[item["name"]] = item["value"]
    assert env["JUPYTERHUB_SERVICE_URL"] == "http://0.0.0.0:8080" and env["JUPYTERHUB_API_URL"] == "http://hub:8081/hub/api"
    env["JUPYTERHUB_SERVICE_URL"] = f"http://127.0.0.1:{port}"
    env["JUPYTERHUB_API_URL"] = f"http://127.0.0.1:{hub_port}/hub/api"
    env["HOME"] = str(root)
    as_nobody = {}
    if os.geteuid() == 0:
        os.chown(data, NOBODY, NOBODY)
        as_nobody = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    fh = open(root / f"{service}.log", "wb")
    proc = subprocess.Popen(command, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True,
                            **as_nobody)
    fh.close()
    return proc


def _ngshare_process(root: Path, port: int, hub_port: int, token: str) -> subprocess.Popen:
    """ngshare's pod (classroom/k8s/ngshare.yaml) on loopback (:func:`_pod_process`)."""
    return _pod_process("ngshare.yaml", "ngshare", "/srv/ngshare", root, port, hub_port, token)


def _poll_process(root: Path, port: int, hub_port: int, token: str) -> subprocess.Popen:
    """The class poll's pod (classroom/k8s/class-poll.yaml, its ``--listen-all`` included) on
    loopback (:func:`_pod_process`)."""
    from decodelab.classroom.polls import SERVICE

    proc = _pod_process("class-poll.yaml", SERVICE, "/srv/polls", root, port, hub_port, token)
    assert "--listen-all" in proc.args, proc.args
    return proc


def _wait_listening(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    """Until ``url`` answers at all (the poll has no page that answers 200 without a token)."""
    import time

    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the class poll ended (exit code {proc.returncode})")
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the class poll did not answer in {timeout_s} s") from None
            time.sleep(0.3)


def _start(values: dict, tmp_prefix: str, *, ngshare: bool = False, polls: bool = False):
    """The chart's hub config of ``values`` under the chart's versions, on free loopback ports, with
    ngshare's pod (classroom/k8s/ngshare.yaml) beside it when ``ngshare`` and the class poll's pod
    (classroom/k8s/class-poll.yaml) when ``polls``; returns a :class:`hubkit.Hub` (stop it) whose
    ``ngshare`` and ``polls`` are those services' direct URLs or None."""
    from decodelab.classroom.polls import SERVICE

    py = _chart_python()
    missing = hubkit.missing_parts()
    if missing:
        pytest.skip("missing: " + ", ".join(missing))
    root = hubkit.open_tmp(tmp_prefix)
    port, hub_port, api_port, ng_port, poll_port = (hubkit.free_port() for _ in range(5))
    tokens = {key: secrets.token_hex(32) for key in values["hub"].get("services") or {}}
    if ngshare:
        # the Service http://ngshare:8080 is this process on 127.0.0.1 here
        assert values["hub"]["services"]["ngshare"] == {"url": "http://ngshare:8080"}, values["hub"]["services"]
        values["hub"]["services"]["ngshare"]["url"] = f"http://127.0.0.1:{ng_port}"
    if polls:
        # the Service http://decodelab-polls:8080 likewise
        assert values["hub"]["services"][SERVICE] == {"url": f"http://{SERVICE}:8080"}, values["hub"]["services"]
        values["hub"]["services"][SERVICE]["url"] = f"http://127.0.0.1:{poll_port}"
    (root / "values.json").write_text(json.dumps(values))
    (root / "jupyterhub_config.py").write_text(chartkit.LOOPBACK_CONFIG)
    (root / "homes").mkdir()
    env = {"PATH": os.pathsep.join([str(Path(py).parent), "/usr/local/bin", "/usr/bin", "/bin"]), "LANG": "C.UTF-8",
           "HOME": str(root), "CHART_HUB_ROOT": str(root), "CHART_HUB_PORT": str(port),
           "CHART_HUB_HUB_PORT": str(hub_port), "CHART_HUB_API_PORT": str(api_port),
           "CHART_HUB_PROXY": hubkit.proxy_command(),
           "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16)}
    for key, token in tokens.items():
        env[f"CHART_HUB_SERVICE_TOKEN_{key.upper().replace('-', '_')}"] = token
    as_nobody = {}
    if os.geteuid() == 0:
        assert hubkit._runs_unprivileged(py), f"user nobody cannot run {py}: rm -r {VENV}; PYTHON=/usr/bin/python3 bash scripts/install_chart_hub.sh"
        for path in [root, *root.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        as_nobody = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    log = root / "hub.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([py, "-m", "jupyterhub", "-f", str(root / "jupyterhub_config.py")], stdout=fh,
                                stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True, **as_nobody)
    hub = hubkit.Hub(f"http://127.0.0.1:{port}", root, proc, log)
    hub.ngshare = hub.polls = None
    hub.ngshare_proc = hub.polls_proc = None
    from decodelab.serving import wait_until_ready

    try:
        wait_until_ready(f"{hub.url}/hub/api/", proc, hubkit.HUB_START_S, what="JupyterHub 5.5", poll_s=0.5,
                         request_timeout_s=5)
        if ngshare:
            hub.ngshare_proc = _ngshare_process(root, ng_port, hub_port, tokens["ngshare"])
            hub.ngshare = f"http://127.0.0.1:{ng_port}/services/ngshare"
            wait_until_ready(f"http://127.0.0.1:{ng_port}/healthz", hub.ngshare_proc, hubkit.HUB_START_S, what="ngshare",
                             poll_s=0.5, request_timeout_s=5)
        if polls:
            hub.polls_proc = _poll_process(root, poll_port, hub_port, tokens[SERVICE])
            hub.polls = f"http://127.0.0.1:{poll_port}/services/{SERVICE}"
            _wait_listening(f"{hub.polls}/api/", hub.polls_proc, hubkit.HUB_START_S)
    except Exception as e:
        _stop(hub)
        extra = "".join((root / log).read_text(errors="replace")[-3000:] for log in ("ngshare.log", f"{SERVICE}.log")
                        if (root / log).exists())
        raise RuntimeError(f"{e}\n{hub.log_text()[-4000:]}\n{extra}") from None
    return hub


def _stop(hub) -> None:
    for proc in (getattr(hub, "ngshare_proc", None), getattr(hub, "polls_proc", None)):
        if proc is not None:
            hubkit.stop_process(proc)
    hub.stop()


@pytest.fixture(scope="module")
def chart_hub():
    values = chartkit.merged_values(_public_install())
    hub = _start(values, "chart-hub", ngshare=True, polls=True)
    yield hub
    _stop(hub)


def _lecturer(hub) -> hubkit.Student:
    """The lecturer, logged in (signed up first when this test runs alone)."""
    prof = hubkit.Student(hub, "lecturer")
    prof.login(PROF_PW, spawn=False)
    if not prof.logged_in:
        prof.signup(PROF_PW)
        prof.login(PROF_PW, spawn=False)
    assert prof.logged_in, hub.log_text()[-3000:]
    return prof


def _approved(hub, prof: hubkit.Student, prefix: str) -> hubkit.Student:
    """A new student ``<prefix><4 hex>`` who signed up (waiting for approval), was authorized by the
    lecturer ``prof`` at /hub/authorize and is logged in (no server yet)."""
    name = f"{prefix}{secrets.token_hex(2)}"  # the course's name rule: [a-z][a-z0-9_-]* (auth.USERNAME)
    student = hubkit.Student(hub, name)
    assert "has been sent to the admin" in student.signup(STUDENT_PW)
    assert prof.client.get(f"/hub/authorize/{name}").status_code == 200
    student.login(STUDENT_PW, spawn=False)
    assert student.logged_in, hub.log_text()[-3000:]
    return student


def test_login_signup_authorize_and_spawn_on_the_charts_jupyterhub(chart_hub):
    log_head = chart_hub.log_text()[:6000]
    assert "Running JupyterHub version 5.5.0" in log_head, log_head[-2000:]
    assert "Using Authenticator: decodelab_auth.NativeAuthenticator" in log_head, log_head[-2000:]
    prof = hubkit.Student(chart_hub, "lecturer")
    assert prof.client.get("/hub/login").status_code == 200  # HTTP 500 before (statsd.incr)
    text = prof.signup(PROF_PW)
    assert "has been sent to the admin" not in text  # the admin is authorized at sign-up
    r = prof.login(PROF_PW, spawn=False)
    assert r.status_code in (200, 302), (r.status_code, chart_hub.log_text()[-3000:])
    assert prof.logged_in, chart_hub.log_text()[-3000:]
    assert prof.client.get("/hub/admin").status_code == 200

    name = f"minji{secrets.token_hex(2)}"  # the course's name rule: [a-z][a-z0-9_-]* (auth.USERNAME)
    student = hubkit.Student(chart_hub, name)
    assert "has been sent to the admin" in student.signup(STUDENT_PW)
    student.login(STUDENT_PW, spawn=False)
    assert not student.logged_in  # not approved yet
    assert prof.client.get(f"/hub/authorize/{name}").status_code == 200
    # the upper-case spelling is the same account (auth.py's normalize_username case-folds)
    nfd = hubkit.Student(chart_hub, name.upper())
    nfd.login(STUDENT_PW, spawn=False)
    assert nfd.logged_in, chart_hub.log_text()[-3000:]
    assert nfd.hub_api("GET", "/user").json()["name"] == name
    assert nfd.client.get("/hub/authorize").status_code == 403

    # the server spawns (jupyter-server with the chart's major JupyterHub version, as in the image)
    r = nfd.hub_api("POST", f"/users/{name}/server")
    assert r.status_code in (201, 202), (r.status_code, r.text, chart_hub.log_text()[-3000:])
    nfd.name = name
    nfd.wait_ready(120)
    token = nfd.token()
    status = hubkit.server_api(chart_hub, name, token, "GET", "/status")
    assert status.status_code == 200, status.text
    assert "500 GET /hub/login" not in chart_hub.log_text() and "AttributeError" not in chart_hub.log_text()


LOAD = r"""
import json, os
from traitlets.config import PyFileConfigLoader
from jupyterhub.app import JupyterHub

c = PyFileConfigLoader("jupyterhub_config.py", path=os.environ["CHART_HUB_ROOT"]).load_config()
app = JupyterHub(config=c)
app.init_db()  # the NativeAuthenticator keeps its accounts in the hub database
auth = app.authenticator_class(parent=app, _deprecated_db_session=app.db)  # as JupyterHub.init_authenticator does
print(json.dumps({"class": f"{type(auth).__module__}.{type(auth).__name__}", "allow_all": auth.allow_all,
                  "admin_users": sorted(auth.admin_users),
                  "open_signup": getattr(auth, "open_signup", None),
                  "issuer": getattr(auth, "issuer", None),
                  "services": [s["name"] for s in app.services]}))
"""


def test_each_install_command_loads_in_the_charts_order():
    """Every install command of the guide, its values loaded as the chart's hub does (hub.config,
    hub.services, hub.extraConfig) under the chart's versions, gives the authenticator it says:
    the course's NativeAuthenticator (lecturer admin, closed sign-up), or with config-lti.yaml the
    LTI 1.3 one, which lets in whom the LMS launches (``allow_all``; without it JupyterHub 5 lets
    nobody in) and no NativeAuthenticator file is left to mount."""
    py = _chart_python()
    cmds = chartkit.helm_commands(chartkit.guide_section(7))
    seen = set()
    for cmd in cmds:
        values = chartkit.merged_values(cmd)
        root = hubkit.open_tmp("chart-load")
        (root / "values.json").write_text(json.dumps(values))
        (root / "jupyterhub_config.py").write_text(chartkit.LOOPBACK_CONFIG)
        env = {"PATH": "/usr/bin:/bin", "CHART_HUB_ROOT": str(root), "CHART_HUB_PORT": "1", "CHART_HUB_HUB_PORT": "2",
               "CHART_HUB_API_PORT": "3", "CHART_HUB_PROXY": "configurable-http-proxy",
               **{f"CHART_HUB_SERVICE_TOKEN_{k.upper().replace('-', '_')}": "x" * 32
                  for k in (values["hub"].get("services") or {})}}
        r = subprocess.run([py, "-c", LOAD], env=env, cwd=root, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (cmd.text, r.stderr[-3000:])
        got = json.loads(r.stdout.strip().splitlines()[-1])
        if "classroom/config-lti.yaml" in cmd.values:
            assert got["class"] == "ltiauthenticator.lti13.auth.LTI13Authenticator", got
            assert got["allow_all"] is True and got["issuer"].startswith("https://"), got
            assert not (root / "usr/local/etc/jupyterhub/decodelab_auth.py").exists()
        else:
            assert got["class"] == "decodelab_auth.NativeAuthenticator", got
            assert got["admin_users"] == ["lecturer"] and got["open_signup"] is False and got["allow_all"] is False, got
        seen.add(got["class"])
    assert len(seen) == 2, seen


def _ng(method: str, url: str, token: str | None, **data) -> tuple[int, dict]:
    """One ngshare API call with a hub token (form fields ``data``); (status, JSON answer)."""
    import httpx

    headers = {"Authorization": f"token {token}"} if token else {}
    r = httpx.request(method, url, headers=headers, data=data or None, timeout=60, follow_redirects=False)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, {"success": False, "body": r.text[:200]}


def test_ngshare_pod_round_trip_through_the_charts_hub(chart_hub):
    """ngshare's container (classroom/k8s/ngshare.yaml: its command, environment and the Secret's
    token) behind the chart's JupyterHub 5.5, registered as config.yaml's URL-only service: the
    hub lists it and proxies /services/ngshare/; the student's spawn enrols them (config.yaml's
    hub.extraConfig, no hand enrolment); the lecturer (ngshare's admin) releases an assignment
    through the hub's public URL (as from the grading machine); the student, with their own server's token, lists and submits over the direct URL
    (as a pod reaches http://ngshare:8080); ngshare names the submitter from the token and stamps
    the time; a student can neither make a course nor see others' submissions; no token, no answer."""
    import base64

    prof = _lecturer(chart_hub)
    services = prof.hub_api("GET", "/services").json()
    assert "ngshare" in services and services["ngshare"]["url"].startswith("http://127.0.0.1:"), services
    assert services["ngshare"]["command"] in ([], None) and not services["ngshare"].get("pid"), services["ngshare"]
    prof_token = prof.token()
    public = f"{chart_hub.url}/services/ngshare"
    direct = chart_hub.ngshare

    student = _approved(chart_hub, prof, "student")
    name = student.name
    student_token = student.token()

    # no hand enrolment: the spawn makes the course (when missing) and enrols the student
    assert student.spawn().status_code in (201, 202)
    student.wait_ready(120)
    notebook = base64.encodebytes(b'{"cells": []}').decode()
    files = json.dumps([{"path": "a1.ipynb", "content": notebook}])
    assert _ng("POST", f"{public}/assignment/decodelab/a1", prof_token, files=files)[1]["success"]

    status, answer = _ng("GET", f"{direct}/assignments/decodelab", student_token)
    assert answer == {"success": True, "assignments": ["a1"]}, (status, answer)
    status, answer = _ng("POST", f"{direct}/submission/decodelab/a1", student_token,
                         files=json.dumps([{"path": "a1.ipynb", "content": base64.encodebytes(b'{"cells": [1]}').decode()}]))
    assert answer["success"] and answer["timestamp"], (status, answer)

    # the student is no admin and no instructor; without a token ngshare answers nothing
    status, answer = _ng("POST", f"{direct}/course/other", student_token)
    assert status == 403 and not answer["success"], (status, answer)
    status, answer = _ng("GET", f"{direct}/submissions/decodelab/a1", student_token)
    assert status == 403 and not answer["success"], (status, answer)
    status, answer = _ng("GET", f"{direct}/assignments/decodelab", None)
    assert status in (302, 401, 403) and not answer.get("success"), (status, answer)

    status, answer = _ng("GET", f"{public}/submissions/decodelab/a1", prof_token)
    assert answer["success"] and [s["student_id"] for s in answer["submissions"]] == [name], (status, answer)
    assert answer["submissions"][0]["timestamp"] == _ng("GET", f"{direct}/submissions/decodelab/a1/{name}",
                                                        student_token)[1]["submissions"][0]["timestamp"]


def _student_side(home: Path, name: str, token: str, ngshare: str) -> dict:
    """A student's pod for nbgrader: config.yaml's ``/etc/jupyter/nbgrader_config.py`` (its
    ``http://ngshare:8080`` being ngshare's loopback address here) as the only Jupyter config, the
    pod's hub token and login, and the answers folder of config.yaml's ``extraEnv``; returns the
    environment nbgrader runs in (in ``home``)."""
    import sys

    values = chartkit.merged_values(_public_install())
    text = values["singleuser"]["extraFiles"]["nbgrader-config"]["stringData"]
    assert "'http://ngshare:8080/services/ngshare'" in text, text
    etc = home / "etc-jupyter"
    etc.mkdir(parents=True)
    (etc / "nbgrader_config.py").write_text(text.replace("http://ngshare:8080/services/ngshare", ngshare), encoding="utf-8")
    answers = values["singleuser"]["extraEnv"]["DECODELAB_ANSWERS_DIR"].replace("/home/jovyan", str(home))
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(etc), "JUPYTER_CONFIG_PATH": str(etc), "JUPYTERHUB_USER": name,
            "JUPYTERHUB_API_TOKEN": token, "DECODELAB_ANSWERS_DIR": answers, "PYTHONPATH": str(chartkit.REPO)}


def _run(args: list[str], cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{args}: rc {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-4000:]}"
    return r


def test_the_grading_machine_walk_release_collect_autograde_feedback_and_practice(chart_hub):
    """The guide's grading machine (lecturer/classroom.md 7.5), every command as written there, against
    the cluster's ngshare through the hub's public URL with the lecturer's token: a course folder by
    ``decodelab classroom init``; ``nbgrader generate_assignment`` / ``release_assignment`` of
    exam-02 and of the practice assignment; a student, as in their pod (config.yaml's nbgrader config,
    the pod's token), fetches both, submits exam-02 and, after running the practice notebook, the
    practice file (plus a file forged in another student's name); ``nbgrader collect`` brings them
    under the name ngshare took from the token; ``decodelab classroom autograde`` grades exam-02 in the
    sandbox; ``generate_feedback`` / ``release_feedback``, then the student's ``fetch_feedback`` gets
    the report with the score; ``decodelab classroom practice`` writes the practice report with the
    student's row and leaves the forged file out (named, exit 1)."""
    import csv
    import sys

    from test_classroom_sandbox import sandbox_or_skip

    sandbox_or_skip()  # autograde runs the student's notebook in bubblewrap (skips outside CI without it)
    prof = _lecturer(chart_hub)
    prof_token = prof.token()
    public = f"{chart_hub.url}/services/ngshare"
    _ng("POST", f"{public}/course/decodelab", prof_token)  # as a spawn makes it (no instructors); 409 when there
    student = _approved(chart_hub, prof, "grade")
    name, victim = student.name, f"victim{secrets.token_hex(2)}"
    # by hand here, as the spawn hook does (test_a_students_spawn_enrols_them_in_ngshares_course)
    assert _ng("POST", f"{public}/student/decodelab/{name}", prof_token, first_name="-", last_name="-", email="-")[1]["success"]

    base = hubkit.open_tmp("grading-vm")
    course = base / "course"
    hubkit.init_course(course, None, lecturer="lecturer")
    assert (course / "source" / "practice" / "practice.ipynb").is_file()
    lecturer = {k: v for k, v in os.environ.items() if k not in ("JUPYTERHUB_USER", "JUPYTERHUB_API_TOKEN")}
    lecturer.update(PYTHONPATH=str(chartkit.REPO),
                    PATH=f"{Path(sys.executable).parent}{os.pathsep}{lecturer.get('PATH', '')}",
                    DECODELAB_NGSHARE_URL=public, JUPYTERHUB_API_TOKEN=prof_token)
    section = chartkit.guide_section(7)
    nbgrader = [sys.executable, "-m", "nbgrader"]
    for a in ("exam-02", "practice"):
        for step in ("generate_assignment", "release_assignment"):
            assert f"nbgrader {step} {a}" in section, (step, a)
            _run([*nbgrader, step, a], course, lecturer)

    home = base / "home"
    env = _student_side(home, name, student.token(), chart_hub.ngshare)
    listed = _run([*nbgrader, "list"], home, env).stdout + _run([*nbgrader, "list"], home, env).stderr
    assert "exam-02" in listed and "practice" in listed, listed
    for a in ("exam-02", "practice"):
        _run([*nbgrader, "fetch_assignment", a], home, env)
    from decodelab.assess.quiz import AnswerStore, load_quizzes

    q = next(q for q in load_quizzes() if q.kind == "single")
    AnswerStore(root=env["DECODELAB_ANSWERS_DIR"]).save(q.id, q.choices[0].id)  # as the quiz widget saves it
    _run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace", "practice.ipynb"],
         home / "practice", env, timeout=180)
    mine = home / "practice" / f"decodelab-course-{name}.json"
    assert json.loads(mine.read_text(encoding="utf-8"))["student_id"] == name
    forged = json.loads(mine.read_text(encoding="utf-8"))
    forged["student_id"] = forged["shuffle_key"] = victim
    (home / "practice" / f"decodelab-course-{victim}.json").write_text(json.dumps(forged), encoding="utf-8")
    # a folder named like one of the course folder's: ngshare-exchange 0.5.3's collect looked for it in
    # the current folder (the course folder, where source/ exists) and stopped with FileNotFoundError
    (home / "practice" / "source").mkdir()
    (home / "practice" / "source" / "x.txt").write_text("x", encoding="utf-8")
    for a in ("exam-02", "practice"):
        _run([*nbgrader, "submit", a], home, env)

    assert "nbgrader collect exam-02" in section and "nbgrader collect practice" in section
    for a in ("exam-02", "practice"):
        _run([*nbgrader, "collect", a], course, lecturer)
    assert (course / "submitted" / name / "exam-02" / "exam-02.ipynb").is_file()
    assert (course / "submitted" / name / "practice" / "source" / "x.txt").read_text(encoding="utf-8") == "x"
    assert "decodelab classroom autograde /srv/decodelab-course exam-02" in section
    _run([sys.executable, "-m", "decodelab", "classroom", "autograde", str(course), "exam-02"], course, lecturer,
         timeout=600)
    for step in ("generate_feedback", "release_feedback"):
        assert f"nbgrader {step} exam-02" in section, step
        _run([*nbgrader, step, "exam-02"], course, lecturer)
    _run([*nbgrader, "fetch_feedback", "exam-02"], home, env)
    (report,) = (home / "exam-02" / "feedback").glob("*/exam-02.html")
    assert "exam-02" in report.read_text(encoding="utf-8") and "Score" in report.read_text(encoding="utf-8")

    assert "decodelab classroom practice /srv/decodelab-course -o" in section
    out = base / "practice-report.csv"
    r = subprocess.run([sys.executable, "-m", "decodelab", "classroom", "practice", str(course), "-o", str(out)],
                       cwd=base, env=lecturer, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)  # written, with a file left out
    assert f"decodelab-course-{victim}.json" in r.stderr and "다른 이름의 파일" in r.stderr, r.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    assert [row["student_id"] for row in rows] == [name] and rows[0][q.id] in ("0", "1"), rows
    assert sorted(p.name for p in (base / "practice-report-files").iterdir()) == [f"decodelab-course-{name}.json"]


def _server_environ(user: str) -> dict[str, str]:
    """The environment the hub gave ``user``'s running server (its process's /proc/PID/environ)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            raw = (proc / "environ").read_bytes()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
        if env.get("JUPYTERHUB_USER") == user and env.get("JUPYTERHUB_API_TOKEN"):
            found.append(env)
    assert found, f"no server process of {user}"
    assert len({e["JUPYTERHUB_API_TOKEN"] for e in found}) == 1, len(found)
    return found[0]


def _poll(method: str, url: str, token: str | None, body: dict | None = None) -> tuple[int, dict]:
    """One class poll API call with a hub token, as the widget sends it; (status, JSON answer)."""
    import httpx

    headers = {"Authorization": f"token {token}"} if token else {}
    r = httpx.request(method, url, headers=headers, json=body, timeout=60, follow_redirects=False)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, {"body": r.text[:200]}


def test_class_poll_pod_through_the_charts_hub(chart_hub):
    """The class poll's container (classroom/k8s/class-poll.yaml: its command with --listen-all, its
    environment and the Secret's token) behind the chart's JupyterHub 5.5, registered as
    config.yaml's URL-only service: the hub lists it and proxies /services/decodelab-polls/. A
    student's server, spawned by the hub with the values' Spawner.server_token_scopes and
    singleuser.extraEnv, holds a token with the poll's access scope and DECODELAB_POLLS_URL; with
    that token the student posts a prediction over the direct URL (as a pod reaches
    http://decodelab-polls:8080) and reads it back; a second student (a token of hub.loadRoles'
    ``user`` role) posts through the hub's public URL and reads only their own answer; the lecturer
    (admin) reads the room's distribution with names; neither student reads the distribution, the
    list of items, or closes an item; a token without the access scope and no token are refused."""
    from decodelab.assess.exercises.classpoll import hub_endpoint
    from decodelab.classroom.polls import ACCESS_SCOPE, SERVICE

    values = chartkit.merged_values(_public_install())
    item = "03-predict-speedup-20x"  # kind: number
    prof = _lecturer(chart_hub)
    services = prof.hub_api("GET", "/services").json()
    assert SERVICE in services and services[SERVICE]["url"].startswith("http://127.0.0.1:"), services
    assert services[SERVICE]["command"] in ([], None) and not services[SERVICE].get("pid"), services[SERVICE]
    public = f"{chart_hub.url}/services/{SERVICE}/api"
    direct = f"{chart_hub.polls}/api"

    students = [_approved(chart_hub, prof, "poll") for _ in range(2)]
    names = [s.name for s in students]

    # the first student's server, as the hub spawns it with the values: its token and environment
    r = students[0].spawn()
    assert r.status_code in (201, 202), (r.status_code, r.text, chart_hub.log_text()[-3000:])
    students[0].wait_ready(120)
    env = _server_environ(names[0])
    assert env["DECODELAB_POLLS_URL"] == values["singleuser"]["extraEnv"]["DECODELAB_POLLS_URL"]
    assert env["DECODELAB_POLLS_URL"] == f"http://{SERVICE}:8080/services/{SERVICE}"
    url, server_token = hub_endpoint(env)  # what the student's widget sends, and where
    assert url.replace(f"http://{SERVICE}:8080", chart_hub.polls.split("/services/")[0]) == chart_hub.polls
    import httpx

    whoami = httpx.get(f"{chart_hub.url}/hub/api/user", headers={"Authorization": f"token {server_token}"}, timeout=60).json()
    assert whoami["name"] == names[0] and ACCESS_SCOPE in whoami["scopes"], whoami
    # the server's own scopes, narrowed to this user and server, plus the poll's: no more than that
    assert all(s == ACCESS_SCOPE or s.endswith((f"!user={names[0]}", f"!server={names[0]}/"))
               for s in whoami["scopes"]), whoami["scopes"]

    status, answer = _poll("POST", f"{direct}/answers/{item}", server_token, {"value": 4})
    assert status == 200 and answer["student"] == names[0] and answer["value"] == 4.0, (status, answer)
    status, answer = _poll("GET", f"{direct}/answers/{item}", server_token)
    assert status == 200 and (answer["student"], answer["value"]) == (names[0], 4.0), (status, answer)

    # the second student: a token of the user role (hub.loadRoles.user), through the hub's proxy
    second = students[1].token()
    status, answer = _poll("GET", f"{public}/answers/{item}", second)
    assert status == 404, (status, answer)  # no answer yet: never the first student's
    status, answer = _poll("POST", f"{public}/answers/{item}", second, {"value": 20})
    assert status == 200 and answer["student"] == names[1], (status, answer)

    # the lecturer (the hub's admin) reads the room, names only when asked
    prof_token = prof.token()
    status, room = _poll("GET", f"{public}/items/{item}?names=1", prof_token)
    assert status == 200, (status, room, (chart_hub.course / f"{SERVICE}.log").read_text(errors="replace")[-2000:])
    assert room["count"] == 2 and room["values"] == [4.0, 20.0] and room["state"] == "open", room
    assert room["names"] == {names[0]: 4.0, names[1]: 20.0}, room
    status, room = _poll("GET", f"{direct}/items/{item}", prof_token)
    assert status == 200 and "names" not in room and room["values"] == [4.0, 20.0], (status, room)

    # the students: no distribution, no list, no steering; a token without the scope, no token: nothing
    for token, base in ((server_token, direct), (second, public)):
        for method, path in (("GET", f"items/{item}?names=1"), ("GET", f"items/{item}"), ("GET", "items"),
                             ("POST", f"items/{item}/close"), ("POST", f"items/{item}/reset")):
            status, answer = _poll(method, f"{base}/{path}", token)
            assert status == 403 and "names" not in answer and "values" not in answer, (method, path, status, answer)
    r = students[1].hub_api("POST", f"/users/{names[1]}/tokens", json={"scopes": ["read:users:name!user"],
                                                                       "expires_in": 600})
    assert r.status_code == 201, r.text
    status, answer = _poll("POST", f"{direct}/answers/{item}", r.json()["token"], {"value": 1})
    assert status == 403, (status, answer)
    status, answer = _poll("POST", f"{direct}/answers/{item}", None, {"value": 1})
    assert status == 401, (status, answer)
    status, room = _poll("GET", f"{direct}/items/{item}?names=1", prof_token)
    assert room["names"] == {names[0]: 4.0, names[1]: 20.0}, room  # the refused posts changed nothing
    students[0].hub_api("DELETE", f"/users/{names[0]}/server")


def _enrolled(ngshare: str, name: str, token: str) -> bool:
    """Whether ngshare's course ``decodelab`` lists ``name`` as a student (asked with ``name``'s own
    token: ngshare answers a student about themself only when enrolled)."""
    status, answer = _ng("GET", f"{ngshare}/student/decodelab/{name}", token)
    return bool(answer.get("success")) and answer.get("username") == name


def test_a_students_spawn_enrols_them_in_ngshares_course(chart_hub):
    """lecturer/classroom.md 7.5 has no hand enrolment: a student whose server spawns is a student of
    ngshare's course ``decodelab`` (made on first use), enrolled by config.yaml's hub.extraConfig
    with the one-server code (decodelab/classroom/enrol.py, mounted by --set-file) and the token of
    the token-only service ``decodelab-enrol``, ngshare's admin; not before the spawn. The lecturer
    (ngshare's admin) sees them in the course's list."""
    prof = _lecturer(chart_hub)
    student = _approved(chart_hub, prof, "enrol")
    name = student.name
    token = student.token()
    assert not _enrolled(chart_hub.ngshare, name, token)  # logged in, no server yet: not enrolled

    assert student.spawn().status_code in (201, 202)
    student.wait_ready(120)
    assert _enrolled(chart_hub.ngshare, name, token), chart_hub.log_text()[-3000:]
    status, answer = _ng("GET", f"{chart_hub.url}/services/ngshare/students/decodelab", prof.token())
    assert answer["success"] and name in [s["username"] for s in answer["students"]], (status, answer)
    assert f"{name} is not enrolled" not in chart_hub.log_text()


def test_with_the_lti_overlay_a_spawn_enrols_a_name_from_the_lms():
    """The guide's LTI install (config.yaml + config-lti.yaml + enrol.py's --set-file) on the chart's
    hub with ngshare's pod beside it: a user the LTI authenticator let in, under a name other than
    ``lecturer`` (made here through the hub's API by a test-only admin service: no LMS signs
    launches on this machine), is enrolled in ngshare's course when their server spawns."""
    import time

    import httpx

    (cmd,) = [c for c in chartkit.helm_commands(chartkit.guide_section(7)) if "classroom/config-lti.yaml" in c.values]
    values = chartkit.merged_values(cmd)
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"].endswith("LTI13Authenticator")
    admin_token = secrets.token_hex(32)
    values["hub"]["services"]["test-admin"] = {}
    values["hub"]["extraConfig"]["zz-test-admin"] = (  # after the course's snippets (sorted keys)
        f"[s for s in c.JupyterHub.services if s['name'] == 'test-admin'][0]['api_token'] = {admin_token!r}\n"
        "c.JupyterHub.load_roles += [{'name': 'test-admin', 'services': ['test-admin'],\n"
        "                             'scopes': ['admin:users', 'admin:servers', 'tokens']}]\n")
    hub = _start(values, "chart-hub-lti", ngshare=True)
    try:
        assert "Using Authenticator: ltiauthenticator.lti13.auth.LTI13Authenticator" in hub.log_text()[:8000]
        api = httpx.Client(base_url=f"{hub.url}/hub/api", headers={"Authorization": f"token {admin_token}"}, timeout=60)
        name = f"lms-{secrets.token_hex(3)}"
        assert api.post(f"/users/{name}").status_code == 201
        token = api.post(f"/users/{name}/tokens", json={"note": "decodelab test", "expires_in": 600}).json()["token"]
        assert not _enrolled(hub.ngshare, name, token)
        assert api.post(f"/users/{name}/server").status_code in (201, 202)
        deadline = time.monotonic() + 120
        while not ((api.get(f"/users/{name}").json().get("servers") or {}).get("", {}).get("ready")):
            assert time.monotonic() < deadline, hub.log_text()[-3000:]
            time.sleep(0.5)
        assert _enrolled(hub.ngshare, name, token), hub.log_text()[-3000:]
    finally:
        _stop(hub)
