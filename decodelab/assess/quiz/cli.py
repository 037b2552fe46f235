"""Command-line glue for the lecturer: ``decodelab quiz view`` (``decodelab grade`` is
:func:`decodelab.assess.report.main`).

``decodelab/tools/cli.py`` dispatches to :func:`quiz_main` with the remaining arguments; it and the
subcommand return an exit status instead of calling ``sys.exit``. ``view``: 0 printed; 2 unknown
question or bad quiz files.
"""

from __future__ import annotations

import sys
from typing import Sequence

from ..._cli import ArgumentParser, check_quizzes_option, error_text
from .loading import QuizError

__all__ = ["quiz_main", "view_main"]


def view_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab quiz view QUESTION_ID SHUFFLE_KEY [--quizzes DIR]``: print the order and labels in
    which the student with this shuffle key (the submission's ``shuffle_key``, or its ``student_id``)
    saw the options of a question (:func:`decodelab.assess.quiz.shuffle.student_view`), each with the quiz
    file's option id.

    Returns:
        0 printed; 2 unknown question or bad quiz files.
    """
    from .loading import get_question
    from .shuffle import student_view

    p = ArgumentParser(prog="decodelab quiz view",
                       description="학생이 본 선택지 순서와 번호를 다시 보여 줍니다 (제출 파일의 shuffle_key 또는 학번).")
    p.add_argument("question_id", help="문항 id (예: 01-decode-definition)")
    p.add_argument("shuffle_key", help="제출 파일의 shuffle_key (없으면 student_id)")
    p.add_argument("--quizzes", default=None, help="정답이 든 퀴즈 폴더 (기본: $DECODELAB_QUIZZES, 없으면 패키지에 든 연습 퀴즈)")
    args = p.parse_args(argv)
    try:
        check_quizzes_option(args.quizzes)
        q = get_question(args.question_id, args.quizzes)
    except (KeyError, QuizError, FileNotFoundError, ValueError) as e:
        print(f"decodelab quiz view: 오류: {e.args[0] if isinstance(e, KeyError) else error_text(e)}", file=sys.stderr)
        return 2
    rows = student_view(q, args.shuffle_key)
    print(f"{q.id} ({args.shuffle_key}): {q.prompt}")
    if not rows:
        print("  (선택지가 없는 문항입니다)")
    for label, oid, text in rows:
        print(f"  {label}. [{oid}] {text}")
    return 0


def quiz_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab quiz SUBCOMMAND ...``: ``view`` (see :func:`view_main`).

    Returns:
        the subcommand's status; 0 for ``--help``; 2 for a missing or unknown subcommand.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "사용법: decodelab quiz view QUESTION_ID SHUFFLE_KEY [--quizzes DIR]  (학생이 본 선택지 순서)"
    if not args:
        print(f"{usage}\ndecodelab quiz: 오류: 하위 명령이 빠졌습니다 (view)", file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "help"):
        print(usage)
        return 0
    if args[0] == "view":
        return view_main(args[1:])
    print(f"{usage}\ndecodelab quiz: 오류: 알 수 없는 하위 명령 {args[0]!r}: view를 쓰세요", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(quiz_main())
