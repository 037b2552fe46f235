"""Command-line glue for the lecturer: ``decodelab quiz release`` and ``decodelab quiz view``
(``decodelab grade`` is :func:`decodelab.gradebook.main`).

``decodelab/cli.py`` dispatches to :func:`quiz_main` with the remaining arguments; it and the
subcommands return an exit status instead of calling ``sys.exit``. ``release``: 0 written; 2
refused or failed. ``view``: 0 printed; 2 unknown question or bad quiz files.
"""

from __future__ import annotations

import sys
from typing import Sequence

from .._cli import ArgumentParser, check_quizzes_option, error_text
from .loading import QuizError, load_quizzes

__all__ = ["quiz_main", "release_main", "view_main"]


def release_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab quiz release OUT_DIR [--quizzes DIR]``: write the practice release (no keys, no
    explanations) of every quiz file into OUT_DIR.

    Returns:
        0 written, 2 refused (OUT_DIR overlaps the quiz folder, or is a non-empty folder that is not a
        previous release) or failed.
    """
    from .release import build_release

    p = ArgumentParser(
        prog="decodelab quiz release",
        description="정답과 해설을 뺀 학생용 연습 배포본을 만듭니다(연습 퀴즈와 같은 문항이라 성적용이 아닙니다: 성적용 평가는 decodelab classroom). 채점은 강사의 quizzes/ 폴더(정답 파일)로 "
        "`decodelab grade`가 합니다.",
    )
    p.add_argument("out_dir", help="배포본을 쓸 폴더 (없거나 비어 있거나 이전 배포본)")
    p.add_argument("--quizzes", default=None, help="정답이 든 퀴즈 폴더 (기본: $DECODELAB_QUIZZES, 없으면 패키지에 든 연습 퀴즈)")
    args = p.parse_args(argv)
    try:
        check_quizzes_option(args.quizzes)
        res = build_release(args.out_dir, quizzes=args.quizzes)
    except (QuizError, FileNotFoundError, ValueError, OSError) as e:
        print(f"decodelab quiz release: 오류: {error_text(e)}", file=sys.stderr)
        return 2
    print(f"연습 배포본 {res.release_id}: 파일 {len(res.files)}개 -> {res.out_dir} (quiz_set {res.quiz_set})")
    return 0


def view_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab quiz view QUESTION_ID SHUFFLE_KEY [--quizzes DIR] [--release DIR]``: print the order
    and labels in which the student with this shuffle key (the submission's ``shuffle_key``, or its
    ``student_id``) saw the options of a question (:func:`decodelab.quiz.shuffle.student_view`), each
    with the quiz file's option id. ``--release``: the student answered a practice release (whose
    options were shuffled under their opaque ids); the ids are mapped back with the quiz files.

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
    p.add_argument("--release", default=None, help="학생이 푼 연습 배포본 폴더 (배포본으로 푼 제출일 때)")
    args = p.parse_args(argv)
    try:
        check_quizzes_option(args.quizzes)
        q = get_question(args.question_id, args.quizzes)
        back: dict[str, str] = {}
        shown_q = q
        if args.release:
            from .loading import load_public, release_ids
            from .release import release_salt

            public = {x.id: x for x in load_public(args.release).questions}
            if q.id not in public:
                raise KeyError(f"문항 id {q.id!r}가 배포본 {args.release}에 없습니다.")
            shown_q = public[q.id]
            back = {o: k for k, o in release_ids(q, release_salt(load_quizzes(args.quizzes))).items()}
    except (KeyError, QuizError, FileNotFoundError, ValueError) as e:
        print(f"decodelab quiz view: 오류: {e.args[0] if isinstance(e, KeyError) else error_text(e)}", file=sys.stderr)
        return 2
    rows = [(label, back.get(oid, oid), text) for label, oid, text in student_view(shown_q, args.shuffle_key)]
    print(f"{q.id} ({args.shuffle_key}): {q.prompt}")
    if not rows:
        print("  (선택지가 없는 문항입니다)")
    for label, oid, text in rows:
        print(f"  {label}. [{oid}] {text}")
    return 0


def quiz_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab quiz SUBCOMMAND ...``: ``release`` (see :func:`release_main`) and ``view`` (see
    :func:`view_main`).

    Returns:
        the subcommand's status; 0 for ``--help``; 2 for a missing or unknown subcommand.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    usage = ("사용법: decodelab quiz release OUT_DIR [--quizzes DIR]  (정답과 해설이 없는 학생용 연습 배포본)\n"
             "        decodelab quiz view QUESTION_ID SHUFFLE_KEY [--quizzes DIR]  (학생이 본 선택지 순서)")
    if not args:
        print(f"{usage}\ndecodelab quiz: 오류: 하위 명령이 빠졌습니다 (release 또는 view)", file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "help"):
        print(usage)
        return 0
    if args[0] == "release":
        return release_main(args[1:])
    if args[0] == "view":
        return view_main(args[1:])
    print(f"{usage}\ndecodelab quiz: 오류: 알 수 없는 하위 명령 {args[0]!r}: release 또는 view를 쓰세요", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(quiz_main())
