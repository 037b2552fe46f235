"""The course on JupyterHub: the course directory that ``decodelab classroom init DIR`` writes and the hub
that ``decodelab classroom hub DIR`` runs (their command-line side is in :mod:`.cli`).

``init DIR`` writes a course directory::

    DIR/jupyterhub_config.py   plain JupyterHub configuration (``jupyterhub -f`` reads it)
    DIR/notebooks/             the course notebooks; each student gets their own copy on first spawn
    DIR/state/                 the hub's database, cookie secret and proxy pid file (created by the hub)
    + what :func:`decodelab.classroom.assignments.write_course` adds (nbgrader)

The course directory is made mode 0700 in both modes (the hub's only: no student's server can
read the database, the cookie secret, the nbgrader sources or the gradebook). The hub listens on
127.0.0.1 only; ``decodelab classroom hub DIR --ip 0.0.0.0`` opens it to the network, which a
class should do only behind an HTTPS reverse proxy (lecturer/classroom.md).

Two modes:

- **class** (default): NativeAuthenticator (:mod:`decodelab.classroom.auth`; students sign up, the lecturer approves them at
  ``/hub/authorize``; ``--roster FILE`` limits sign-up to the names of a CSV column ``username``)
  and LocalProcessSpawner with one system user per student (created on first spawn when the hub
  runs as root, home ``/home/<name>`` mode 0700), so students cannot read each other's files.
  Without a roster the lecturer approves each sign-up at ``/hub/authorize``; with one, the
  roster's names are approved at sign-up and no other name can log in. Names are NFC-normalised
  and case-folded (:func:`decodelab.classroom.auth.normalize_name`).
- **demo** (``--demo-users alice,bob,carol``): for trying it out and for tests, never for a class.
  JupyterHub's ``SharedPasswordAuthenticator`` (one password for all students, read from
  ``$DECODELAB_HUB_PASSWORD`` when the hub starts, never written to a file; the lecturer's from
  ``$DECODELAB_HUB_ADMIN_PASSWORD``, >= 32 characters) and
  :class:`decodelab.classroom.spawner.DemoSpawner`: every server runs as the one unprivileged
  system user ``decodelab-demo`` (created by the hub, which must run as root), never as root or
  the hub's user, with homes under :func:`demo_homes`. Anyone with the password can log in as any
  student, and the demo students can read each other's files.

Both modes run the idle culler (``jupyterhub-idle-culler``, servers idle for ``--idle-timeout``
seconds are stopped; the student's files stay) and give each student, on every spawn, the course
notebooks that are missing from their home (a student's own edited copy is never overwritten).
The single-user servers run ``PYTHON -m jupyterhub.singleuser`` (``--python``, default: this
Python; ``init`` checks that an unprivileged user can run it; of the hub's environment they keep only ``LANG``/``LC_ALL``, and ``PATH`` starts at that
Python's folder, so a student's server uses the students' environment, never the hub's
``PYTHONPATH``) and open ``01_decode_phase.ipynb`` in JupyterLab; the quiz and exercise widgets take the
student's name from ``$JUPYTERHUB_USER`` (set by JupyterHub) and save into
``~/.decodelab/answers`` of that student's home.

``hub DIR [--port P] [--ip IP] [jupyterhub options...]`` runs ``jupyterhub -f DIR/jupyterhub_config.py``
in DIR; any further options go to ``jupyterhub`` unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# the course folder's basics (re-exported here for the hub's configs and callers of hub.read_roster etc.)
from .accounts import NOBODY, reserved_name, system_account, system_uid
from .course import CONFIG_NAME, USERNAME, check_username, course_students, name_refusal, read_csv, read_roster
from .homes import write_home
from typing import Callable

__all__ = [
    "ADMIN_PASSWORD_ENV",
    "CONFIG_NAME",
    "USERNAME",
    "check_username",
    "course_students",
    "read_csv",
    "PASSWORD_ENV",
    "course_notebooks_dir",
    "password_from_env",
    "pre_spawn_hook",
    "read_roster",
    "require_root_for_demo",
    "write_config",
]

PASSWORD_ENV = "DECODELAB_HUB_PASSWORD"
ADMIN_PASSWORD_ENV = "DECODELAB_HUB_ADMIN_PASSWORD"
FIRST_NOTEBOOK = "01_decode_phase.ipynb"

DEMO_BANNER = (
    "[decodelab] 데모 모드입니다: 실제 수업에 쓰지 마세요. 비밀번호 하나로 누구나 어느 학생으로든 로그인할 수 "
    "있고, 모든 학생 서버가 같은 시스템 사용자(decodelab-demo)로 돕니다 (서로의 파일을 읽을 수 있음)."
)
#: the system user of every demo student's server (:mod:`decodelab.classroom.spawner`; kept in step)
DEMO_USER = "decodelab-demo"
#: the demo homes live under this folder (the home of :data:`DEMO_USER`), one folder per course
DEMO_HOMES_ROOT = Path("/home") / DEMO_USER


# ------------------------------------------------------------------------------ used by the config


def password_from_env(name: str, min_length: int, *, required: bool = True) -> str | None:
    """The password in environment variable ``name`` (read when the hub starts).

    Returns None when it is unset and not ``required``.

    Raises:
        SystemExit: (Korean) unset while required, shorter than ``min_length`` characters, or not
            ASCII: JupyterHub's ``SharedPasswordAuthenticator`` compares the typed password with
            ``hmac.compare_digest`` on str, which raises TypeError for non-ASCII text, so every login
            would be HTTP 500. The message names the variable and the length, never the value.
    """
    value = os.environ.get(name, "")
    if not value:
        if required:
            raise SystemExit(f"[decodelab] 환경 변수 {name}에 비밀번호를 넣고 다시 시작하세요 "
                             f"({min_length}자 이상, 설정 파일에는 쓰지 않습니다).")
        return None
    if not value.isascii():
        raise SystemExit(f"[decodelab] {name}의 비밀번호에 한글 등 ASCII가 아닌 글자가 있습니다: JupyterHub의 공유 비밀번호 "
                         "로그인은 ASCII가 아닌 비밀번호를 비교하지 못해 모든 로그인이 오류(HTTP 500)가 됩니다. 영문자·숫자·"
                         f"기호로만 {min_length}자 이상인 비밀번호로 정하세요.")
    if len(value) < min_length:
        raise SystemExit(f"[decodelab] {name}의 비밀번호가 너무 짧습니다 ({len(value)}자): {min_length}자 이상으로 정하세요.")
    return value


def require_root_for_demo() -> None:
    """Refuse to start a demo hub that is not root (called by the demo's ``jupyterhub_config.py``).

    The demo runs every student's server as the unprivileged system user :data:`DEMO_USER`, which
    only a root hub can switch to; a hub of any other user would run the students' code as
    itself, and they could read its environment (the passwords), its database and its cookie
    secret, and so log in as the lecturer.

    Raises:
        SystemExit: (Korean) the hub is not root; says how to start it.
    """
    if os.geteuid() != 0:
        raise SystemExit(
            "[decodelab] 데모 모드 허브는 root로 시작해야 합니다: 학생 서버를 권한 없는 전용 시스템 사용자 "
            f"{DEMO_USER}(으)로 돌려, 학생이 허브의 비밀번호·데이터베이스를 읽지 못하게 하기 위해서입니다. "
            "'sudo env DECODELAB_HUB_PASSWORD=... DECODELAB_HUB_ADMIN_PASSWORD=... "
            "PATH=$PATH decodelab classroom hub 강좌폴더'로 다시 시작하세요 "
            "(혼자 강좌만 써 보려면 허브 없이 'decodelab lab')."
        )


def demo_homes(course_dir: str | os.PathLike) -> Path:
    """The folder of a demo course's student homes: ``/home/decodelab-demo/<course name>-<8 hex>``
    (the hex from the course directory's absolute path, so two demo courses never share homes).
    Outside the course directory, which is the hub's only (mode 0700)."""
    import hashlib

    course = Path(course_dir).resolve()
    tag = hashlib.sha256(str(course).encode()).hexdigest()[:8]
    return DEMO_HOMES_ROOT / f"{course.name}-{tag}"


#: the longest path of a Unix socket (``sun_path`` holds 108 bytes with the final NUL)
SOCKET_PATH_MAX = 107


def demo_runtime_dir(course_dir: str | os.PathLike, name: str) -> Path:
    """The Jupyter runtime folder of demo student ``name``: ``/home/decodelab-demo/rt/<12 hex>``.

    The kernels' Unix sockets are named ``<runtime>/kernel-<uuid>-ipc-<n>`` (about 50 bytes after the
    folder) and a socket's path holds at most :data:`SOCKET_PATH_MAX` bytes; the demo home
    (:func:`demo_homes`, ``/home/decodelab-demo/<course>-<8 hex>/<name>/.jupyter/runtime``) passes it
    for a 6-letter name. The hex is from the course folder and the name, so no two students or
    courses share one."""
    import hashlib

    tag = hashlib.sha256(f"{Path(course_dir).resolve()}\0{name}".encode()).hexdigest()[:12]
    return DEMO_HOMES_ROOT / "rt" / tag


def _ensure_demo_user(name: str, log) -> tuple[int, int]:
    """The (uid, gid) of the demo's system user ``name``, created if missing (a system user with
    its own group, home :data:`DEMO_HOMES_ROOT`, no login shell, no password).

    Raises:
        AccountError: (Korean, a RuntimeError) it is missing and cannot be created (the hub is not root).
    """
    pw = system_account(name, system=True, home=str(DEMO_HOMES_ROOT), create_home=True, log=log)
    return pw.pw_uid, pw.pw_gid


def _owned_dirs(home: Path, owner: tuple[int, int]) -> None:
    """Make ``home`` and its parent folders owned by ``owner``, mode 0700, never following a link.

    The demo's homes (:func:`demo_homes`) lie in a folder the demo user owns, so a demo student
    could put a symbolic link where the course's homes or their own home should be; root following
    it would give that user any folder (``/etc``). The grandparent is resolved (root's), the two
    folders below it are opened with ``O_NOFOLLOW`` from it and changed through their descriptors.

    Raises:
        OSError: one of them is a link or not a folder (ELOOP, ENOTDIR).
    """
    home.parent.parent.mkdir(parents=True, exist_ok=True)
    base = os.open(os.path.realpath(home.parent.parent), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = base
        for part in (home.parent.name, home.name):
            try:
                os.mkdir(part, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            if fd != base:
                os.close(fd)
            fd = child
            os.fchown(fd, *owner)
            os.fchmod(fd, 0o700)
        os.close(fd)
    finally:
        try:
            os.close(base)
        except OSError:
            pass


#: groups whose members a student's server must never run as (administration of the machine)
PRIVILEGED_GROUPS = frozenset({"root", "sudo", "admin", "wheel", "adm", "shadow", "disk", "docker", "lxd", "libvirt"})


def _check_existing_account(pw, *, admin: bool) -> None:
    """Refuse to run a hub user's server as an account of the machine that is not a student's.

    The hub uses the system account of the login's name when one exists (a lecturer may make the
    students' accounts beforehand). A name that is already a system account (``bin``, ``sync`` and
    ``proxy`` have the home ``/bin``; ``backup``, ``www-data``, ``decodelab-grader``) or an
    administrator's account (``ubuntu`` in group ``sudo``) would otherwise give the student that
    account and its files, and the hook would ``chown`` its home (``/usr/bin``) to it.

    Raises:
        RuntimeError: (Korean) ``pw`` has a system user id (below ``UID_MIN``, or ``nobody``), or,
            for a hub user who is not an admin, belongs to a group of :data:`PRIVILEGED_GROUPS`.
    """
    import grp

    if system_uid(pw.pw_uid):
        raise RuntimeError(f"사용자 이름 {pw.pw_name!r}은(는) 이 서버의 시스템 계정(uid {pw.pw_uid})이라 학생 서버를 "
                           "그 계정으로 띄우지 않습니다: 다른 이름으로 가입하게 하세요 (/hub/authorize 에서 승인을 거두세요).")
    if admin:
        return
    groups = {g.gr_name for g in grp.getgrall() if pw.pw_name in g.gr_mem}
    try:
        groups.add(grp.getgrgid(pw.pw_gid).gr_name)
    except KeyError:
        pass
    if groups & PRIVILEGED_GROUPS:
        raise RuntimeError(f"사용자 이름 {pw.pw_name!r}은(는) 이 서버의 관리 계정(그룹 {', '.join(sorted(groups & PRIVILEGED_GROUPS))})"
                           "이라 학생 서버를 그 계정으로 띄우지 않습니다: 다른 이름으로 가입하게 하세요.")


def _ensure_system_user(name: str, log, *, admin: bool = False) -> tuple[int, int, Path]:
    """The (uid, gid, home) of system user ``name``, created with ``useradd`` (home mode 0700) if
    missing. Raises RuntimeError when it does not exist and cannot be created (hub not root), or
    when it exists but is a system or administrator's account (:func:`_check_existing_account`)."""
    if not USERNAME.fullmatch(name):  # a system user's name (lecturer/classroom.md): never /home/김민지
        raise RuntimeError(name_refusal(name, "학생 서버") + " 강의자는 /hub/authorize 에서 승인을 거두고 "
                           "그 학생에게 규칙에 맞는 이름으로 다시 가입하게 하세요.")
    if reserved_name(name):  # the course's service accounts (decodelab-grader...) and the machine's own
        raise RuntimeError(f"사용자 이름 {name!r}은(는) 강좌의 서비스 계정이나 이 서버의 시스템 계정 이름이라 학생 서버를 띄우지 않습니다: "
                           "/hub/authorize 에서 승인을 거두고 다른 이름으로 가입하게 하세요.")
    pw = system_account(name, system=False, create_home=True, shell="/bin/bash", log=log,
                        check=lambda existing: _check_existing_account(existing, admin=admin))
    home = Path(pw.pw_dir)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    os.chmod(home, 0o700)
    return pw.pw_uid, pw.pw_gid, home


#: the student side of nbgrader (Assignments tab: fetch, submit), written into each student's home
STUDENT_NBGRADER_CONFIG = """\
# nbgrader, student side: written by the decodelab hub at every spawn (lecturer/grading.md)
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
# the submitter is the hub login, also when every server runs as one system user (demo mode)
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
"""
#: nbgrader's lecturer side, which a student's server does not load: its server extensions and
#: JupyterLab plugins are turned off in a folder the hook writes at every spawn
#: (:func:`write_student_config`), root's and outside every home, put first on the servers'
#: ``JUPYTER_CONFIG_PATH`` (the level above the user's and the environment's), so it is still read with
#: ``c.Spawner.disable_user_config = True`` (the student's ``~/.jupyter`` is not: a student's
#: ``jupyter_server_config.py`` took the CSP sandbox off their served files and a page there acted as
#: the lecturer); the Assignments tab (assignment_list, validate_assignment) stays. Hiding, not a
#: guard: on a student's server they reach only that student's own files.
STUDENT_OFF_SERVER = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
STUDENT_OFF_LAB = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment")
STUDENT_SERVER_CONFIG = json.dumps({"ServerApp": {"jpserver_extensions": {e: False for e in STUDENT_OFF_SERVER}}},
                                   indent=1) + "\n"
STUDENT_PAGE_CONFIG = json.dumps({"disabledExtensions": {p: True for p in STUDENT_OFF_LAB}}, indent=1) + "\n"
#: where a root hub writes :data:`STUDENT_SERVER_CONFIG` and :data:`STUDENT_PAGE_CONFIG` (the same for
#: every course): root's, mode 0755, so every student's server reads it and none can change it
STUDENT_CONFIG_DIR = Path("/etc/decodelab/student-jupyter")
EXCHANGE_ENV = "NBGRADER_EXCHANGE_ROOT"
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"


def write_student_config(folder: str | os.PathLike) -> Path:
    """Write the students' Jupyter config (:data:`STUDENT_SERVER_CONFIG` as
    ``jupyter_server_config.d/nbgrader.json``, :data:`STUDENT_PAGE_CONFIG` as
    ``labconfig/page_config.json``) into ``folder``, folders mode 0755 and files 0644 of this
    process's user (root's for a root hub), each file replaced whole; returns ``folder``.

    Raises:
        OSError: the folder cannot be made or written (a hub that is not root and was given
            :data:`STUDENT_CONFIG_DIR`).
    """
    folder = Path(folder)
    for rel, text in (("jupyter_server_config.d/nbgrader.json", STUDENT_SERVER_CONFIG),
                      ("labconfig/page_config.json", STUDENT_PAGE_CONFIG)):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for d in (folder, path.parent):
            os.chmod(d, 0o755)
        try:
            if path.read_text(encoding="utf-8") == text and not path.is_symlink():
                continue
        except OSError:
            pass
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    return folder


def exchange_root() -> Path:
    """nbgrader's exchange folder: ``$NBGRADER_EXCHANGE_ROOT`` of the hub, else ``/srv/nbgrader/exchange``
    (the same rule as the course's ``nbgrader_config.py``)."""
    return Path(os.environ.get(EXCHANGE_ENV) or DEFAULT_EXCHANGE)


def _student_nbgrader_text(course_id: str) -> str:
    """The student's ``~/.jupyter/nbgrader_config.py`` of the file exchange (its folder created if missing)."""
    exchange = exchange_root()
    if not exchange.is_dir():  # world-writable with the sticky bit, as nbgrader's docs set it up
        exchange.mkdir(parents=True, exist_ok=True)
        os.chmod(exchange, 0o1777)
    return STUDENT_NBGRADER_CONFIG.format(course_id=course_id, exchange=str(exchange))


def pre_spawn_hook(notebooks: str | os.PathLike, *, system_users: bool, course_id: str = "decodelab") -> Callable:
    """A ``Spawner.pre_spawn_hook`` that prepares the student's home before each spawn.

    Args:
        notebooks: the course directory's ``notebooks/``; every ``*.ipynb`` the student's home
            lacks is copied there (an existing copy, possibly edited, is kept).
        system_users: True for LocalProcessSpawner (one system user per student: created when
            missing, copies owned by that user, home mode 0700); False for the demo's
            :class:`~decodelab.classroom.spawner.DemoSpawner` (home from ``spawner.home_dir``;
            its ``system_user`` is created when missing and owns the home, mode 0700, and its
            parent folder, the course's demo homes) or a spawner without ``system_user`` (files
            owned by the hub's user).

    The hook also sets ``DECODELAB_ANSWERS_DIR`` to ``<home>/.decodelab/answers`` in the server's
    environment, so answers stay in that student's home whatever the hub's own environment holds,
    and writes the student side of nbgrader, ``<home>/.jupyter/nbgrader_config.py`` (``course_id``,
    the exchange folder of :func:`exchange_root`, created mode 1777 if missing, and the hub login as
    nbgrader's student id). nbgrader's lecturer side is turned off in :func:`write_student_config`'s
    folder (:data:`STUDENT_CONFIG_DIR` for a root hub), given to the server as ``JUPYTER_CONFIG_PATH``.
    """
    src = Path(notebooks)

    def hook(spawner) -> None:
        name = spawner.user.name
        if system_users:
            uid, gid, home = _ensure_system_user(name, spawner.log, admin=bool(getattr(spawner.user, "admin", False)))
            owner: tuple[int, int] | None = (uid, gid)
            runtime = home / ".jupyter" / "runtime"
        else:
            home, owner = Path(spawner.home_dir), None
            runtime = home / ".jupyter" / "runtime"
            run_as = getattr(spawner, "system_user", None)
            if run_as:
                owner = _ensure_demo_user(run_as, spawner.log)
                _owned_dirs(home, owner)
                runtime = demo_runtime_dir(src.parent, name)
                _owned_dirs(runtime, owner)
        # as the student (owner), never as root: the home may hold links the student planted
        copied = write_home(home, owner, notebooks=src,
                            files={".jupyter/nbgrader_config.py": _student_nbgrader_text(course_id)}, log=spawner.log)
        # nbgrader's lecturer side off, where the student cannot write (a hub that is not root runs
        # every server as itself: the course's state folder, its own, is as safe as anything then)
        config_dir = write_student_config(STUDENT_CONFIG_DIR if os.geteuid() == 0 else src.parent / "state" / "student-jupyter")
        if copied:
            spawner.log.info("decodelab: gave %s %d course notebooks", name, len(copied))
        # the kernels' Unix sockets (c.Spawner.args: ipc) are named after the runtime folder's path,
        # which must stay within 107 bytes: ~/.jupyter/runtime is short enough for a 32-letter name
        # under /home; a demo home is deeper (demo_runtime_dir)
        spawner.environment = {**spawner.environment,
                               "DECODELAB_ANSWERS_DIR": str(home / ".decodelab" / "answers"),
                               "JUPYTER_RUNTIME_DIR": str(runtime),
                               "JUPYTER_CONFIG_PATH": str(config_dir)}

    return hook


# ------------------------------------------------------------------------------ course directory


def course_notebooks_dir() -> Path:
    """The course notebooks bundled with the package (:data:`decodelab._paths.NOTEBOOKS_DIR`; in a
    source checkout a link to ``notebooks/``).

    Raises:
        FileNotFoundError: (Korean) it holds no ``01_decode_phase.ipynb``; names ``--notebooks-dir``.
    """
    from .._paths import NOTEBOOKS_DIR

    if (NOTEBOOKS_DIR / FIRST_NOTEBOOK).is_file():
        return NOTEBOOKS_DIR
    raise FileNotFoundError(f"강좌 노트북({FIRST_NOTEBOOK})을 찾지 못했습니다({NOTEBOOKS_DIR}): "
                            "--notebooks-dir로 노트북 폴더를 지정하세요.")


_HEADER = '''\
# JupyterHub configuration of the decodelab course, written by `decodelab classroom init`.
# Run it with `decodelab classroom hub {dir}` or `jupyterhub -f {dir}/{config}`.
# Mode: {mode}. Guide: lecturer/classroom.md of the decodelab repository.
from pathlib import Path

from decodelab.classroom import hub as decodelab_hub

c = get_config()  # noqa: F821 - provided by JupyterHub
COURSE = Path(__file__).resolve().parent
STATE = COURSE / "state"
STATE.mkdir(exist_ok=True)

c.JupyterHub.db_url = f"sqlite:///{{STATE / 'jupyterhub.sqlite'}}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
# loopback only: `decodelab classroom hub DIR --ip 0.0.0.0` opens it to the network; a class
# reaches it over HTTPS through a reverse proxy (lecturer/classroom.md)
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = 8000

# the lecturer: the only admin (admin page /hub/admin)
c.Authenticator.admin_users = {{{lecturer}}}
'''

_DEMO = '''
# ---- DEMO MODE: not for a class. One shared password; every server runs as the unprivileged
# system user decodelab-demo (never root, never the hub's user), so the hub must run as root.
print({banner!r}, flush=True)
decodelab_hub.require_root_for_demo()
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = decodelab_hub.password_from_env("{pw_env}", 8)
c.SharedPasswordAuthenticator.admin_password = decodelab_hub.password_from_env("{admin_env}", 32, required=False)
c.Authenticator.allowed_users = {{{users}}}
c.JupyterHub.spawner_class = "decodelab.classroom.spawner.DemoSpawner"
c.DemoSpawner.home_dir_template = str(decodelab_hub.demo_homes(COURSE) / "{{username}}")
c.Spawner.pre_spawn_hook = decodelab_hub.pre_spawn_hook(COURSE / "notebooks", system_users=False)
'''

_CLASS = '''
# ---- class mode: students sign up, the lecturer approves them at /hub/authorize
# nativeauthenticator 1.3 with its login page adapted to JupyterHub 6 (decodelab/classroom/auth.py)
c.JupyterHub.authenticator_class = "decodelab.classroom.auth.NativeAuthenticator"
c.NativeAuthenticator.open_signup = False
c.NativeAuthenticator.minimum_password_length = 10
c.NativeAuthenticator.check_common_password = True
c.NativeAuthenticator.allowed_failed_logins = 5
c.NativeAuthenticator.seconds_before_next_try = 120
{roster}
# one system user per student (created on the first spawn; home /home/<name>, mode 0700)
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.notebook_dir = "~"
c.Spawner.pre_spawn_hook = decodelab_hub.pre_spawn_hook(COURSE / "notebooks", system_users=True)
# With systemd, SystemdSpawner also limits memory and CPU per student (lecturer/classroom.md):
# c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
# c.SystemdSpawner.mem_limit = "1G"
# c.SystemdSpawner.cpu_limit = 1.0
# LTI 1.3 launch from Moodle/Canvas instead of sign-up (jupyterhub-ltiauthenticator):
# c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.auth.LTI13Authenticator"
# c.LTI13Authenticator.issuer = "https://moodle.example.ac.kr"
# c.LTI13Authenticator.authorize_url = "https://moodle.example.ac.kr/mod/lti/auth.php"
# c.LTI13Authenticator.jwks_endpoint = "https://moodle.example.ac.kr/mod/lti/certs.php"
# c.LTI13Authenticator.client_id = ["<client id from the LMS>"]
# c.LTI13Authenticator.username_key = "sub"
# JupyterHub 5+ lets nobody in without a roster or allow_all, and LTI13Authenticator 1.6 sets
# neither: the LMS decides who may launch the tool (the course's members), so all it launches get in
# c.Authenticator.allow_all = True
'''

_COMMON = '''
# ---- every mode: the single-user server, the course notebooks, the idle culler
c.Spawner.cmd = [{python!r}, "-m", "jupyterhub.singleuser"]
# kernels talk over Unix sockets in the student's home (0700), not TCP ports on 127.0.0.1, where any
# other student could subscribe to the kernel's output channel (every cell's code and output)
c.Spawner.args = ["--KernelManager.transport=ipc"]
# the students' own environment (--python), nothing of the hub's: no PYTHONPATH, no virtualenv
c.Spawner.env_keep = ["LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.environment = {{"PATH": {path!r}}}
c.Spawner.default_url = "/lab/tree/{first}"
# a student's server never reads the student's own ~/.jupyter config: students share the hub's origin
# (no subdomains), and a student's jupyter_server_config.py took the CSP sandbox off the files their
# server serves, so a page there opened by the lecturer acted as the lecturer (lecturer/classroom.md)
c.Spawner.disable_user_config = True
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 180
c.JupyterHub.load_roles = [{{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}}]
c.JupyterHub.services = [{{
    "name": "idle-culler",
    "command": [{python!r}, "-m", "jupyterhub_idle_culler", "--timeout={idle}"],
    # root's, as the hub: never the course folder, where the grader account may add modules
    "cwd": str(STATE),
}}]
'''


def _closed_path(python: Path) -> str | None:
    """The first place on the way to ``python`` that a user other than its owner cannot pass,
    following each symbolic link (a virtualenv's ``bin/python`` links to the Python it was made
    from): a folder without the others' search (x) bit, or the final file without the others' x
    bit. None when every step is open to others (ACLs and groups are not looked at)."""
    seen: list[Path] = []
    path = Path(os.path.abspath(python))
    for _ in range(40):  # a link loop stops here
        seen.append(path)
        if not path.is_symlink():
            break
        path = Path(os.path.normpath(path.parent / os.readlink(path)))
    for hop in seen:
        for folder in reversed(hop.parents):
            try:
                if not folder.stat().st_mode & 0o001:
                    return str(folder)
            except OSError:
                return str(folder)
    try:
        final = Path(os.path.realpath(python))
        return None if final.stat().st_mode & 0o001 else str(final)
    except OSError:
        return str(python)


#: run by ``init`` in the students' Python: 3 without decodelab, 4 without JupyterHub's single-user server,
#: 5 without ngshare-exchange (each student's nbgrader submits through it)
_PROBE = ("import importlib.util as u, sys; sys.exit(3 if not u.find_spec('decodelab') else "
          "4 if not u.find_spec('jupyterhub') else 5 if not u.find_spec('ngshare_exchange') else 0)")


def _probe_python(exe: str, unprivileged: bool) -> int | None:
    """Exit code of :data:`_PROBE` in ``exe``, as this user or (``unprivileged``, root only) as
    ``nobody`` with an empty environment; None when it cannot be started at all."""
    kw: dict = {"cwd": "/"}  # not the current folder: a checkout there would be found by `import`
    if unprivileged:
        kw.update(user=NOBODY, group=NOBODY, extra_groups=[],
                  env={"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"})
    try:
        return subprocess.run([exe, "-c", _PROBE], capture_output=True, timeout=60, **kw).returncode
    except (OSError, subprocess.TimeoutExpired):
        return None


def check_python(python: str) -> None:
    """Check that ``python`` (``--python``) is an executable file of a Python that finds
    ``decodelab`` and JupyterHub, also for an unprivileged user: the students' servers never run as
    root (one system user per student in class mode, ``decodelab-demo`` in the demo). As root the
    check runs it as ``nobody``; otherwise it looks at the permissions on the way to it
    (:func:`_closed_path`).

    Raises:
        ValueError: (Korean) no such file, not executable, not a Python, without decodelab or
            JupyterHub, or not runnable by an unprivileged user (names the closed folder and says
            how to build a students' environment that is).
    """
    exe = Path(python)
    if not exe.is_file():
        raise ValueError(f"--python {python}: 그런 파일이 없습니다: decodelab이 설치된 Python의 경로를 주세요 "
                         f"(예: --python {sys.executable}).")
    if not os.access(exe, os.X_OK):
        raise ValueError(f"--python {python}: 실행할 수 없는 파일입니다 (실행 권한 없음): 실행 파일인 Python의 경로를 주세요.")
    rc = _probe_python(str(exe), unprivileged=False)
    if rc == 3:
        raise ValueError(f"--python {python}: 이 Python에는 decodelab이 설치되어 있지 않습니다: "
                         f"'{python} -m pip install decodelab'로 설치하거나 decodelab이 있는 Python을 주세요.")
    if rc == 4:
        raise ValueError(f"--python {python}: 이 Python에는 학생 서버를 띄울 JupyterHub가 없습니다: "
                         f"'{python} -m pip install \"decodelab[classroom]\"'로 설치하세요.")
    if rc == 5:
        raise ValueError(f"--python {python}: 이 Python에는 과제를 받고 내는 데 쓰는 ngshare-exchange가 없습니다: "
                         f"'{python} -m pip install --no-deps ngshare-exchange==0.5.3'로 설치하세요 "
                         "(--no-deps: 그 패키지가 요구하는 옛 jupyter-core는 JupyterLab 4와 맞지 않습니다).")
    if rc != 0:
        raise ValueError(f"--python {python}: Python으로 실행되지 않습니다: 학생 서버를 돌릴 Python 실행 파일의 경로를 주세요.")
    closed = _closed_path(exe)
    as_root = os.geteuid() == 0
    rc = _probe_python(str(exe), unprivileged=True) if as_root else (0 if closed is None else None)
    if rc != 0:
        why = (f"{closed}에는 root(또는 그 주인)만 들어갈 수 있습니다" if closed else
               f"nobody 사용자로 실행하면 실패합니다 (종료 코드 {rc}: 설치 폴더를 읽을 수 없음)")
        real = exe.resolve()
        if real != exe.absolute():  # a virtualenv's python is a link to the Python it was made from
            why += f"; 이 Python은 링크로 {real} 을(를) 가리킵니다"
        raise ValueError(
            f"--python {python}: 권한 없는 사용자는 이 Python을 실행할 수 없습니다 ({why}). 학생 서버는 root가 아닌 "
            "사용자로 돌기 때문에, 모두가 들어갈 수 있는 곳의 Python으로 학생용 환경을 만드세요: 예: "
            "'/usr/bin/python3 -m venv /opt/decodelab-students' 뒤 'bash classroom/install-singleuser.sh "
            "/opt/decodelab-students/bin/python dist/decodelab-*.whl /srv/decodelab/notebooks' "
            "(lecturer/classroom.md 1절), 그리고 --python /opt/decodelab-students/bin/python.")


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in sorted(names))


def write_config(course_dir: Path, *, demo_users: list[str] | None, lecturer: str, python: str,
                 roster: list[str] | None = None, idle_timeout: int = 3600) -> Path:
    """Write ``course_dir/jupyterhub_config.py`` (see the module docstring) and return its path.

    No password is written: the demo's are read from the environment when the hub starts.
    """
    mode = "demo" if demo_users else "class"
    text = _HEADER.format(dir=course_dir, config=CONFIG_NAME, mode=mode, lecturer=repr(lecturer))
    if demo_users:
        text += _DEMO.format(banner=DEMO_BANNER, pw_env=PASSWORD_ENV, admin_env=ADMIN_PASSWORD_ENV,
                             users=_names(demo_users))
    else:
        line = (f"# only the roster's names may sign up (and are approved at sign-up)\n"
                f"c.Authenticator.allowed_users = {{{_names(roster)}}}" if roster else
                "# no roster: anyone may sign up; the lecturer approves each name at /hub/authorize\n"
                "# (decodelab's NativeAuthenticator lets the approved accounts and the lecturer in)")
        text += _CLASS.format(roster=line)
    path = os.pathsep.join([str(Path(python).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    text += _COMMON.format(python=python, path=path, first=FIRST_NOTEBOOK, idle=int(idle_timeout))
    from .exchange import hub_config_block  # ngshare + formgrader as hub services (lecturer/grading.md)

    text += hub_config_block(python=python, lecturer=lecturer, system_users=not demo_users)
    from .polls import hub_config_block as polls_block  # the class poll as a hub service (lecturer/class-poll.md)

    text += polls_block()
    config = course_dir / CONFIG_NAME
    config.write_text(text, encoding="utf-8")
    return config
