"""Running students' code at autograde time: never as root, never where the course can be read.

Lecturer's side. Two things run a student's code while nbgrader autogrades:

- the notebook's kernel (nbgrader's ``Execute`` step): :class:`SandboxedExecute` starts it through
  :class:`SandboxKernelManager`;
- an edit-the-code task's function: :func:`run_function` runs the answer cell's source alone in a
  fresh interpreter, feeds it the task's inputs, and returns only what the function returned.

Both are wrapped by :func:`command` in Debian's bubblewrap (``bwrap``, https://github.com/containers/bubblewrap):

- a new mount namespace that holds only the system folders (``/usr``, ``/etc``), the Python that runs
  the kernel and the decodelab package folder (never the repository around it, whose
  ``classroom/exam/`` is the bank), a throwaway copy of the submission folder, and empty ``/tmp``:
  the course folder (``gradebook.db``, ``exam/``, ``source/``, the hub's database and cookie secret),
  the exchange, ``/home``, ``/root`` and other students' submissions are not there at all;
- new PID, network (no network: the kernel talks to nbgrader over Unix sockets in a folder bound
  into the sandbox), IPC and UTS namespaces; ``--die-with-parent``, ``--new-session``;
- a real unprivileged user: started as root (the usual case, ``sudo decodelab classroom autograde``),
  the code runs as the system account ``decodelab-grader`` (``$DECODELAB_GRADER_USER``; created with
  ``useradd --system`` on first use), switched to with ``setpriv`` inside the sandbox, so the file
  permissions of the host apply to it as well; started as an ordinary user, bubblewrap's user
  namespace keeps that user (and the mount namespace hides the course);
- limits (``prlimit``): CPU seconds, address space, file size, no core files, and (grader account
  only) processes.

Root without bubblewrap is refused (:class:`SandboxError`, Korean message). An ordinary user without
bubblewrap is refused too, unless ``DECODELAB_AUTOGRADE_SANDBOX=off`` says to run unsandboxed as that
user (a warning is printed; lecturer/grading.md says what that leaves open).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Integer

__all__ = ["GRADER_USER", "Limits", "SandboxError", "SandboxKernelManager", "SandboxedExecute", "command",
           "mode", "probe", "run_function"]

GRADER_USER = "decodelab-grader"
"""The system account students' code runs as when autograde is started as root."""

_SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ENV_KEEP = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "MPLBACKEND", "HF_HUB_OFFLINE",
             "TRANSFORMERS_OFFLINE", "NBGRADER_EXECUTION", "JPY_PARENT_PID", "JPY_SESSION_NAME")


class SandboxError(RuntimeError):
    """Students' code cannot be run safely here (Korean message saying what to do)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed process (``prlimit``): CPU seconds, address space in
    MiB, largest file written in MiB, processes of the grader account (0: not limited)."""

    cpu_s: int = 600
    memory_mb: int = 4096
    file_mb: int = 64
    nproc: int = 256

    def args(self, with_nproc: bool) -> list[str]:
        out = [f"--cpu={self.cpu_s}", f"--as={self.memory_mb << 20}", f"--fsize={self.file_mb << 20}", "--core=0"]
        if with_nproc and self.nproc:
            out.append(f"--nproc={self.nproc}")
        return out


def mode() -> str:
    """How students' code is run here: ``"account"`` (root: bubblewrap + the grader account),
    ``"userns"`` (an ordinary user: bubblewrap's user namespace) or ``"off"`` (an ordinary user
    without bubblewrap who set ``DECODELAB_AUTOGRADE_SANDBOX=off``).

    Raises:
        SandboxError: (Korean) root without bubblewrap, or an ordinary user without bubblewrap
            who did not opt out.
    """
    have = shutil.which("bwrap") is not None
    off = os.environ.get("DECODELAB_AUTOGRADE_SANDBOX", "").strip().lower() in ("off", "0", "no", "none")
    if os.geteuid() == 0:
        if not have:
            raise SandboxError(
                "학생 코드를 root 권한으로 실행하지 않습니다: 채점(autograde)은 bubblewrap 안에서 권한 없는 채점 계정"
                f"({GRADER_USER})으로 학생 노트북을 실행하는데, 이 컴퓨터에 bubblewrap(bwrap)이 없습니다. "
                "'apt-get install -y bubblewrap'으로 설치한 뒤 다시 실행하세요.")
        return "account"
    if have:
        return "userns"
    if off:
        warnings.warn("DECODELAB_AUTOGRADE_SANDBOX=off: 학생 코드를 격리 없이 이 사용자 권한으로 실행합니다 "
                      "(학생 코드가 이 사용자가 읽을 수 있는 모든 파일을 읽을 수 있습니다)", stacklevel=2)
        return "off"
    raise SandboxError(
        "채점(autograde)은 학생 코드를 bubblewrap 안에서 실행하는데, 이 컴퓨터에 bubblewrap(bwrap)이 없습니다. "
        "'sudo apt-get install -y bubblewrap'으로 설치하세요 (격리 없이 이 사용자 권한으로 실행하려면 "
        "DECODELAB_AUTOGRADE_SANDBOX=off를 주세요: 권하지 않습니다, lecturer/grading.md 참고).")


def grader_account(name: str | None = None) -> tuple[int, int]:
    """(uid, gid) of the grader account; created (``useradd --system``, no home, no login shell)
    when missing. Root only.

    Raises:
        SandboxError: (Korean) the account cannot be created, or it is root.
    """
    name = name or os.environ.get("DECODELAB_GRADER_USER") or GRADER_USER
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        r = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                            "--shell", "/usr/sbin/nologin", "--comment", "decodelab autograde", name],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SandboxError(f"채점 계정 {name!r}을(를) 만들지 못했습니다: {r.stderr.strip()} "
                               f"('useradd --system --user-group {name}'로 직접 만드세요)") from None
        pw = pwd.getpwnam(name)
    if pw.pw_uid == 0 or pw.pw_gid == 0:
        raise SandboxError(f"채점 계정 {name!r}이(가) root 권한입니다: 권한 없는 계정을 DECODELAB_GRADER_USER로 주세요")
    return pw.pw_uid, pw.pw_gid


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def python_binds(executable: str | None = None, *, packages: bool = True, exclude: list[str] = ()) -> list[str]:
    """Host folders a sandboxed Python needs, read-only: its prefixes and, with ``packages``, the
    virtualenv, the ``decodelab`` package folder (only that folder: an editable checkout's root holds
    ``classroom/exam/``, the bank), the user's site-packages and the ``$PYTHONPATH`` folders (a
    folder holding a ``decodelab/`` package gives only that). Never ``sys.path``'s script or working
    folder (``python -m nbgrader`` in the course folder puts the course there), never a folder in,
    or above, one of ``exclude`` (the course folder), never ``/tmp`` or a folder above it (the
    sandbox's ``/tmp`` is empty). A prefix below ``/tmp`` (a checkout or virtualenv made there) is
    bound over that empty ``/tmp``: without it the students' Python would not start."""
    exe = os.path.realpath(executable or sys.executable)
    roots = [os.path.realpath(sys.base_prefix), str(Path(exe).parent.parent)]
    if packages:
        import site

        import decodelab

        roots.append(os.path.realpath(sys.prefix))
        roots.append(str(Path(decodelab.__file__).resolve().parent))
        user = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
        for p in [user, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]:
            if not p or not os.path.isdir(p):
                continue
            p = os.path.realpath(p)
            if os.path.isfile(os.path.join(p, "decodelab", "__init__.py")):
                continue  # the repository root: its decodelab/ is there already, its classroom/exam/ must not be
            roots.append(p)
    bad = [os.path.realpath(e) for e in exclude]
    out: list[str] = []
    for r in sorted(set(roots), key=len):
        if r == "/" or _under(r, out + list(_SYSTEM)) or not os.path.exists(r) or _under("/tmp", [r]):
            continue
        if any(_under(r, [b]) or _under(b, [r]) for b in bad):
            continue
        out.append(r)
    return out


def command(argv: list[str], *, ro: list[str] = (), rw: list[tuple[str, str]] = (), chdir: str = "/tmp",
            env: dict[str, str] | None = None, limits: Limits = Limits(), how: str | None = None,
            account: tuple[int, int] | None = None) -> list[str]:
    """The command line that runs ``argv`` in the sandbox.

    Args:
        argv: the program and its arguments (paths as seen inside).
        ro: host folders bound read-only at the same path (beside the system folders).
        rw: (host folder, path inside) bound writable.
        chdir: working folder inside.
        env: the whole environment inside (nothing else is inherited).
        limits: :class:`Limits`.
        how: :func:`mode`'s answer (asked when None); ``"off"`` returns ``prlimit ... argv``.
        account: (uid, gid) for ``"account"`` (default :func:`grader_account`).

    Raises:
        SandboxError: see :func:`mode` and :func:`grader_account`.
    """
    how = how or mode()
    lim = ["prlimit", *limits.args(how == "account"), "--", *argv]
    if how == "off":
        return lim
    args = ["bwrap"]
    made: set[str] = {"/"}

    def parents(path: str) -> None:  # bwrap would make missing parents 0700: make them 0755 first
        parts = Path(path).parts
        for i in range(2, len(parts)):
            d = str(Path(*parts[:i]))
            if d not in made:
                made.add(d)
                args.extend(["--perms", "0755", "--dir", d])

    for p in _SYSTEM:
        if os.path.islink(p):
            args.extend(["--symlink", os.readlink(p), p])
        elif os.path.isdir(p):
            args.extend(["--ro-bind", p, p])
    args.extend(["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"])
    for p in ro:
        parents(p)
        args.extend(["--ro-bind", p, p])
    for host, inside in rw:
        parents(inside)
        args.extend(["--bind", host, inside])
    args.extend(["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--die-with-parent", "--new-session", "--clearenv"])
    for k, v in (env or {}).items():
        args.extend(["--setenv", k, v])
    args.extend(["--chdir", chdir])
    if how == "account":
        uid, gid = account or grader_account()
        args.extend(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                     "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *lim])
    else:
        args.extend(["--unshare-user", "--", *lim])
    return args


def _env(source: dict[str, str], python: str) -> dict[str, str]:
    env = {k: source[k] for k in _ENV_KEEP if k in source}
    env.update(HOME="/tmp", TMPDIR="/tmp", MPLCONFIGDIR="/tmp/matplotlib", IPYTHONDIR="/tmp/ipython",
               JUPYTER_RUNTIME_DIR="/tmp/jupyter", PATH=f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin")
    if source.get("PYTHONPATH"):
        env["PYTHONPATH"] = source["PYTHONPATH"]
    return env


def _give(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is None:
        return
    os.chown(path, *owner)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.chown(os.path.join(root, n), *owner, follow_symlinks=False)


def probe() -> dict:
    """Run a tiny Python through the sandbox; returns what it saw (``uid``, ``course_visible``...).

    Raises:
        SandboxError: (Korean) the sandbox does not start (its error message quoted).
    """
    how = mode()
    py = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    code = "import json, os; print(json.dumps({'uid': os.getuid(), 'gid': os.getgid()}))"
    cmd = command([py, "-I", "-c", code], ro=python_binds(py, packages=False), env=_env({}, py), how=how,
                  limits=Limits(cpu_s=20, memory_mb=1024))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SandboxError(f"bubblewrap 격리 환경을 시작하지 못했습니다: {r.stderr.strip()[-400:]} "
                           "(사용자 네임스페이스가 막힌 컴퓨터라면 root로 실행하세요: sudo decodelab classroom autograde ...)")
    return {**json.loads(r.stdout.strip().splitlines()[-1]), "mode": how}


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in :func:`command`'s sandbox (nbgrader's autograde).

    The connection file and the kernel's Unix sockets (``transport="ipc"``) lie in a fresh folder
    bound into the sandbox; the kernel's working folder is a throwaway copy of the submission folder
    at the same path (so :func:`decodelab.classroom.student.student_id` still reads the student from it).
    """

    cpu_seconds = Integer(600, help="CPU seconds of one notebook's kernel").tag(config=True)
    memory_mb = Integer(4096, help="address space of the kernel in MiB").tag(config=True)

    _box: str | None = None

    async def _async_pre_start_kernel(self, **kw):
        how = mode()
        owner = grader_account() if how == "account" else None
        cwd = os.path.realpath(kw.get("cwd") or os.getcwd())
        box = Path(tempfile.mkdtemp(prefix="decodelab-autograde-"))
        self._box = str(box)
        run, work = box / "run", box / "work"
        run.mkdir(mode=0o700)
        shutil.copytree(cwd, work, symlinks=True)
        work.chmod(0o700)
        _give(run, owner)
        _give(work, owner)
        self.transport = "ipc"
        self.cache_ports = False
        self.connection_file = str(run / "kernel.json")
        self.ip = str(run / "kernel")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        if owner:
            os.chown(self.connection_file, *owner)
        py = kernel_cmd[0]
        limits = Limits(cpu_s=self.cpu_seconds, memory_mb=self.memory_mb)
        course = [str(Path(cwd).parents[2])] if Path(cwd).parent.parent.name == "autograded" else []
        wrapped = command(kernel_cmd, ro=python_binds(py, exclude=[cwd, *course]), rw=[(str(run), str(run)), (str(work), cwd)], chdir=cwd,
                          env=_env(kw.get("env") or dict(os.environ), py), limits=limits, how=how, account=owner)
        kw["cwd"] = str(box)
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return wrapped, kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._box:
            shutil.rmtree(self._box, ignore_errors=True)
            self._box = None


class SandboxedExecute(Execute):
    """nbgrader's ``Execute`` step with :class:`SandboxKernelManager` (nbgrader passes its own
    kernel manager class as an argument, which configuration cannot override)."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxKernelManager
        super().__init__(*args, **kwargs)


_RUNNER = r"""
import json, os, sys
req = json.loads(sys.stdin.read())
sys.stdin.close()
out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
ns = {"__name__": "__answer__"}
f, err = None, None
try:
    exec(compile(req["source"], "<답안>", "exec"), ns)
    f = ns.get(req["function"])
    if not callable(f):
        err = req["function"] + "가 함수가 아닙니다"
except BaseException as e:
    err = "오류 " + type(e).__name__ + ": " + str(e)[:200]
res = []
for args in req["cases"]:
    if err:
        res.append({"error": err})
        continue
    try:
        res.append({"value": float(f(*args))})
    except BaseException as e:
        res.append({"error": "오류 " + type(e).__name__ + ": " + str(e)[:200]})
del req, ns, f
out.write(json.dumps(res))
out.flush()
"""


def run_function(source: str, function: str, cases: list, *, timeout_s: float = 30.0,
                 limits: Limits = Limits(cpu_s=20, memory_mb=1024, file_mb=1, nproc=16)) -> list[dict]:
    """Run a student's ``function`` from ``source`` (an answer cell) on each argument tuple of
    ``cases`` in a fresh sandboxed interpreter (``python -I -S``: the standard library only, no
    decodelab, no bank, no expected value; inputs go in on stdin).

    Returns one dict per case: ``{"value": float}`` or ``{"error": Korean text}``; every case is an
    error when the process dies, runs out of time or returns something unreadable.

    Raises:
        SandboxError: see :func:`mode`.
    """
    py = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    how = mode()
    cmd = command([py, "-I", "-S", "-c", _RUNNER], ro=python_binds(py, packages=False), env=_env({}, py),
                  limits=limits, how=how)
    req = json.dumps({"source": source, "function": function, "cases": [list(c) for c in cases]})
    fail = lambda why: [{"error": why} for _ in cases]  # noqa: E731
    with tempfile.TemporaryFile() as out:
        try:
            p = subprocess.run(cmd, input=req.encode(), stdout=out, stderr=subprocess.DEVNULL, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return fail(f"시간 초과 ({timeout_s:g}초)")
        out.seek(0)
        raw = out.read(1 << 20)
    try:
        res = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return fail(f"결과가 없습니다 (프로세스 종료 코드 {p.returncode})")
    if not (isinstance(res, list) and len(res) == len(cases) and all(isinstance(r, dict) for r in res)):
        return fail("결과를 읽을 수 없습니다")
    clean = []
    for r in res:
        v = r.get("value")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            clean.append({"value": float(v)})
        else:
            clean.append({"error": str(r.get("error", "값이 없습니다"))[:300]})
    return clean
