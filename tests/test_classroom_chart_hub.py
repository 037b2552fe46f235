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
``incr``/``timing``, GET and POST /hub/login answered HTTP 500 here.

The hub runs as user ``nobody`` when the test runs as root (its students' servers with it), never
as root. What it does not show: Kubernetes itself (KubeSpawner, the proxy's HTTPS, network
policies): no cluster runs these tests (lecturer/classroom.md §7 says so).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import unicodedata
from pathlib import Path

import pytest

import chartkit
import hubkit

pytestmark = [pytest.mark.slow, pytest.mark.classroom]

VENV = chartkit.REPO / ".venv-chart-hub"
NOBODY = 65534
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


def _start(values: dict, tmp_prefix: str, services: dict[str, str] | None = None):
    """The chart's hub config of ``values`` under the chart's versions, on free loopback ports;
    returns a :class:`hubkit.Hub` (stop it)."""
    py = _chart_python()
    missing = hubkit.missing_parts()
    if missing:
        pytest.skip("missing: " + ", ".join(missing))
    root = hubkit.open_tmp(tmp_prefix)
    (root / "values.json").write_text(json.dumps(values))
    (root / "jupyterhub_config.py").write_text(chartkit.LOOPBACK_CONFIG)
    (root / "homes").mkdir()
    port, hub_port, api_port = hubkit.free_port(), hubkit.free_port(), hubkit.free_port()
    env = {"PATH": os.pathsep.join([str(Path(py).parent), "/usr/local/bin", "/usr/bin", "/bin"]), "LANG": "C.UTF-8",
           "HOME": str(root), "CHART_HUB_ROOT": str(root), "CHART_HUB_PORT": str(port),
           "CHART_HUB_HUB_PORT": str(hub_port), "CHART_HUB_API_PORT": str(api_port),
           "CHART_HUB_PROXY": hubkit.proxy_command(),
           "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16)}
    env.update(services or {})
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
    try:
        from decodelab.serving import wait_until_ready

        wait_until_ready(f"{hub.url}/hub/api/", proc, hubkit.HUB_START_S, what="JupyterHub 5.5", poll_s=0.5,
                         request_timeout_s=5)
    except Exception as e:
        hub.stop()
        raise RuntimeError(f"{e}\n{hub.log_text()[-4000:]}") from None
    return hub


@pytest.fixture(scope="module")
def chart_hub():
    values = chartkit.merged_values(_public_install())
    hub = _start(values, "chart-hub")
    yield hub
    hub.stop()


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

    name = f"김민지{secrets.token_hex(2)}"
    student = hubkit.Student(chart_hub, name)
    assert "has been sent to the admin" in student.signup(STUDENT_PW)
    student.login(STUDENT_PW, spawn=False)
    assert not student.logged_in  # not approved yet
    assert prof.client.get(f"/hub/authorize/{name}").status_code == 200
    # the NFD spelling with an upper-case letter is the same account (auth.py's normalize_username)
    nfd = hubkit.Student(chart_hub, unicodedata.normalize("NFD", name).upper())
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
