"""Who submitted and when, decided by the hub: ngshare as a JupyterHub service, formgrader as a
grader service (and how it serves students' files), due dates and the late policy. Used by the
``jupyterhub_config.py`` and the course ``nbgrader_config.py`` that ``decodelab classroom init``
writes (lecturer/grading.md, "누가, 언제 냈는가").

- **ngshare** (0.6.0, a JupyterHub service that stores nbgrader's exchange; managed by the hub,
  its database and files in ``DIR/state/``, the hub's only; run through
  :mod:`.ngshare_service`, which makes it store rows under SQLAlchemy 2 and listen on loopback only): every request carries a hub API token
  and ngshare asks the hub whose token it is. A student's server holds only that student's token,
  so ``nbgrader submit --student OTHER`` is refused and an edited ``~/.jupyter/nbgrader_config.py``
  cannot change whose submission it is; the submission's time is ngshare's clock (UTC) when it
  receives it, and :mod:`.exchange_plugin` drops any ``timestamp.txt`` the student adds.
  Students are enrolled in ngshare's course by the spawn hook (:func:`pre_spawn_hook`, with
  :func:`.enrol.enrol`).
- **formgrader**: ``jupyterhub-singleuser`` as a JupyterHub service (nbgrader's documented
  "shared grader account" set-up) in the course folder, at ``/services/formgrader/formgrader``.
  Only the lecturer (and hub admins) may open it. When the hub runs as root it runs as the system
  user ``decodelab-formgrader`` (created when missing), which may read and write nbgrader's files of
  the course but not the hub's state (``DIR/state`` stays 0700 root; the course folder becomes
  root:decodelab-formgrader 1770, so the grader can add files but never replace the root-owned
  ``jupyterhub_config.py`` or ``nbgrader_config.py``; nbgrader's folders, which root's commands
  read, write and remove, are root's and the grader only reads them: :func:`root_outputs`; it owns
  the gradebook, where formgrader writes the lecturer's grades). Its API token (``DIR/state/grader-token``,
  root only) is ngshare's admin: release, collect and feedback go through it, also for the
  lecturer's own ``nbgrader`` commands run as root in the course folder.
- **due dates** (``init --due``) are nbgrader's own (the gradebook's assignment due dates, also
  shown and editable in formgrader); the **late policy** (``init --late-penalty``, default 100 %
  per started day = nbgrader's ``zero``) is :class:`.exchange_plugin.LatePenalty`; a resubmission
  after the due date never replaces an on-time one (``ExchangeCollect.before_duedate = True``; the
  ignored late one is named in collect's output).
- **students' files in formgrader**: formgrader serves every file of a submission's autograded copy
  (``autograded/<student>/<assignment>/``, what the student left next to the notebook: collect and
  autograde copy it along) at ``/formgrader/submissions/<id>/<file>``, its own origin, where the
  lecturer's session is valid: a script in a student's HTML or SVG file would run there as the
  lecturer (formgrader's API changes every grade, reads every submission). This module is also a Jupyter server extension,
  which the grader service loads (:data:`FORMGRADER_ARGS`): each response of that route (nbgrader's
  ``SubmissionFilesHandler``, found through the server's own routing) gets :data:`FILE_HEADERS`,
  the CSP ``sandbox`` (no script runs; the page has an opaque origin) and ``nosniff``, as Jupyter's
  own files handler sandboxes what a student's server serves; images still show. formgrader's pages
  (their scripts grade) are untouched.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from .enrol import enrol
from .homes import write_home

__all__ = ["FILE_HEADERS", "FORMGRADER", "FORMGRADER_ARGS", "FORMGRADER_USER", "NGSHARE", "course_config_block", "due_options", "hub_config_block", "hub_services", "lecturer_side",
           "parse_due", "pre_spawn_hook", "set_due_dates", "student_config_text"]

NGSHARE = "ngshare"
FORMGRADER = "formgrader"
#: not the autograde sandbox's user (that one must never read the gradebook; this one owns it)
FORMGRADER_USER = "decodelab-formgrader"
#: ports of the two services on 127.0.0.1 (``$DECODELAB_NGSHARE_PORT`` / ``$DECODELAB_FORMGRADER_PORT``
#: of the hub override them)
NGSHARE_PORT, FORMGRADER_PORT = 10101, 10102
KST = timezone(timedelta(hours=9))
#: nbgrader's files in the course folder that the grader account owns: the gradebook (formgrader
#: writes the lecturer's manual grades there) and nbgrader's log
GRADER_FILES = ("gradebook.db", ".nbgrader.log")
#: nbgrader's folders, which root's commands read, write into and remove from (generate, release,
#: collect, autograde, feedback): root's, mode 0750, group the grader account's, which reads them
#: (formgrader shows them) but can put no link there for root to follow (:func:`root_outputs`)
ROOT_DIRS = ("source", "release", "submitted", "autograded", "feedback")
#: added to every response of formgrader's route for a submission's files (module docstring): CSP
#: ``sandbox`` without ``allow-scripts`` (appended to the server's own policy; Jupyter's files
#: handler on a student's server allows scripts in its sandbox, nothing here needs them) and no MIME
#: sniffing (Jupyter's default on every response, kept here whatever the server's ``headers`` say)
FILE_HEADERS = {"Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff"}
#: the grader service's Jupyter server options (after its ``--ServerApp.root_dir``): formgrader's
#: page first; its kernels (the lecturer running a source notebook with the answers) on Unix sockets
#: in its own runtime folder, never TCP ports a student could listen to; this module as a server
#: extension (:data:`FILE_HEADERS`), next to the extensions its configuration enables
FORMGRADER_ARGS = ("--ServerApp.default_url=/formgrader", "--KernelManager.transport=ipc",
                   f"--ServerApp.jpserver_extensions={__name__}=True")


def _service_url(name: str, port: int) -> str:
    return f"http://127.0.0.1:{port}/services/{name}"


def _token(path: Path) -> str:
    """The grader service's API token, made once (``secrets.token_hex``) and kept mode 0600."""
    if path.is_file():
        return path.read_text(encoding="ascii").strip()
    token = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token)
    return token


def _root_json_config(course: Path) -> None:
    """A root-owned, empty ``nbgrader_config.json`` in ``course`` (the grader account may add files there).

    nbgrader reads ``nbgrader_config.json`` of the folder it runs in *after* ``nbgrader_config.py``
    and lets it win: one the grader account wrote would steer root's ``nbgrader`` (``sudo nbgrader
    collect``, ``decodelab classroom autograde``), e.g. autograde's plain ``Execute`` (students'
    code unsandboxed, as root). An empty one of root's, which the sticky bit keeps, leaves that to
    ``nbgrader_config.py``; one of any other owner is replaced.
    """
    path = course / "nbgrader_config.json"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and st.st_uid == 0 and not os.path.islink(path):
        return
    if st is not None:
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write("{}\n")


def _formgrader_account(course: Path, user: str) -> None:
    """Create system user ``user`` when missing and give it nbgrader's part of ``course`` (root only).

    Raises:
        AccountError: (Korean, a RuntimeError) ``useradd`` failed (:func:`.accounts.system_account`), or
            ``user`` exists but is not a system account (:func:`.accounts.check_service_account`).
    """
    import grp

    from .accounts import check_service_account, system_account

    # only a system account: one a student got by signing up under this name must not own the gradebook
    pw = system_account(user, system=True, home=f"/var/lib/{user}", create_home=True, shell="/bin/bash",
                        check=lambda existing: check_service_account(existing, "formgrader"))
    gid = grp.getgrgid(pw.pw_gid).gr_gid
    os.chown(course, 0, gid)
    os.chmod(course, 0o1770)  # the grader adds files; the sticky bit keeps root's files root's
    _root_json_config(course)
    (course / "state").mkdir(exist_ok=True)
    os.chmod(course / "state", 0o700)
    for name in GRADER_FILES:
        if (course / name).exists():
            os.lchown(course / name, pw.pw_uid, pw.pw_gid)
    root_outputs(course, group=pw.pw_gid)


def _grader_gid(user: str = FORMGRADER_USER) -> int:
    """The group id of the grader account ``user`` (0, root's group, when it does not exist)."""
    import pwd

    try:
        return pwd.getpwnam(user).pw_gid
    except KeyError:
        return 0


def _take_dir(parent: int, name: str, group: int, log) -> None:
    """Make entry ``name`` of the folder open as ``parent`` a folder owned by root, group ``group``,
    mode 0750, and everything below it root's too (files 0640); links, devices, pipes and files
    with more than one name are removed. Top-down through descriptors opened with ``O_NOFOLLOW``
    from their parent's: once a folder is root's no other account can swap an entry in it, so no
    step ever follows a link another account planted."""
    import errno
    import stat

    for _ in range(5):
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISDIR(st.st_mode):
            log(f"[decodelab] {name}: 폴더가 아니라 {'링크' if stat.S_ISLNK(st.st_mode) else '파일'}여서 지웁니다 "
                "(채점 계정이 둔 것: root는 따라가지 않습니다)")
            os.unlink(name, dir_fd=parent)
            st = None
        if st is None:
            try:
                os.mkdir(name, 0o750, dir_fd=parent)
            except FileExistsError:
                continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link or a file meanwhile: look again
                continue
            raise
        try:
            os.fchown(fd, 0, group)
            os.fchmod(fd, 0o750)
            now, again = os.fstat(fd), os.stat(name, dir_fd=parent, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (again.st_dev, again.st_ino):
                continue  # renamed away before it became root's: the name holds something else now
            for entry in os.listdir(fd):
                est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISDIR(est.st_mode):
                    _take_dir(fd, entry, group, log)
                elif stat.S_ISREG(est.st_mode) and est.st_nlink == 1:
                    f = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
                    try:
                        os.fchown(f, 0, group)
                        os.fchmod(f, 0o640)
                    finally:
                        os.close(f)
                else:
                    log(f"[decodelab] {entry}: 링크나 특수 파일이라 지웁니다 (root는 따라가지 않습니다)")
                    os.unlink(entry, dir_fd=fd)
            return
        finally:
            os.close(fd)
    raise RuntimeError(f"{name}: 다른 계정이 계속 바꾸고 있어 root의 폴더로 만들 수 없습니다")


def root_outputs(course: str | os.PathLike, *, group: int | None = None, log=None) -> None:
    """Make the course's :data:`ROOT_DIRS` (``source/`` ... ``feedback/``) root's before root's
    nbgrader reads or writes them (root only; called by :func:`_formgrader_account` when the hub starts
    and by :func:`lecturer_side` in every ``nbgrader`` command root runs in the course folder).

    They held the grader account's files before: that account could replace
    ``autograded/<student>`` with a link, and root's autograde then wrote the notebook through it
    or, for a failed autograde, removed the folder at the link's end (outside the course); a link
    in ``submitted/<student>/<assignment>/`` was copied, with the root-only file at its end, into
    ``autograded/``. Now the folders and everything below them are root's, group ``group`` (default:
    the grader account's, so formgrader still reads them), mode 0750/0640; links found there are
    removed (:func:`_take_dir`). A ``gradebook.db`` that is a link (the grader account owns that
    file, so it may replace it) is removed too, before root's nbgrader opens it. Does nothing unless this process is root and the course folder is root's
    (a lecturer's own course, without a hub as root, has no second account to guard against).
    """
    import stat
    import sys as _sys

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    log = log or (lambda msg: print(msg, file=_sys.stderr))
    real = os.path.realpath(course)
    base = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = os.fstat(base)
        if st.st_uid != 0 or not stat.S_ISDIR(st.st_mode):
            return
        gid = _grader_gid() if group is None else group
        for name in ROOT_DIRS:
            _take_dir(base, name, gid, log)
        for name in GRADER_FILES:
            try:
                st = os.stat(name, dir_fd=base, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                log(f"[decodelab] {name}: 파일이 아니라 링크(또는 특수 파일)여서 지웁니다 (root는 따라가지 않습니다)")
                os.unlink(name, dir_fd=base)
    finally:
        os.close(base)


def hub_services(course: str | os.PathLike, *, python: str, lecturer: str, ngshare_python: str = sys.executable,
                 grader_user: str | None = FORMGRADER_USER) -> dict:
    """The hub's part of the exchange, for ``jupyterhub_config.py``.

    Args:
        course: the course folder. ``state/`` gets ``ngshare.db``, ``ngshare-files/``,
            ``grader-token`` and ``services.json`` (the ngshare URL, for the lecturer's commands).
        python: the Python formgrader runs on (the students' ``--python``: one an unprivileged
            user can run, with nbgrader, ngshare-exchange and decodelab).
        ngshare_python: the Python ngshare runs on, as the hub's user (default: the hub's).
        lecturer: the hub user who may open formgrader.
        grader_user: the system user formgrader runs as when the hub runs as root (None: the
            hub's own user, as in demo mode).

    Returns:
        ``{"services": [...], "roles": [...], "ngshare_url": str, "token": str, "blocked": set}``:
        JupyterHub's ``services`` and ``load_roles`` entries, ngshare's URL, the grader token and
        the service names no one may sign up as (ngshare identifies a token by its name).
    """
    course = Path(course).resolve()
    state = course / "state"
    state.mkdir(exist_ok=True)
    os.chmod(state, 0o700)
    ng_port = int(os.environ.get("DECODELAB_NGSHARE_PORT") or NGSHARE_PORT)
    fg_port = int(os.environ.get("DECODELAB_FORMGRADER_PORT") or FORMGRADER_PORT)
    token = _token(state / "grader-token")
    ngshare_url = _service_url(NGSHARE, ng_port)
    (state / "services.json").write_text(json.dumps({"ngshare_url": ngshare_url}), encoding="utf-8")
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    formgrader = {
        "name": FORMGRADER,
        "url": f"http://127.0.0.1:{fg_port}",
        "command": [python, "-m", "jupyterhub.singleuser", f"--ServerApp.root_dir={course}", *FORMGRADER_ARGS],
        "cwd": str(course),
        "api_token": token,
        "oauth_no_confirm": True,
        "environment": {"DECODELAB_NGSHARE_URL": ngshare_url, "PATH": os.pathsep.join(
            [str(Path(python).parent), "/usr/local/bin", "/usr/bin", "/bin"])},
    }
    closed = next((str(f) for f in reversed(course.parents) if not f.stat().st_mode & 0o001), None)
    if root and grader_user and closed:
        # the grader account could not enter the course: formgrader would exit and take the hub with it
        print(f"[decodelab] formgrader를 띄우지 않습니다: {closed}에는 다른 사용자가 들어갈 수 없어 채점 계정 "
              f"{grader_user}이(가) 강좌 폴더 {course}에 닿지 못합니다. 'chmod o+x {closed}'로 열거나 "
              "강좌 폴더를 /srv 같은 곳에 만드세요 (lecturer/grading.md).", file=sys.stderr, flush=True)
        formgrader = None
    elif root and grader_user:
        from .accounts import AccountError

        try:
            _formgrader_account(course, grader_user)
        except AccountError as e:  # the hub does not start: a clear sentence, not a traceback
            raise SystemExit(f"[decodelab] {e}") from None
        formgrader["user"] = grader_user
        import pwd

        # the grader's own, 0700 (jupyter makes it so), short enough for the kernels' socket names
        grader_home = Path(pwd.getpwnam(grader_user).pw_dir)
        if grader_home.is_dir():
            formgrader["environment"]["JUPYTER_RUNTIME_DIR"] = str(grader_home / ".jupyter" / "runtime")
    elif root:
        formgrader["command"].append("--allow-root")
    ngshare = {
        "name": NGSHARE,
        "url": f"http://127.0.0.1:{ng_port}",
        "command": [ngshare_python, "-m", "decodelab.classroom.ngshare_service", f"--admins={FORMGRADER}",
                    f"--database=sqlite:///{state / 'ngshare.db'}", f"--storage={state / 'ngshare-files'}"],
        "cwd": str(state),
    }
    roles = [{
        "name": "decodelab-formgrader",
        "users": [lecturer],
        "scopes": [f"access:services!service={FORMGRADER}", "list:services", f"read:services!service={FORMGRADER}"],
    }]
    if formgrader is None:
        # ngshare still needs the grader token's owner as its admin: a service without a command
        formgrader, roles = {"name": FORMGRADER, "api_token": token}, []
    return {"services": [ngshare, formgrader], "roles": roles, "ngshare_url": ngshare_url, "token": token,
            "blocked": {NGSHARE, FORMGRADER, grader_user or FORMGRADER}}


HUB_BLOCK = '''
# ---- who submitted and when: ngshare (nbgrader's exchange behind the hub's login) and formgrader
# (/services/formgrader/formgrader, the lecturer only) as hub services: decodelab/classroom/exchange.py
import sys

from decodelab.classroom import exchange as decodelab_exchange

EXCHANGE = decodelab_exchange.hub_services(COURSE, python={python!r}, ngshare_python=sys.executable,
                                           lecturer={lecturer!r})
c.JupyterHub.services += EXCHANGE["services"]
c.JupyterHub.load_roles += EXCHANGE["roles"]
c.Authenticator.blocked_users = EXCHANGE["blocked"]  # ngshare knows a token by its name only
c.Spawner.pre_spawn_hook = decodelab_exchange.pre_spawn_hook(c.Spawner.pre_spawn_hook, EXCHANGE,
                                                             system_users={system_users!r})
'''


def hub_config_block(*, python: str, lecturer: str, system_users: bool) -> str:
    """The part of ``jupyterhub_config.py`` that :func:`decodelab.classroom.hub.write_config` appends
    (after ``c.JupyterHub.services``, ``load_roles`` and ``Spawner.pre_spawn_hook`` are set)."""
    return HUB_BLOCK.format(python=python, lecturer=lecturer, system_users=bool(system_users))


# ------------------------------------------------------------------------------ the student side

STUDENT_CONFIG = """\
# nbgrader, student side: written by the decodelab hub at every spawn (lecturer/grading.md).
# Who submitted and when is decided by the hub (ngshare): editing this file changes neither.
from decodelab.classroom.exchange_plugin import configure

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = {course_id!r}
configure(c, {url!r})
"""


def student_config_text(course_id: str, ngshare_url: str) -> str:
    """The student's ``~/.jupyter/nbgrader_config.py``: course id and the ngshare exchange."""
    return STUDENT_CONFIG.format(course_id=course_id, url=ngshare_url)


def pre_spawn_hook(inner: Callable, services: dict, *, system_users: bool, course_id: str = "decodelab") -> Callable:
    """Wrap the course's spawn hook (:func:`decodelab.classroom.hub.pre_spawn_hook`): after it,
    enrol the student in ngshare's course with the grader token (:func:`.enrol.enrol`, which the
    Kubernetes chart's hub runs too; the course is made on first use; failures are logged) and write
    :func:`student_config_text` into the student's home, replacing the file-exchange config."""
    url, token = services["ngshare_url"], services["token"]

    async def hook(spawner) -> None:
        inner(spawner)
        name = spawner.user.name
        if system_users:
            import pwd

            pw = pwd.getpwnam(name)
            home, owner = Path(pw.pw_dir), (pw.pw_uid, pw.pw_gid)
        else:
            home, owner = Path(spawner.home_dir), None
            run_as = getattr(spawner, "system_user", None)
            if run_as:  # the demo's servers run as this user, who owns the homes
                import pwd

                pw = pwd.getpwnam(run_as)
                owner = (pw.pw_uid, pw.pw_gid)
        await enrol(url, token, course_id, name, spawner.log)  # failures logged (the chart's hub runs the same)
        # as the student, never as root: the home may hold links the student planted (.homes)
        write_home(home, owner, files={".jupyter/nbgrader_config.py": student_config_text(course_id, url)},
                   log=spawner.log)

    return hook


# ------------------------------------------------------------------------------ the lecturer side


def lecturer_side(c, course_root: str | os.PathLike) -> None:
    """Point the course's nbgrader config ``c`` at ngshare, for formgrader (the grader service's
    environment names the URL and holds the token) and for ``nbgrader`` run as root in the course
    folder (URL and token from ``state/``, root's only). Does nothing while the hub has never
    started (no URL known): nbgrader then says the exchange is not reachable."""
    from .exchange_plugin import configure

    root_outputs(course_root)  # root's nbgrader writes there next: never through a link (item of lecturer/grading.md)
    state = Path(course_root) / "state"
    url = os.environ.get("DECODELAB_NGSHARE_URL")
    if not url:
        try:
            url = json.loads((state / "services.json").read_text(encoding="utf-8"))["ngshare_url"]
        except (OSError, ValueError, KeyError):
            url = _service_url(NGSHARE, NGSHARE_PORT)
    if not os.environ.get("JUPYTERHUB_API_TOKEN"):
        try:
            os.environ["JUPYTERHUB_API_TOKEN"] = (state / "grader-token").read_text(encoding="ascii").strip()
        except OSError:
            pass
    configure(c, url)
    # the file exchange's folder, which the course's config sets for nbgrader without the hub:
    # ngshare's classes have no such option ("Config option `root` not recognized by `ExchangeCollect`")
    if "root" in c.Exchange:
        del c.Exchange["root"]


COURSE_BLOCK = '''
# ---- 누가, 언제 냈는가: decodelab classroom init (lecturer/grading.md). The exchange is ngshare behind
# the hub (identity = the hub login of the token, time = the server's); due dates are the gradebook's.
from decodelab.classroom.exchange import lecturer_side as _lecturer_side

_lecturer_side(c, c.CourseDirectory.root)
# a resubmission after the due date never replaces an on-time one (collect names the late one)
c.ExchangeCollect.before_duedate = True
# late policy: this percent of the score per started day late (100 = a late submission scores 0)
c.AssignLatePenalties.plugin_class = "decodelab.classroom.exchange_plugin.LatePenalty"
c.LatePenalty.percent_per_day = {percent!r}
'''


def course_config_block(percent_per_day: float) -> str:
    """The part of the course's ``nbgrader_config.py`` that :func:`decodelab.classroom.cli.init_command` appends."""
    return COURSE_BLOCK.format(percent=float(percent_per_day))


# ------------------------------------------------------------------------------ due dates


def parse_due(text: str) -> datetime:
    """``YYYY-MM-DD HH:MM`` (or ISO 8601 with an offset) as naive UTC, nbgrader's form. Without an
    offset the time is Korea Standard Time (UTC+9).

    Raises:
        ValueError: (Korean) not a date and time.
    """
    try:
        when = datetime.fromisoformat(text.strip().replace(" ", "T", 1) if "T" not in text else text.strip())
    except ValueError:
        raise ValueError(f"마감 시각 {text!r}을(를) 읽을 수 없습니다: '2026-12-20 23:59'처럼 적으세요 "
                         "(한국 시간; 다른 시간대는 '2026-12-20T23:59+00:00').") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=KST)
    return when.astimezone(timezone.utc).replace(tzinfo=None)


def due_options(values: list[str], assignments: list[str]) -> dict[str, datetime]:
    """``--due`` values (``DATE`` for every assignment, or ``exam-NN=DATE``) as {assignment: naive UTC}.

    Raises:
        ValueError: (Korean) an unknown assignment or an unreadable date.
    """
    out: dict[str, datetime] = {}
    for v in values:
        m = re.fullmatch(r"(exam-\d\d)=(.+)", v.strip())
        if m:
            if m[1] not in assignments:
                raise ValueError(f"--due {v}: 과제 {m[1]}이(가) 없습니다 (있는 과제: {', '.join(assignments)}).")
            out[m[1]] = parse_due(m[2])
        else:
            when = parse_due(v)
            out.update({a: when for a in assignments if a not in out})
    return out


def set_due_dates(course: str | os.PathLike, dues: dict[str, datetime], course_id: str = "decodelab") -> None:
    """Record each assignment's due date (naive UTC) in the course's nbgrader gradebook."""
    from nbgrader.api import Gradebook

    # nbgrader makes a new gradebook with the `alembic` command: the one beside this Python
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}", course_id) as gb:
        for name, when in dues.items():
            gb.update_or_create_assignment(name, duedate=when)


# ------------------------------------------------------------------ students' files in formgrader


def _load_jupyter_server_extension(serverapp) -> None:
    """Jupyter server extension of the grader service: :data:`FILE_HEADERS` on every response of
    nbgrader's ``SubmissionFilesHandler`` (module docstring), through a tornado output transform
    that asks the server's router which handler the request goes to."""
    from nbgrader.server_extensions.formgrader.handlers import SubmissionFilesHandler
    from tornado.web import OutputTransform

    app = serverapp.web_app

    class SandboxSubmissionFiles(OutputTransform):
        def __init__(self, request):
            super().__init__(request)
            handler = getattr(app.find_handler(request), "handler_class", None)
            self.files = isinstance(handler, type) and issubclass(handler, SubmissionFilesHandler)

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if self.files:
                for name, value in FILE_HEADERS.items():
                    old = headers.get(name) if name == "Content-Security-Policy" else None
                    headers[name] = f"{old}; {value}" if old else value
            return status_code, headers, chunk

    app.transforms.append(SandboxSubmissionFiles)
    serverapp.log.info("decodelab: formgrader serves students' files with %s", FILE_HEADERS)
