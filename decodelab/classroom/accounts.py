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

__all__ = ["AccountError", "system_account"]

NOLOGIN = "/usr/sbin/nologin"


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
