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
