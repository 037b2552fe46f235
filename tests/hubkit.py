"""Drive a real JupyterHub of ``decodelab classroom`` over HTTP: start it, log students in, spawn
their servers, call their Jupyter server API, run code in a kernel.

Shared by the hub tests (``tests/test_classroom_hub.py``, ``_hub_native.py``, ``_exchange.py``,
``_hub_init.py``) and ``benchmarks/bench_classroom.py`` (not a test module itself). Everything
talks to 127.0.0.1 only; each hub gets free ports for the proxy, its API and the hub itself, so
several can run at once.

The students' servers never run as root (one system user per student in class mode,
``decodelab-demo`` in the demo), so what they must reach lives in folders every user may enter
(:func:`open_tmp`, not pytest's 0700 temp folders), and their Python is one an unprivileged user
can execute (:func:`student_python`; this machine's own interpreter may sit in root's home).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from decodelab.serving import ServingError, wait_until_ready

REPO = Path(__file__).resolve().parents[1]
#: under CI a classroom test that cannot run fails (the set-up installs what it needs); elsewhere it skips
ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


#: the demo hub's students and lecturer, and their passwords (new for each test run)
DEMO_STUDENTS = ["alice", "bob", "carol"]
LECTURER = "lecturer"
DEMO_PASSWORD = "demo-" + secrets.token_hex(8)
ADMIN_PASSWORD = "admin-" + secrets.token_hex(20)

def unavailable(what: str, reason: str):
    """Skip the test, saying ``reason``; under CI fail instead (``what``: which test, in the message)."""
    import pytest

    if ON_CI:
        pytest.fail(f"{what} cannot run under CI: {reason}")
    pytest.skip(reason)
HUB_START_S = 90
SPAWN_S = 240


def sync_playwright(what: str, chromium: str):
    """playwright's ``sync_playwright``, or :func:`unavailable` when there is no Chromium at
    ``chromium`` or no playwright package (``what``: which test, in the message)."""
    if not Path(chromium).is_file():
        unavailable(what, f"no Chromium at {chromium} (bash scripts/install_browser.sh, or apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright as play
    except ImportError:
        unavailable(what, "the playwright Python package is not installed (bash scripts/install_browser.sh)")
    return play


def remove_users(names) -> None:
    """``userdel --remove`` each of ``names`` that exists (the hub created it at a spawn)."""
    import pwd

    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        subprocess.run(["userdel", "--remove", name], capture_output=True)


def stop_process(proc: subprocess.Popen, timeout_s: float = 20) -> None:
    """SIGTERM ``proc`` if it still runs, SIGKILL it after ``timeout_s`` seconds, and reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def log_in_and_spawn(hub: "Hub", names, password: str) -> dict[str, "Student"]:
    """Each of ``names`` logged in with the login form and their server spawned, then all waited
    for (the spawns run together); ``{name: Student}``."""
    out = {name: Student(hub, name) for name in names}
    for s in out.values():
        r = s.login(password)
        assert r.status_code == 200 and s.logged_in, (s.name, r.status_code, r.url)
        assert s.spawn().status_code in (201, 202)
    for s in out.values():
        s.wait_ready()
    return out

def open_tmp(prefix: str) -> Path:
    """A new folder under /tmp that every user may enter (mode 0755; pytest's own temp folders
    are 0700), removed when this process exits."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix=f"decodelab-{prefix}-", dir="/tmp"))
    path.chmod(0o755)
    atexit.register(shutil.rmtree, path, True)
    return path


def _runs_unprivileged(python: str) -> bool:
    """Whether user ``nobody`` can start ``python`` (always True when we are not root: then the
    servers run as ourselves)."""
    if os.geteuid() != 0:
        return True
    try:
        return subprocess.run([python, "-c", "pass"], user=65534, group=65534, extra_groups=[], cwd="/",
                              env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def base_python() -> str:
    """The Python to make the students' virtualenvs from: this one's base interpreter when an
    unprivileged user can run it, else the system's of the same version (``/usr/bin/python3.X``;
    the packages come from this Python's site-packages, which need the same X)."""
    base = getattr(sys, "_base_executable", sys.executable)
    if _runs_unprivileged(base):
        return base
    for folder in ("/usr/local/bin", "/usr/bin"):
        other = f"{folder}/python{sys.version_info.major}.{sys.version_info.minor}"
        if Path(other).is_file() and _runs_unprivileged(other):
            return other
    return base  # `classroom init` refuses it and says why


def _linked_venv(venv: Path, line: str, base: str | None = None) -> Path:
    """A virtualenv without pip at ``venv`` from ``base`` (default :func:`base_python`) whose
    site-packages holds a .pth with ``line`` (this Python's packages) and whose Jupyter data/config
    folders link to this Python's; returns its purelib."""
    subprocess.run([base or base_python(), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    purelib = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           text=True).strip())
    (purelib / "zz-test-packages.pth").write_text(line + "\n", encoding="utf-8")
    # and Jupyter's data and config files of those packages (server extensions such as JupyterLab,
    # lab extensions such as ipywidgets'), found under sys.prefix as a real install puts them
    for sub in ("etc/jupyter", "share/jupyter"):
        if (Path(sys.prefix) / sub).is_dir():
            (venv / sub).parent.mkdir(parents=True, exist_ok=True)
            (venv / sub).symlink_to(Path(sys.prefix) / sub)
    return purelib


@functools.lru_cache(maxsize=None)
def student_python() -> str:
    """A Python for the students' servers that runs this checkout's decodelab (this Python's
    site-packages, editable install included, through ``site.addsitedir``) and that an unprivileged
    user can execute: a virtualenv in an :func:`open_tmp` folder, made once per process."""
    import sysconfig

    venv = open_tmp("students") / "venv"
    _linked_venv(venv, f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})")
    return str(venv / "bin" / "python")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy_command() -> str | None:
    """configurable-http-proxy: next to this Python (``scripts/install_hub.sh`` puts it there), else on PATH."""
    local = Path(sys.executable).parent / "configurable-http-proxy"
    return str(local) if local.is_file() else shutil.which("configurable-http-proxy")


def missing_parts() -> list[str]:
    """What this machine lacks to run a hub, each named with the command that installs it."""
    out = []
    if shutil.which("node") is None:
        out.append("node (apt-get install -y nodejs npm)")
    if proxy_command() is None:
        out.append("configurable-http-proxy (bash scripts/install_hub.sh)")
    return out


@dataclass
class Hub:
    url: str
    course: Path
    proc: subprocess.Popen
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM to the hub (it stops the proxy and the students' servers), then SIGKILL to
        whatever of its process tree is left after 30 s."""
        import psutil

        try:
            tree = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            tree = []
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _, alive = psutil.wait_procs(tree, timeout=5)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        from decodelab.classroom.hub import demo_homes

        shutil.rmtree(demo_homes(self.course), ignore_errors=True)  # a demo's homes are outside the course


def init_course(course: Path, students: list[str] | None, *, lecturer: str = "lecturer", args: list[str] = ()) -> None:
    """``decodelab classroom init course --demo-users ...`` (class mode when ``students`` is None)
    with this Python, the students' servers on :func:`student_python` unless ``args`` has
    ``--python``; raises on failure (with init's message)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    demo = ["--demo-users", ",".join(students)] if students else []
    if not any(a == "--python" or a.startswith("--python=") for a in args):
        args = [*args, "--python", student_python()]
    r = subprocess.run([sys.executable, "-m", "decodelab", "classroom", "init", str(course), *demo,
                        "--lecturer", lecturer, *args], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"classroom init failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")


def start_hub(course: Path, password: str | None = None, admin_password: str | None = None, *, extra_args: list[str] = (),
              env_extra: dict[str, str] | None = None) -> Hub:
    """Start ``decodelab classroom hub course`` on free loopback ports and wait until it answers.

    The students' servers get ``PYTHONPATH`` = this checkout (JupyterHub keeps it by default), so
    they import the decodelab under test. Raises RuntimeError with the log tail if it does not start.
    """
    port, hub_port, api_port = free_port(), free_port(), free_port()
    env = dict(os.environ)
    for key, value in (("DECODELAB_HUB_PASSWORD", password), ("DECODELAB_HUB_ADMIN_PASSWORD", admin_password)):
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               PYTHONHASHSEED="0", PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
    env.pop("DECODELAB_ANSWERS_DIR", None)
    # never the machine's /srv/nbgrader; a folder the students' users can reach (not the 0700 course)
    env["NBGRADER_EXCHANGE_ROOT"] = str(open_tmp("exchange") / "exchange")
    # the hub's ngshare and formgrader services on free ports too (their defaults, 10101 and 10102,
    # would collide between hubs started one after another or side by side by pytest-xdist)
    env["DECODELAB_NGSHARE_PORT"], env["DECODELAB_FORMGRADER_PORT"] = str(free_port()), str(free_port())
    env.update(env_extra or {})
    log = course / "hub.log"
    # no --ip: the hub's own default (127.0.0.1) is what a lecturer gets, and what the tests check
    cmd = [sys.executable, "-m", "decodelab", "classroom", "hub", str(course), "--port", str(port),
           f"--JupyterHub.hub_port={hub_port}", f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{api_port}",
           f"--ConfigurableHTTPProxy.command={proxy_command()}", *extra_args]
    fh = open(log, "wb")
    proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=course, start_new_session=True)
    fh.close()
    hub = Hub(f"http://127.0.0.1:{port}", course, proc, log)
    try:
        wait_until_ready(f"{hub.url}/hub/api/", proc, HUB_START_S, what="JupyterHub", poll_s=0.5, request_timeout_s=5)
    except ServingError as e:
        hub.stop()
        raise RuntimeError(f"{e}\n{hub.log_text()[-4000:]}") from None
    return hub


@dataclass
class Student:
    """One person's browser-like HTTP session with the hub (cookies, XSRF token)."""

    hub: Hub
    name: str
    client: httpx.Client = field(init=False)

    def __post_init__(self):
        self.client = httpx.Client(base_url=self.hub.url, follow_redirects=True, timeout=60)

    def _xsrf(self) -> str:
        return self.client.cookies.get("_xsrf", path="/hub/") or ""

    def login(self, password: str, *, spawn: bool = True) -> httpx.Response:
        """The login form, as a browser posts it; returns the last response (the hub's page or a
        login page with an error). A browser then follows the hub's redirect, which starts the
        user's server; ``spawn=False`` stops at the redirect (the session cookie is set), for a
        test that needs the login but not the server (a lecturer at /hub/authorize)."""
        self.client.get("/hub/login")
        return self.client.post("/hub/login", data={"username": self.name, "password": password,
                                                    "_xsrf": self._xsrf()}, follow_redirects=spawn)

    def signup(self, password: str) -> str:
        """NativeAuthenticator's sign-up form (class mode), as a browser posts it; returns the page's
        text (its message: created, waiting for approval, refused)."""
        self.client.get("/hub/signup")
        r = self.client.post("/hub/signup", data={"username": self.name, "signup_password": password,
                                                  "signup_password_confirmation": password, "_xsrf": self._xsrf()})
        assert r.status_code == 200, r.text[-2000:]
        return r.text

    @property
    def logged_in(self) -> bool:
        """Whether the hub gave this session its login cookie."""
        return "jupyterhub-session-id" in self.client.cookies

    def hub_api(self, method: str, path: str, **kw) -> httpx.Response:
        headers = {"X-XSRFToken": self._xsrf(), **kw.pop("headers", {})}
        return self.client.request(method, f"/hub/api{path}", headers=headers, **kw)

    def spawn(self) -> httpx.Response:
        return self.hub_api("POST", f"/users/{self.name}/server")

    def wait_ready(self, timeout_s: float = SPAWN_S) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            model = self.hub_api("GET", f"/users/{self.name}").json()
            server = (model.get("servers") or {}).get("", {})
            if server.get("ready"):
                return server
            if not server.get("pending") and not server:
                raise RuntimeError(f"{self.name}'s server stopped while starting:\n{self.hub.log_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}'s server not ready in {timeout_s} s:\n{self.hub.log_text()[-3000:]}")
            time.sleep(0.5)

    def token(self) -> str:
        """A new API token of this user (the hub gives it the user's own scopes)."""
        r = self.hub_api("POST", f"/users/{self.name}/tokens", json={"note": "decodelab test", "expires_in": 3600})
        r.raise_for_status()
        return r.json()["token"]


def sign_up(hub: Hub, name: str, password: str) -> tuple[Student, str]:
    """A new :class:`Student` of ``hub`` named ``name`` who has posted the sign-up form
    (:meth:`Student.signup`), and the page's text."""
    s = Student(hub, name)
    return s, s.signup(password)


def server_api(hub: Hub, user: str, token: str, method: str, path: str, **kw) -> httpx.Response:
    """A call to ``/user/<user>/api<path>`` with an API token."""
    return httpx.request(method, f"{hub.url}/user/{user}/api{path}", headers={"Authorization": f"token {token}"},
                         timeout=60, **kw)


def run_code(hub: Hub, user: str, token: str, kernel_id: str, code: str, timeout_s: float = 600) -> dict:
    """Execute ``code`` in a kernel through the Jupyter server's websocket (the protocol a notebook
    uses); returns ``{"status", "stdout", "error"}`` once the kernel replies and is idle again."""
    import asyncio

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    async def go() -> dict:
        url = hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{kernel_id}/channels"
        ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": user, "session": uuid.uuid4().hex,
                       "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))
        out = {"status": None, "stdout": "", "error": None}
        idle = False
        while out["status"] is None or not idle:
            raw = await asyncio.wait_for(ws.read_message(), timeout_s)
            if raw is None:
                raise RuntimeError("the kernel's websocket closed")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "stream" and msg["content"].get("name") == "stdout":
                out["stdout"] += msg["content"]["text"]
            elif kind == "error":
                out["error"] = f"{msg['content']['ename']}: {msg['content']['evalue']}"
            elif kind == "execute_reply":
                out["status"] = msg["content"]["status"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        ws.close()
        return out

    return asyncio.run(go())


def start_kernel(hub: Hub, user: str, token: str, notebook: str = "01_decode_phase.ipynb") -> str:
    """A kernel session for ``notebook`` of ``user``'s server (as opening it in JupyterLab does)."""
    r = server_api(hub, user, token, "POST", "/sessions",
                   json={"path": notebook, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}})
    r.raise_for_status()
    return r.json()["kernel"]["id"]


@dataclass
class SingleUserEnv:
    """A virtualenv built by ``classroom/install-singleuser.sh`` from a freshly built wheel."""

    python: Path
    purelib: Path
    wheel: Path
    notebooks: Path
    log: str


def build_wheel(tmp: Path) -> Path:
    """The decodelab wheel, built from a copy of this checkout (the build writes build/ and
    *.egg-info, which must not land in the checkout)."""
    src = tmp / "src"
    shutil.copytree(REPO, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".venv-*", "artifacts", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"))
    out = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = out.glob("decodelab-*.whl")
    return wheel


def singleuser_env(tmp: Path, extra: str = "classroom") -> SingleUserEnv:
    """Run the single-user image's install steps (``classroom/install-singleuser.sh``) with the
    wheel's ``extra`` (``DECODELAB_EXTRA``) into a plain virtualenv, without the torch step, with
    this Python's packages visible after the virtualenv's own (a ``.pth`` line; their Jupyter
    data/config folders linked in). ``classroom`` (one server's): offline, ``PIP_NO_INDEX``, so
    every dependency the wheel declares must be there already and nothing downloads.
    ``singleuser`` (classroom/Dockerfile's): pip may use the package index this machine's pip is
    set up with, for what this Python lacks (JupyterHub 5, the chart's major, where this Python has
    one server's 6), installed into the virtualenv ahead of this Python's. decodelab itself is the
    wheel's copy, in the virtualenv.

    Raises:
        RuntimeError: the script failed (its output in the message).
    """
    import sysconfig

    wheel = build_wheel(tmp)
    # where the students' users can run it (pytest's tmp is root's only), from a Python they can run
    venv = open_tmp("singleuser") / "venv"
    # no pip or setuptools of its own: this Python's (newer) ones come through the .pth line (a plain
    # path: the checkout's editable decodelab, a .pth of that folder, stays out; the wheel's is used)
    purelib = _linked_venv(venv, sysconfig.get_paths()["purelib"])
    py = venv / "bin" / "python"
    dest = venv.parent / "srv" / "notebooks"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env.update(DECODELAB_TORCH="", DECODELAB_EXTRA=extra, PIP_DISABLE_PIP_VERSION_CHECK="1")
    if extra == "classroom":
        env["PIP_NO_INDEX"] = "1"
    proc = subprocess.run(["bash", str(REPO / "classroom" / "install-singleuser.sh"), str(py), str(wheel), str(dest)],
                          env=env, capture_output=True, text=True, timeout=900, cwd=REPO)  # from the checkout, as the guide runs it
    if proc.returncode != 0:
        raise RuntimeError(f"install-singleuser.sh failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return SingleUserEnv(py, purelib, wheel, dest, proc.stdout)


def notebook_code_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]
