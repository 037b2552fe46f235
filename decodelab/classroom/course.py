"""The course folder's basics, shared by the classroom commands without importing each other:
its JupyterHub config's name, the user-name rule of the hub and the roster, reading a CSV file
(UTF-8 or Excel's CP949), the roster, and the students a course records. It imports only the leaf
:mod:`.accounts` (the reserved names), so :mod:`.hub`, :mod:`.assignments` and :mod:`.lms` all use it and none of
them imports another for these.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

from .._atomic import os_reason

__all__ = ["CONFIG_NAME", "USERNAME", "check_names", "check_username", "course_students", "name_refusal",
           "read_csv", "read_roster"]

CONFIG_NAME = "jupyterhub_config.py"
#: JupyterHub user names we accept: a system user's name (``useradd``), as lecturer/classroom.md says:
#: a lower-case letter, then lower-case letters, digits, ``_`` and ``-``, at most 32 in all
USERNAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def read_roster(path: str | os.PathLike) -> list[str]:
    """User names of a roster CSV (a header row with a ``username`` column, matched without regard to
    case: ``Username`` of a Moodle participants export is the same; other columns ignored).

    Raises:
        ValueError: (Korean) no ``username`` column, no names, a name JupyterHub/useradd cannot
            take (lower-case letters, digits, ``_``/``-``, <= 32, starting with a letter or ``_``),
            or a name listed twice.
    """
    header, rows = read_csv(path, "명단")
    # the header without regard to case or spaces: Moodle's participants export writes "Username"
    column = next((h for h in header if (h or "").strip().casefold() == "username"), None)
    if column is None:
        raise ValueError(f"명단 {path}: 첫 줄에 username 열이 있어야 합니다 (예: username,name; 찾은 열: "
                         f"{', '.join(header) or '없음'}).")
    if not rows:
        raise ValueError(f"명단 {path}: username 열 아래에 학생 이름이 하나도 없습니다: 한 줄에 한 명씩 적으세요.")
    return check_names([(r.get(column) or "").strip() for r in rows], f"명단 {path}")


def read_csv(path: str | os.PathLike, what: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows (dicts) of the CSV file ``path``, read as UTF-8 (with or without BOM)
    or, failing that, CP949 (what Excel on Korean Windows saves as plain "CSV").

    Raises:
        ValueError: (Korean, naming ``what`` and ``path``) the file is missing, a folder, unreadable,
            or in neither encoding.
    """
    for encoding in ("utf-8-sig", "cp949"):
        try:
            with open(path, newline="", encoding=encoding) as fh:
                reader = csv.DictReader(fh)
                rows = list(reader)
                return list(reader.fieldnames or []), rows
        except UnicodeDecodeError:
            continue
        except OSError as e:
            raise ValueError(f"{what} {path}을(를) 읽을 수 없습니다 ({os_reason(e, path=True)}): CSV 파일의 경로를 확인하세요.") from None
    raise ValueError(f"{what} {path}의 글자를 읽을 수 없습니다 (UTF-8도 CP949도 아님): "
                     "Excel에서 '다른 이름으로 저장' → 'CSV UTF-8(쉼표로 분리)'로 다시 저장하세요.")


def name_refusal(name: str, where: str) -> str:
    """The Korean sentence that refuses user name ``name`` at ``where`` and says what to type instead."""
    fixed = name.strip().lower()
    hint = (f"{fixed!r}로 적으세요 (사용자 이름은 소문자이고 앞뒤 공백이 없습니다)" if USERNAME.fullmatch(fixed) else
            "영어 소문자로 시작하고 영어 소문자·숫자·_·-만 쓴 32자 이하의 이름을 쓰세요 (이 이름이 서버의 시스템 사용자 "
            "이름이 되므로 한글은 쓸 수 없습니다)")
    return f"{where}: {name!r}은(는) 쓸 수 없는 사용자 이름입니다: {hint}."


def check_username(name: str, where: str) -> str:
    """``name`` if it keeps the course's user-name rule (:data:`USERNAME`: what the hub and the
    roster accept), else a Korean ValueError naming ``where`` that says what to type instead
    (:func:`name_refusal`)."""
    if USERNAME.fullmatch(name):
        return name
    raise ValueError(name_refusal(name, where))


def course_students(course_dir: str | os.PathLike) -> set[str] | None:
    """The students a course directory records (``allowed_users`` of its ``jupyterhub_config.py``:
    the demo users or the roster), or None when it records none (no config, or class mode
    without a roster, where anyone may sign up)."""
    import ast

    try:
        text = (Path(course_dir) / CONFIG_NAME).read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^c\.Authenticator\.allowed_users = (\{.*\})$", text, re.M)
    return set(ast.literal_eval(m[1])) if m else None


def check_names(names: list[str], where: str) -> list[str]:
    names = [n for n in names if n]
    if not names:
        raise ValueError(f"{where}: 사용자 이름이 하나도 없습니다.")
    bad = [n for n in names if not USERNAME.fullmatch(n)]
    if bad:
        raise ValueError(f"{where}: 쓸 수 없는 사용자 이름 {bad[:5]}: 영어 소문자로 시작하고 소문자·숫자·_·-만, 32자 이하로 고치세요.")
    from .accounts import reserved_name

    taken = [n for n in names if reserved_name(n)]
    if taken:
        raise ValueError(f"{where}: {taken[:5]}은(는) 강좌의 서비스 계정(decodelab-으로 시작하는 이름, formgrader, ngshare)이나 "
                         "이 서버의 시스템 계정(root, nobody 등) 이름이라 학생 이름으로 쓸 수 없습니다: 다른 이름으로 고치세요.")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{where}: 두 번 나온 이름 {dup[:5]}: 한 번씩만 쓰세요.")
    return names
