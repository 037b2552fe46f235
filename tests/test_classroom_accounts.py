"""The classroom's one way to get or create a system account (decodelab.classroom.accounts): the
students', the demo's, the formgrader's and the autograde sandbox's accounts all go through it."""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess

import pytest

from decodelab.classroom import accounts

pytestmark = [pytest.mark.classroom,
              pytest.mark.skipif(os.geteuid() != 0, reason="creates a real system user: root only")]


def test_got_or_created_once_checked_when_it_existed_and_refused_in_korean():
    name = f"dlacct{secrets.token_hex(3)}"
    seen = []
    try:
        made = accounts.system_account(name, system=True, home="/nonexistent")
        assert made.pw_uid != 0 and made.pw_shell == accounts.NOLOGIN and not os.path.exists(f"/home/{name}")
        again = accounts.system_account(name, system=True, check=seen.append)
        assert again.pw_uid == made.pw_uid and seen == [again]
    finally:
        subprocess.run(["userdel", name], capture_output=True)
    with pytest.raises(KeyError):
        pwd.getpwnam(name)
    with pytest.raises(accounts.AccountError, match="만들지 못했습니다.*직접 만들어 두세요"):
        accounts.system_account("bad name!", system=True)
