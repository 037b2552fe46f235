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
- limits: one memory and process budget for the student's whole run (:class:`Budget`: a cgroup
  where the machine has one, else address space x processes = the budget), a sized ``/tmp``, and per
  process (``prlimit``) CPU seconds, file size, no core files; a time limit per cell and for the
  whole notebook (:class:`SandboxedExecute`). The lecturer sets them with ``decodelab classroom init
  --grade-*`` (:data:`DEFAULT_LIMITS`, lecturer/grading.md "채점 한도").

Root without bubblewrap is refused (:class:`SandboxError`, Korean message). An ordinary user without
bubblewrap is refused too, unless ``DECODELAB_AUTOGRADE_SANDBOX=off`` says to run unsandboxed as that
user (a warning is printed; lecturer/grading.md says what that leaves open).
"""

from __future__ import annotations

import functools
import json
import os
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

__all__ = ["BOX_PREFIX", "Budget", "DEFAULT_LIMITS", "SANDBOX_USER", "Limits", "course_config_block", "SandboxError", "SandboxKernelManager", "SandboxedExecute", "command",
           "mode", "probe", "run_function"]

SANDBOX_USER = "decodelab-grader"
"""The system account students' code runs as when autograde is started as root."""

_SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ENV_KEEP = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "MPLBACKEND", "HF_HUB_OFFLINE",
             "TRANSFORMERS_OFFLINE", "NBGRADER_EXECUTION", "JPY_PARENT_PID", "JPY_SESSION_NAME")


class SandboxError(RuntimeError):
    """Students' code cannot be run safely here (Korean message saying what to do)."""


@dataclass(frozen=True)
class Limits:
    """Limits of one student's sandboxed run (a notebook's kernel and every process it starts, or one
    edit-the-code task): CPU seconds per process, the run's memory budget in MiB (all its processes
    together: see :class:`Budget`), largest file written in MiB, processes (and threads) of the run,
    size of the sandbox's ``/tmp`` in MiB (RAM-backed: it counts in the memory budget where a cgroup
    holds the run)."""

    cpu_s: int = 600
    memory_mb: int = 2048
    file_mb: int = 64
    nproc: int = 64
    tmp_mb: int = 256

    def args(self, with_nproc: bool, *, memory_mb: int | None = None, nproc: int | None = None) -> list[str]:
        """``prlimit`` options: ``memory_mb``/``nproc`` override the address space and process count
        (:class:`Budget` without a cgroup splits the budget over the processes)."""
        mem = self.memory_mb if memory_mb is None else memory_mb
        procs = self.nproc if nproc is None else nproc
        out = [f"--cpu={self.cpu_s}", f"--as={mem << 20}", f"--fsize={self.file_mb << 20}", "--core=0"]
        if with_nproc and procs:
            out.append(f"--nproc={procs}")
        return out


#: the grading limits ``decodelab classroom init`` writes unless told otherwise (lecturer/grading.md, "채점 한도"):
#: seconds per cell, seconds per notebook, the run's memory (MiB), processes and threads, /tmp (MiB), CPU s per process
DEFAULT_LIMITS = {"cell_s": 120, "notebook_s": 900, "memory_mb": 2048, "processes": 64, "tmp_mb": 256, "cpu_s": 600}

COURSE_LIMITS = """
# ---- 채점 한도: decodelab classroom init --grade-* 로 정한 값 (lecturer/grading.md, "채점 한도").
# 학생 한 명의 채점 실행(노트북 커널과 그것이 띄운 모든 프로세스)을 통틀어 셉니다.
c.Execute.timeout = {cell_s}  # 칸 하나의 시간(초)
c.SandboxedExecute.notebook_timeout = {notebook_s}  # 노트북 전체의 시간(초): 넘으면 남은 칸은 실행하지 않고 0점
c.SandboxKernelManager.memory_mb = {memory_mb}  # 메모리(MiB): 모든 프로세스를 합쳐서 (cgroup; 없으면 프로세스마다 나눔)
c.SandboxKernelManager.processes = {processes}  # 프로세스와 스레드 수
c.SandboxKernelManager.tmp_mb = {tmp_mb}  # 격리 환경 /tmp의 크기(MiB, 메모리 한도 안에 듦)
c.SandboxKernelManager.cpu_seconds = {cpu_s}  # 프로세스 하나의 CPU 시간(초)
"""


def course_config_block(**limits: int) -> str:
    """The grading limits' part of the course's ``nbgrader_config.py`` (:data:`DEFAULT_LIMITS`,
    each overridden by a keyword of the same name).

    Raises:
        ValueError: (Korean) an unknown name, or a value below 1 (memory below 256 MiB, a notebook
            shorter than a cell).
    """
    unknown = set(limits) - set(DEFAULT_LIMITS)
    if unknown:
        raise ValueError(f"모르는 채점 한도 {sorted(unknown)}: {sorted(DEFAULT_LIMITS)} 가운데서 고르세요.")
    values = {**DEFAULT_LIMITS, **limits}
    low = [k for k, v in values.items() if int(v) < 1]
    if low:
        raise ValueError(f"채점 한도 {low}은(는) 1 이상이어야 합니다.")
    if values["memory_mb"] < 256:
        raise ValueError(f"--grade-memory {values['memory_mb']}: 커널이 뜨려면 256 MiB 이상이어야 합니다.")
    if values["notebook_s"] < values["cell_s"]:
        raise ValueError(f"--grade-notebook-time {values['notebook_s']}초가 칸 하나의 시간 {values['cell_s']}초보다 "
                         "짧습니다: 노트북 전체 시간을 더 길게 주세요.")
    return COURSE_LIMITS.format(**{k: int(v) for k, v in values.items()})


#: processes of a run when no cgroup holds it: the address-space limit of each is the budget divided by this
FALLBACK_PROCESSES = 8


def _own_cgroup(controller: str | None) -> tuple[str, str] | None:
    """(mount point, this process's cgroup path) of cgroup v1 ``controller``, or of the v2 hierarchy
    when ``controller`` is None; None when it is not mounted."""
    mount = None
    try:
        for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(rest) < 3:
                continue
            if controller is None and rest[0] == "cgroup2":
                mount = fields[4]
                break
            if controller and rest[0] == "cgroup" and controller in rest[2].split(","):
                mount = fields[4]
                break
        if mount is None:
            return None
        for line in Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines():
            num, ctrls, path = line.split(":", 2)
            if (controller is None and num == "0" and ctrls == "") or (controller and controller in ctrls.split(",")):
                return mount, path
    except (OSError, ValueError):
        return None
    return None


def _writable_parent(mount: str, path: str, need: tuple[str, ...]) -> Path | None:
    """This process's cgroup folder under ``mount`` when a child can be made there with ``need``'s
    control files; None otherwise."""
    parent = Path(mount) / path.lstrip("/")
    if not (parent.is_dir() and os.access(parent, os.W_OK)):
        return None
    if need and (parent / "cgroup.subtree_control").exists():  # v2: the controllers must be given to children
        try:
            given = (parent / "cgroup.subtree_control").read_text(encoding="ascii").split()
        except OSError:
            return None
        if not all(n in given for n in need):
            return None
    return parent


class Budget:
    """The memory and process budget of one student's sandboxed run, all its processes together.

    How (:attr:`how`), the first that works here:

    - ``"systemd"``: root on a machine run by systemd: the run is a transient scope,
      ``systemd-run --scope -p MemoryMax=... -p MemorySwapMax=0 -p TasksMax=...`` (cgroup v2 through
      systemd, which owns the tree);
    - ``"cgroup2"``: a writable cgroup v2 folder of this process whose children get the ``memory``
      and ``pids`` controllers (a delegated subtree): a child ``decodelab-autograde-*`` with
      ``memory.max``, ``memory.swap.max = 0``, ``pids.max``;
    - ``"cgroup1"``: a writable cgroup v1 ``memory`` hierarchy (and ``pids`` where it is writable):
      a child with ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``), ``pids.max``;
    - ``"rlimit"`` (no cgroup): each process gets the address-space limit budget /
      :data:`FALLBACK_PROCESSES` and the run (the grader account: ``RLIMIT_NPROC``) at most that many
      processes and threads, so their product is the budget; a generous budget is needed for a
      kernel to start (its address space is larger than what it uses).

    The run joins the cgroup before ``bwrap`` starts (:attr:`prefix`); :meth:`close` kills whatever
    is left in it and removes it. The kernel is killed by the kernel's OOM killer in the cgroup when
    the run goes over the budget (a process of it, usually the largest).
    """

    def __init__(self, limits: Limits, *, root: bool | None = None):
        import uuid

        self.limits = limits
        self.name = f"decodelab-autograde-{uuid.uuid4().hex[:12]}"
        self.folders: list[Path] = []
        self.prefix: list[str] = []
        root = os.geteuid() == 0 if root is None else root
        mem = limits.memory_mb << 20
        forced = os.environ.get("DECODELAB_AUTOGRADE_BUDGET", "").strip().lower()  # tests: "rlimit"
        self.how = "rlimit"
        if forced == "rlimit":
            return
        if root and Path("/run/systemd/system").is_dir() and shutil.which("systemd-run"):
            self.how = "systemd"
            self.prefix = ["systemd-run", "--scope", "--quiet", "--collect", f"--unit={self.name}",
                           "-p", f"MemoryMax={mem}", "-p", "MemorySwapMax=0", "-p", f"TasksMax={limits.nproc}", "--"]
            return
        v2 = _own_cgroup(None)
        parent = _writable_parent(*v2, ("memory", "pids")) if v2 else None
        if parent is not None and self._make(parent, {"memory.max": mem, "memory.swap.max": 0, "pids.max": limits.nproc}):
            self.how = "cgroup2"
            return
        v1 = _own_cgroup("memory")
        parent = _writable_parent(*v1, ()) if v1 else None
        if parent is not None and self._make(parent, {"memory.limit_in_bytes": mem, "memory.memsw.limit_in_bytes": mem}):
            self.how = "cgroup1"
            pids = _own_cgroup("pids")
            pparent = _writable_parent(*pids, ()) if pids else None
            if pparent is not None:
                self._make(pparent, {"pids.max": limits.nproc})
            return

    def _make(self, parent: Path, values: dict[str, int]) -> bool:
        """Make the child ``parent/<name>`` and write ``values`` (a missing optional file, e.g.
        ``memory.memsw.limit_in_bytes`` without swap accounting, is skipped; the first one must take)."""
        child = parent / self.name
        try:
            child.mkdir(mode=0o755)
        except OSError:
            return False
        for i, (k, v) in enumerate(values.items()):
            try:
                (child / k).write_text(str(v), encoding="ascii")
            except OSError:
                if i == 0:
                    try:
                        child.rmdir()
                    except OSError:
                        pass
                    return False
        self.folders.append(child)
        return True

    @property
    def cgroup(self) -> bool:
        """Whether a cgroup holds the run (False: the ``"rlimit"`` fallback)."""
        return self.how != "rlimit"

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the budget's cgroup (unchanged for ``"rlimit"``)."""
        if self.how == "systemd":
            return [*self.prefix, *argv]
        if self.folders:
            procs = " ".join(f"{f / 'cgroup.procs'}" for f in self.folders)
            join = f'for f in {procs}; do echo $$ > "$f" || exit 125; done; exec "$@"'
            return ["/bin/sh", "-c", join, "sh", *argv]
        return list(argv)

    def prlimit_args(self, with_nproc: bool) -> list[str]:
        """``prlimit`` options of each process of the run. Without a cgroup and without a process
        limit (``with_nproc`` False: bubblewrap's user namespace keeps the lecturer's own uid, whose
        other processes RLIMIT_NPROC would count too) the address space of each process is the
        whole budget, as before: the product cannot be bounded there (lecturer/grading.md)."""
        if self.cgroup or not with_nproc:
            return self.limits.args(with_nproc)
        n = min(self.limits.nproc, FALLBACK_PROCESSES) if self.limits.nproc else FALLBACK_PROCESSES
        return self.limits.args(with_nproc, memory_mb=max(64, self.limits.memory_mb // n), nproc=n)

    def close(self) -> None:
        """Kill what is left of the run and remove its cgroup (safe to call twice)."""
        import signal
        import time

        if self.how == "systemd":
            subprocess.run(["systemctl", "stop", f"{self.name}.scope"], capture_output=True)
            return
        for child in self.folders:
            for _ in range(50):
                try:
                    pids = [int(x) for x in (child / "cgroup.procs").read_text(encoding="ascii").split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.05)
            for _ in range(100):  # the killed processes leave the cgroup a moment after they are gone
                try:
                    child.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
        self.folders = []

    def __enter__(self) -> "Budget":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
                f"({SANDBOX_USER})으로 학생 노트북을 실행하는데, 이 컴퓨터에 bubblewrap(bwrap)이 없습니다. "
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


def sandbox_account(name: str | None = None) -> tuple[int, int]:
    """(uid, gid) of the grader account; created (``useradd --system``, no home, no login shell)
    when missing. Root only.

    Only a system account is accepted (:func:`.accounts.check_service_account`: a user id below
    ``UID_MIN``): a student who signed up as ``decodelab-grader`` before the first autograde got an
    ordinary account of that name from the hub, and their own kernel could then read and change the
    submissions graded as it.

    Raises:
        SandboxError: (Korean) the account cannot be created, or it is root or an ordinary user's.
    """
    from .accounts import AccountError, check_service_account, system_account

    name = name or os.environ.get("DECODELAB_GRADER_USER") or SANDBOX_USER
    try:
        pw = system_account(name, system=True, home="/nonexistent", create_home=False, comment="decodelab autograde",
                            check=lambda existing: check_service_account(existing, "채점(autograde)"))
    except AccountError as e:
        raise SandboxError(f"채점 계정: {e} (다른 계정을 쓰려면 DECODELAB_GRADER_USER로 주세요)") from None
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
            account: tuple[int, int] | None = None, budget: Budget | None = None) -> list[str]:
    """The command line that runs ``argv`` in the sandbox.

    Args:
        argv: the program and its arguments (paths as seen inside).
        ro: host folders bound read-only at the same path (beside the system folders).
        rw: (host folder, path inside) bound writable.
        chdir: working folder inside.
        env: the whole environment inside (nothing else is inherited).
        limits: :class:`Limits` (``/tmp`` of ``limits.tmp_mb``; processes and memory of each process,
            unless ``budget`` says them).
        budget: the run's :class:`Budget`: the command starts in its cgroup, each process gets its
            ``prlimit`` share (None: ``limits`` per process, no cgroup).
        how: :func:`mode`'s answer (asked when None); ``"off"`` returns ``prlimit ... argv``.
        account: (uid, gid) for ``"account"`` (default :func:`sandbox_account`).

    Raises:
        SandboxError: see :func:`mode` and :func:`sandbox_account`.
    """
    how = how or mode()
    per = budget.prlimit_args(how == "account") if budget is not None else limits.args(how == "account")
    lim = ["prlimit", *per, "--", *argv]
    wrap = budget.wrap if budget is not None else list
    if how == "off":
        return wrap(lim)
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
    args.extend(["--dev", "/dev", "--proc", "/proc", "--perms", "1777"])
    if limits.tmp_mb and _bwrap_has_size():  # bubblewrap >= 0.5: a sized tmpfs (RAM)
        args.extend(["--size", str(limits.tmp_mb << 20)])
    args.extend(["--tmpfs", "/tmp"])
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
        uid, gid = account or sandbox_account()
        args.extend(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                     "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *lim])
    else:
        args.extend(["--unshare-user", "--", *lim])
    return wrap(args)


@functools.lru_cache(maxsize=None)
def _bwrap_has_size() -> bool:
    """Whether this bubblewrap takes ``--size`` (0.5 and later; Debian 12 has 0.8). Without it the
    sandbox's ``/tmp`` is bounded only by the memory budget (warned once)."""
    try:
        text = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    if "--size" in text:
        return True
    warnings.warn("이 bubblewrap에는 --size가 없어(0.5 미만) 격리 환경의 /tmp 크기를 정하지 못합니다: "
                  "메모리 한도만 /tmp를 막습니다 (bubblewrap을 0.5 이상으로 올리세요)", stacklevel=2)
    return False


def _env(source: dict[str, str], python: str) -> dict[str, str]:
    env = {k: source[k] for k in _ENV_KEEP if k in source}
    # one thread per numeric library: threads count in the run's process limit
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
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


#: the prefix of every sandbox's throwaway folder under the system's temporary folder
BOX_PREFIX = "decodelab-autograde-"


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in :func:`command`'s sandbox (nbgrader's autograde).

    The connection file and the kernel's Unix sockets (``transport="ipc"``) lie in a fresh folder
    bound into the sandbox; the kernel's working folder is a throwaway copy of the submission folder
    at the same path (so :func:`decodelab.classroom.student.student_id` still reads the student from it).
    The kernel and everything it starts share one :class:`Budget` (memory and processes of the
    student's run); the folder and the budget's cgroup are removed when the kernel is cleaned up,
    also after the kernel died (:class:`SandboxedExecute` removes them in any case).
    """

    cpu_seconds = Integer(DEFAULT_LIMITS["cpu_s"], help="CPU seconds of each process of a student's run").tag(config=True)
    memory_mb = Integer(DEFAULT_LIMITS["memory_mb"], help="memory budget of a student's run in MiB: the kernel and every process "
                                   "it starts, together (a cgroup where the machine has one)").tag(config=True)
    processes = Integer(DEFAULT_LIMITS["processes"], help="processes and threads of a student's run").tag(config=True)
    tmp_mb = Integer(DEFAULT_LIMITS["tmp_mb"], help="size of the sandbox's /tmp in MiB (RAM; counts in memory_mb)").tag(config=True)

    _box: str | None = None
    _budget: Budget | None = None

    def limits(self) -> Limits:
        """The :class:`Limits` of this kernel's run (from the configured traits)."""
        return Limits(cpu_s=self.cpu_seconds, memory_mb=self.memory_mb, nproc=self.processes, tmp_mb=self.tmp_mb)

    async def _async_pre_start_kernel(self, **kw):
        how = mode()
        owner = sandbox_account() if how == "account" else None
        cwd = os.path.realpath(kw.get("cwd") or os.getcwd())
        box = Path(tempfile.mkdtemp(prefix=BOX_PREFIX))
        self._box = str(box)
        _MADE[self._box] = self
        try:
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
            # a signal to the started process reaches bubblewrap, not the kernel: interrupt it with
            # a message on its control channel (ipykernel's interrupt_request), so a cell stopped at
            # its time limit ends and the notebook goes on
            self.kernel_spec.interrupt_mode = "message"
            if owner:
                os.chown(self.connection_file, *owner)
            py = kernel_cmd[0]
            limits = self.limits()
            self._budget = Budget(limits, root=how == "account")
            course = [str(Path(cwd).parents[2])] if Path(cwd).parent.parent.name == "autograded" else []
            wrapped = command(kernel_cmd, ro=python_binds(py, exclude=[cwd, *course]),
                              rw=[(str(run), str(run)), (str(work), cwd)], chdir=cwd,
                              env=_env(kw.get("env") or dict(os.environ), py), limits=limits, how=how, account=owner,
                              budget=self._budget)
        except BaseException:
            self._remove_box()
            raise
        kw["cwd"] = str(box)
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return wrapped, kw

    def _remove_box(self) -> None:
        """Kill what is left of the run, remove its cgroup and its throwaway folder."""
        if self._budget is not None:
            self._budget.close()
            self._budget = None
        if self._box:
            shutil.rmtree(self._box, ignore_errors=True)
            _MADE.pop(self._box, None)
            self._box = None

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if not restart:
                self._remove_box()

    # jupyter_client binds the public name to its own function: a kernel that died is cleaned up
    # through it (nbclient), never through shutdown_kernel, and its box was left
    cleanup_resources = _async_cleanup_resources


class SandboxedExecute(Execute):
    """nbgrader's ``Execute`` step with :class:`SandboxKernelManager` (nbgrader passes its own
    kernel manager class as an argument, which configuration cannot override), and a time limit for
    the whole notebook beside nbgrader's per cell (``Execute.timeout``): a cell still running when
    the notebook's time is up is stopped there (nbgrader's ``CellTimeoutError``), and every later code
    cell is not run but gets an error output, so its tests score nothing. However the run ends (time
    up, the kernel died), the sandbox's folder and cgroup are removed."""

    timeout = Integer(DEFAULT_LIMITS["cell_s"], allow_none=True, help="seconds for one cell").tag(config=True)
    notebook_timeout = Integer(DEFAULT_LIMITS["notebook_s"], help="seconds for the whole notebook (all its cells together)").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxKernelManager
        super().__init__(*args, **kwargs)
        self._deadline: float | None = None
        self.timeout_func = self._cell_timeout

    def _cell_timeout(self, cell) -> int | None:
        """The per-cell timeout, shortened to the time the notebook has left (at least 1 s)."""
        import math
        import time

        per = self.timeout if self.timeout and self.timeout > 0 else None
        if self._deadline is None:
            return per
        left = max(1, math.ceil(self._deadline - time.monotonic()))
        return left if per is None else min(per, left)

    def preprocess_cell(self, cell, resources, index):
        import time

        if self._deadline is not None and time.monotonic() >= self._deadline and cell.cell_type == "code":
            from nbformat.v4 import new_output

            cell.outputs = [new_output("error", ename="NotebookTimeoutError", evalue="", traceback=[
                f"NotebookTimeoutError: 노트북 전체의 채점 시간 한도({self.notebook_timeout}초)를 넘어 이 칸은 실행하지 않았습니다"])]
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    def preprocess(self, nb, resources=None, km=None):
        import time

        before = set(_MADE)
        self._deadline = time.monotonic() + self.notebook_timeout if self.notebook_timeout else None
        self.timeout_func = self._cell_timeout
        try:
            return super().preprocess(nb, resources, km=km)
        finally:
            self._deadline = None
            for box in set(_MADE) - before:  # a kernel whose cleanup did not run (a retry's, a dead one's)
                _MADE[box]._remove_box()


#: the sandbox folders this process made and has not removed yet, with their kernel managers
_MADE: dict[str, "SandboxKernelManager"] = {}


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
                 limits: Limits = Limits(cpu_s=20, memory_mb=1024, file_mb=1, nproc=16, tmp_mb=16)) -> list[dict]:
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
    budget = Budget(limits, root=how == "account")
    cmd = command([py, "-I", "-S", "-c", _RUNNER], ro=python_binds(py, packages=False), env=_env({}, py),
                  limits=limits, how=how, budget=budget)
    req = json.dumps({"source": source, "function": function, "cases": [list(c) for c in cases]})
    fail = lambda why: [{"error": why} for _ in cases]  # noqa: E731
    with budget, tempfile.TemporaryFile() as out:
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
