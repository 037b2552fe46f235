"""The argument parser every ``decodelab`` subcommand uses: argparse with Korean messages.

:class:`ArgumentParser` is :class:`argparse.ArgumentParser` whose usage line, ``-h`` help and
errors are Korean. argparse builds its error sentences in English (``gettext`` without a Korean
catalogue); :func:`korean_error` rewrites the ones a user meets (a missing required argument, an
unknown choice, a value of the wrong type, an unknown option, an option without its value) and
keeps the original text for any other. A usage error exits with code 2, as argparse does.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

__all__ = ["ArgumentParser", "korean_error", "positive_int"]

_TYPES = {"int": "정수", "float": "실수(소수)", "Path": "경로"}

_RULES: list[tuple[re.Pattern, callable]] = [
    (re.compile(r"the following arguments are required: (.+)"), lambda m: f"필수 인자가 빠졌습니다: {m[1]}"),
    (re.compile(r"argument (\S+): invalid choice: (.+?) \(choose from (.+)\)"),
     lambda m: f"인자 {m[1]}: {m[2]}은(는) 고를 수 있는 값이 아닙니다 (가능한 값: {m[3]})"),
    (re.compile(r"argument (\S+): invalid (\w+) value: (.+)"),
     lambda m: f"인자 {m[1]}: {m[3]} 대신 {_TYPES.get(m[2], m[2])} 값을 주세요"),
    (re.compile(r"argument (\S+): expected one argument"), lambda m: f"인자 {m[1]}에 값이 하나 필요합니다"),
    (re.compile(r"argument (\S+): expected (.+) arguments?"), lambda m: f"인자 {m[1]}에 값이 더 필요합니다 ({m[2]})"),
    (re.compile(r"unrecognized arguments: (.+)"), lambda m: f"알 수 없는 인자입니다: {m[1]}"),
    (re.compile(r"argument (\S+): not allowed with argument (\S+)"),
     lambda m: f"인자 {m[1]}은(는) {m[2]}와(과) 함께 쓸 수 없습니다"),
    (re.compile(r"ambiguous option: (\S+) could match (.+)"), lambda m: f"옵션 {m[1]}이(가) 여럿과 맞습니다: {m[2]}"),
    (re.compile(r"argument (\S+): (.+)"), lambda m: f"인자 {m[1]}: {m[2]}"),
]


def korean_error(message: str) -> str:
    """argparse's English error ``message`` in Korean (unchanged when no rule matches).

    Example: ``korean_error("the following arguments are required: DIR")`` is
    ``"필수 인자가 빠졌습니다: DIR"``.
    """
    for pattern, render in _RULES:
        m = pattern.fullmatch(message.strip())
        if m:
            return render(m)
    return message


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
