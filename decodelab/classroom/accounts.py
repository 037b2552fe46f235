"""The classroom's system accounts, got or created in one way (``useradd`` when missing).

Four accounts use it: each student's (:func:`decodelab.classroom.hub.pre_spawn_hook`, class mode),
the demo's ``decodelab-demo``, the formgrader service's ``decodelab-formgrader``
(:mod:`.exchange`) and the autograde sandbox's ``decodelab-grader`` (:mod:`.sandbox`). A leaf: it
imports nothing of decodelab.
"""

from __future__ import annotations

import os
import pwd
import shlex
import subprocess
from typing import Callable

__all__ = ["AccountError", "NOBODY", "RESERVED_NAMES", "RESERVED_PREFIX", "check_service_account", "reserved_name", "system_account",
           "system_uid", "uid_min"]

NOLOGIN = "/usr/sbin/nologin"
#: the user id of ``nobody`` (Debian's 65534): a system account above ``UID_MIN``
NOBODY = 65534
#: names no student may have (sign-up, login, spawn, roster): the course's service accounts and
#: hub services (ngshare and formgrader know a hub token by its owner's name) and the machine's own
RESERVED_NAMES = frozenset({"root", "nobody", "formgrader", "ngshare"})
#: every name starting with this is the course's (``decodelab-grader``, ``decodelab-formgrader``,
#: ``decodelab-demo``, ``decodelab-polls``...), taken or not yet
RESERVED_PREFIX = "decodelab-"


def uid_min() -> int:
    """The first user id of ordinary accounts: ``UID_MIN`` of ``/etc/login.defs``, else 1000 (its default)."""
    import re

    try:
        with open("/etc/login.defs", encoding="utf-8", errors="replace") as fh:
            m = re.search(r"^\s*UID_MIN\s+(\d+)", fh.read(), re.M)
    except OSError:
        m = None
    return int(m[1]) if m else 1000


def system_uid(uid: int) -> bool:
    """Whether user id ``uid`` is a system account's: below :func:`uid_min`, or ``nobody``."""
    return uid < uid_min() or uid == NOBODY


def reserved_name(name: str) -> bool:
    """Whether ``name`` can never be a student's: one of :data:`RESERVED_NAMES`, any name starting
    with :data:`RESERVED_PREFIX`, or the name of an existing system account of this machine (a user
    id below :func:`uid_min`, or ``nobody``). A student given such a name would get that account
    (``decodelab-grader`` signed up before the first autograde became the sandbox's account)."""
    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIX):
        return True
    try:
        pw = pwd.getpwnam(name)
    except (KeyError, ValueError):  # ValueError: a NUL in the name
        return False
    return system_uid(pw.pw_uid)


def check_service_account(pw: pwd.struct_passwd, what: str) -> None:
    """Refuse ``pw`` as the course's service account ``what`` unless it is a system account: a user id
    above 0 and below :func:`uid_min` (what ``useradd --system`` gives), so never an ordinary user's
    account such as one a student got from the hub by signing up under its name.

    Raises:
        AccountError: (Korean) root, or an ordinary account; says how to fix it.
    """
    if pw.pw_uid == 0 or pw.pw_gid == 0:
        raise AccountError(f"{what} 계정 {pw.pw_name!r}이(가) root 권한입니다: 권한 없는 시스템 계정을 주세요.")
    if pw.pw_uid >= uid_min():
        raise AccountError(
            f"{what} 계정 {pw.pw_name!r}은(는) 시스템 계정이 아닌 일반 사용자 계정입니다 (uid {pw.pw_uid} >= UID_MIN "
            f"{uid_min()}): 학생이 그 이름으로 가입해 얻은 계정일 수 있어 쓰지 않습니다. 그 계정을 지우고"
            f"('sudo userdel --remove {pw.pw_name}', 허브의 /hub/admin 에서도 그 사용자를 지우세요) 다시 실행하면 "
            "시스템 계정으로 새로 만듭니다.")


class AccountError(RuntimeError):
    """A system account is missing and cannot be created (Korean message with the command to run)."""


def system_account(name: str, *, system: bool, home: str | None = None, create_home: bool = False,
                   shell: str = NOLOGIN, comment: str | None = None, log=None,
                   check: Callable[[pwd.struct_passwd], None] | None = None) -> pwd.struct_passwd:
    """The account ``name``, created with ``useradd`` when missing.

    Args:
        system: a system account (``--system --user-group``: a uid below ``UID_MIN``, its own group)
            rather than an ordinary user's (a student's).
        home: its home folder (``--home-dir``; None: useradd's default ``/home/<name>``).
        create_home: make the home (``--create-home``; else ``--no-create-home``).
        shell: its login shell (default nologin).
        comment: its GECOS comment.
        log: a logger told when the account is created.
        check: called with an account that already existed (raises to refuse it).

    Raises:
        AccountError: (Korean) missing and this process is not root, or ``useradd`` failed (its
            message quoted, with the command to run by hand).
    """
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        pass
    else:
        if check is not None:
            check(pw)
        return pw
    cmd = ["useradd", *(["--system", "--user-group"] if system else []),
           "--create-home" if create_home else "--no-create-home",
           *(["--home-dir", home] if home else []), "--shell", shell, *(["--comment", comment] if comment else []), name]
    if os.geteuid() != 0:
        raise AccountError(f"시스템 사용자 {name}이(가) 없고 이 프로세스가 root가 아니라 만들 수 없습니다: "
                           f"'sudo {shlex.join(cmd)}'로 만들어 두세요.")
    if log is not None:
        log.info("decodelab: creating the system user %s", name)
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return pwd.getpwnam(name)  # made now (or by a second process at the same moment)
    except KeyError:
        raise AccountError(f"시스템 사용자 {name}을(를) 만들지 못했습니다 ({r.stderr.strip() or r.returncode}): "
                           f"'{shlex.join(cmd)}'로 직접 만들어 두세요.") from None
