"""The argument parser every ``decodelab`` subcommand uses: argparse with Korean messages.

:class:`ArgumentParser` is :class:`argparse.ArgumentParser` whose usage line, ``-h`` help and
errors are Korean. argparse builds its error sentences in English (``gettext`` without a Korean
catalogue); :func:`korean_error` rewrites every one a user can meet (a missing required argument,
an unknown choice, a value of the wrong type, an unknown or ambiguous option, too few or too many
values, a value given to an option that takes none, options that exclude each other). A usage
error exits with code 2, as argparse does.

:func:`error_text` is the Korean line a command prints for an error it caught; :func:`printable` is
text a student wrote (a file name, a JSON key) made safe to print on the lecturer's terminal;
:func:`check_quizzes_option` checks the ``--quizzes DIR`` option of ``grade`` and ``quiz``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable, NoReturn

from ._atomic import os_reason

__all__ = ["ArgumentParser", "check_quizzes_option", "error_text", "korean_error", "positive_int", "printable"]

_TYPES = {"int": "정수", "float": "실수(소수)", "Path": "경로"}

#: argparse's whole-command errors, in Korean (each an ``re`` pattern and its rendering).
_COMMAND_RULES: list[tuple[re.Pattern, Callable[[re.Match], str]]] = [
    (re.compile(r"the following arguments are required: (.+)"), lambda m: f"필수 인자가 빠졌습니다: {m[1]}"),
    (re.compile(r"one of the arguments (.+) is required"), lambda m: f"다음 인자 중 하나가 필요합니다: {m[1]}"),
    (re.compile(r"unrecognized arguments: (.+)"), lambda m: f"알 수 없는 인자입니다: {m[1]}"),
    (re.compile(r"ambiguous option: (\S+) could match (.+)"), lambda m: f"옵션 {m[1]}이(가) 여럿과 맞습니다: {m[2]}"),
    (re.compile(r"unexpected option string: (.+)"), lambda m: f"알 수 없는 옵션 형식입니다: {m[1]}"),
]

#: argparse's errors about one argument (``argument NAME: <message>``), in Korean; each rendering
#: gets the argument's name and the match of the message.
_ARGUMENT_RULES: list[tuple[re.Pattern, Callable[[str, re.Match], str]]] = [
    (re.compile(r"invalid choice: (.+?)(?:, maybe you meant (.+)\?)? \(choose from (.+)\)"),
     lambda a, m: f"인자 {a}: {m[1]}은(는) 고를 수 있는 값이 아닙니다 (가능한 값: {m[3]})"),
    (re.compile(r"invalid (\w+) value: (.+)"), lambda a, m: f"인자 {a}: {m[2]} 대신 {_TYPES.get(m[1], m[1])} 값을 주세요"),
    (re.compile(r"expected one argument"), lambda a, m: f"인자 {a}에 값이 하나 필요합니다"),
    (re.compile(r"expected at most one argument"), lambda a, m: f"인자 {a}에는 값을 하나까지만 줄 수 있습니다"),
    (re.compile(r"expected at least one argument"), lambda a, m: f"인자 {a}에 값이 하나 이상 필요합니다"),
    (re.compile(r"expected (\d+) arguments?"), lambda a, m: f"인자 {a}에 값이 {m[1]}개 필요합니다"),
    (re.compile(r"not allowed with argument (\S+)"), lambda a, m: f"인자 {a}은(는) {m[1]}와(과) 함께 쓸 수 없습니다"),
    (re.compile(r"ignored explicit argument (.+)"),
     lambda a, m: f"옵션 {a}은(는) 값을 받지 않습니다: ={_unquoted(m[1])} 없이 {a.split('/')[-1]}만 쓰세요"),
    (re.compile(r"unknown parser (.+) \(choices: (.+)\)"),
     lambda a, m: f"{m[1]}은(는) 알 수 없는 하위 명령입니다 (가능한 명령: {m[2]})"),
    (re.compile(r"can't open '(.+)': (.+)", re.S), lambda a, m: f"인자 {a}: 파일 {m[1]}을(를) 열 수 없습니다 ({m[2]})"),
]


def _unquoted(text: str) -> str:
    """``repr`` of a string without its quotes (``"'1'"`` -> ``"1"``)."""
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def korean_error(message: str) -> str:
    """argparse's English error ``message`` in Korean.

    A message about one argument (``argument NAME: ...``) keeps its own text when no rule knows it
    (the Korean text of an ``argparse.ArgumentTypeError`` of ours, e.g. :func:`positive_int`); any
    other message without a rule is returned unchanged.

    Example: ``korean_error("the following arguments are required: DIR")`` is
    ``"필수 인자가 빠졌습니다: DIR"``.
    """
    text = message.strip()
    for pattern, render in _COMMAND_RULES:
        m = pattern.fullmatch(text)
        if m:
            return render(m)
    arg = re.fullmatch(r"argument (\S+): (.+)", text, re.S)
    if arg is None:
        return message
    for pattern, render_arg in _ARGUMENT_RULES:
        m = pattern.fullmatch(arg[2])
        if m:
            return render_arg(arg[1], m)
    return f"인자 {arg[1]}: {arg[2]}"


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` with a Korean usage line, ``-h`` help and error messages.

    Errors print ``사용법: ...`` and ``<prog>: 오류: <Korean message>`` on stderr, then exit 2.
    Subparsers made with ``add_subparsers().add_parser`` are of this class too.
    """

    def __init__(self, *args, add_help: bool = True, **kwargs):
        super().__init__(*args, add_help=False, **kwargs)
        self.register("action", "parsers", _SubParsers)
        if add_help:
            self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                              help="이 도움말을 보여 주고 끝냅니다")

    def format_usage(self) -> str:
        return super().format_usage().replace("usage:", "사용법:", 1)

    def format_help(self) -> str:
        text = super().format_help().replace("usage:", "사용법:", 1)
        for en, ko in (("positional arguments:", "위치 인자:"), ("options:", "옵션:"),
                       ("optional arguments:", "옵션:")):
            text = text.replace(en, ko)
        return text

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: 오류: {korean_error(message)}\n")


class _SubParsers(argparse._SubParsersAction):
    """Subcommand action whose parsers are :class:`ArgumentParser` (Korean messages)."""

    def __init__(self, *args, **kwargs):
        kwargs["parser_class"] = ArgumentParser
        super().__init__(*args, **kwargs)


def positive_int(text: str) -> int:
    """argparse ``type=`` for a count that must be at least 1 (Korean error otherwise).

    Raises:
        argparse.ArgumentTypeError: ``text`` is not an integer, or is below 1.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} 대신 1 이상의 정수를 주세요") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}은(는) 너무 작습니다: 1 이상의 정수를 주세요")
    return value


def error_text(e: Exception) -> str:
    """The Korean message of a caught error: its own text, or for a raw OSError ("[Errno 13] ...")
    a Korean reason with the path."""
    if isinstance(e, OSError) and e.errno is not None:
        where = f"{e.filename}: " if e.filename else ""
        return f"{where}{os_reason(e)}: 경로와 권한을 확인하세요."
    return str(e)


def printable(text: str) -> str:
    """``text`` with every character that :meth:`str.isprintable` rejects written as its Python escape
    (``\\x1b``, ``\\n``, ``\\u202e``, ``\\udcff``): control characters and terminal escape sequences, line
    breaks, tabs, bidirectional overrides, zero-width characters, undecodable bytes of a file name.

    For text a student controls (a submitted file's name, a key of their JSON) that a command prints
    to the lecturer's terminal: such text can then neither move the cursor, erase or forge lines,
    set the window title or the clipboard, nor hide that a file was left out. Hangul and spaces are
    printed as they are."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii") for c in text)


def check_quizzes_option(value: str | None) -> None:
    """Refuse a ``--quizzes`` folder that does not exist, naming the option the user typed.

    Raises:
        FileNotFoundError: (Korean) ``value`` is given and is not a folder.
    """
    if value is not None and not Path(value).is_dir():
        what = "파일입니다" if Path(value).exists() else "없습니다"
        raise FileNotFoundError(f"--quizzes {value}: 퀴즈 폴더가 {what}. 정답이 든 quizzes 폴더를 주거나, "
                                "이 옵션을 빼면 패키지에 든 연습 퀴즈를 씁니다.")
