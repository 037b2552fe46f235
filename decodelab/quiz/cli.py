"""Command-line glue for the lecturer: ``decodelab grade`` and ``decodelab quiz release``.

``decodelab/cli.py`` dispatches to :func:`grade_main` and :func:`release_main` with the remaining
arguments. Both return an exit status instead of calling ``sys.exit``.

Exit status of ``grade``: 0 all files graded; 1 gradebook written but some files were skipped
(each listed on stderr with its reason; the stdout summary counts them); 2 nothing written (no such folder, a file instead of a folder, no submission
file in the folder, invalid quiz key, bad arguments). ``release``: 0 written; 2 refused or failed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from .._atomic import os_reason
from .._cli import ArgumentParser
from ..exercises import load_exercises
from .gradebook import DUPLICATE_RULE
from .loading import QuizError, load_quizzes, select_notebook
from .submission import MAX_BYTES

__all__ = ["grade_main", "quiz_main", "release_main", "view_main"]

_GRADE_EPILOG = (
    "종료 코드: 0: 모든 제출 파일을 채점함. 1: 성적표는 썼지만 건너뛴 파일이 있음 (stderr에 이유). "
    "2: 아무것도 쓰지 않음 (폴더가 없거나 파일을 지정함, 폴더에 제출 파일이 없을 때, 정답 파일 오류, 잘못된 인자). "
    "폴더 안의 .csv 파일(이전 성적표)과 -o 로 쓰는 파일은 읽지 않으므로 `cd 제출폴더 && decodelab grade .`를 "
    "여러 번 실행해도 됩니다. 빈칸 = 답하지 않음, 0 = 틀림, '검토 필요' = 규칙으로 판단할 수 없어 강사가 읽을 답. "
    f"중복 제출: {DUPLICATE_RULE}."
)


def _message(e: Exception) -> str:
    """The Korean message of an error; a raw OSError ("[Errno 13] ...") gets a Korean reason instead."""
    if isinstance(e, OSError) and e.errno is not None:
        where = f"{e.filename}: " if e.filename else ""
        return f"{where}{os_reason(e)}: 경로와 권한을 확인하세요."
    return str(e)


def _check_quizzes_option(value: str | None) -> None:
    """Refuse a ``--quizzes`` folder that does not exist, naming the option the user typed.

    Raises:
        FileNotFoundError: (Korean) ``value`` is given and is not a folder.
    """
    if value is not None and not Path(value).is_dir():
        what = "파일입니다" if Path(value).exists() else "없습니다"
        raise FileNotFoundError(f"--quizzes {value}: 퀴즈 폴더가 {what}. 정답이 든 quizzes 폴더를 주거나, "
                                "이 옵션을 빼면 패키지에 든 연습 퀴즈를 씁니다.")


def _grade_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="decodelab grade",
        description="학생 제출 파일(.json)이 든 폴더를 채점해 성적표 CSV를 만듭니다 (학생 한 명당 한 행, 문항마다 한 열 + 합계). "
        "제출 파일은 데이터로만 읽으며, 잘못된 파일은 건너뛰고 알려 줍니다.",
        epilog=_GRADE_EPILOG,
    )
    p.add_argument("submissions_dir", help="제출 파일 폴더")
    p.add_argument("-o", "--output", default="gradebook.csv", help="성적표 CSV 경로 (기본: gradebook.csv)")
    p.add_argument("--quizzes", default=None, help="정답이 든 퀴즈 폴더 (기본: $DECODELAB_QUIZZES, 없으면 패키지에 든 연습 퀴즈)")
    p.add_argument("--notebook", action="append", default=None, metavar="NN",
                   help="이 노트북의 문항만 채점 (여러 번 쓸 수 있음, 예: --notebook 01 --notebook 02)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, help=f"제출 파일 하나의 최대 크기 (기본 {MAX_BYTES})")
    p.add_argument("--lms", action="append", choices=["moodle", "canvas"], default=None,
                   help="LMS 가져오기용 CSV도 씁니다: 성적표 옆에 <이름>-moodle.csv / <이름>-canvas.csv "
                        "(노트북별 점수와 합계; 여러 번 쓸 수 있음)")
    return p


def grade_main(argv: Sequence[str] | None = None) -> int:
    """``decodelab grade SUBMISSIONS_DIR -o gradebook.csv [--quizzes DIR] [--notebook NN] [--max-bytes N]
    [--lms moodle|canvas]``.

    Next to the gradebook it writes ``<name>-rubric.md`` (the written exercises' rubrics and model
    answers, when there are any), ``<name>-predictions.md`` (how far the class's predictions were
    off, when predictions are defined) and, with ``--lms``, ``<name>-moodle.csv`` / ``<name>-canvas.csv``.

    Prints skipped files and warnings to stderr, a one-line summary to stdout. The output file and
    any ``*.csv`` in the folder are never read as submissions (see
    :func:`decodelab.quiz.gradebook.grade_folder`), so grading the current folder twice works.

    Returns:
        0 all good, 1 written with skipped files, 2 nothing written: the output is not a ``.csv``
        (so a student's ``.json`` submission is never overwritten), the folder holds no submission
        file, or no file could be graded while a gradebook already exists (it is left as it was).
    """
    from pathlib import Path

    from .gradebook import grade_folder, write_gradebook, write_lms_csv, write_predictions, write_rubrics

    args = _grade_parser().parse_args(argv)
    err = sys.stderr
    try:
        _check_quizzes_option(args.quizzes)
        notebooks = {select_notebook(n) for n in args.notebook} if args.notebook else None
        every = load_quizzes(args.quizzes)
        questions = every
        if notebooks and None not in notebooks:
            questions = [q for q in every if q.notebook in notebooks]
        exercises = load_exercises(args.quizzes)
        if notebooks and None not in notebooks:
            exercises = {k: v for k, v in exercises.items() if k[:2] in notebooks}
        if args.max_bytes < 1:
            raise ValueError("--max-bytes는 1 이상이어야 합니다.")
        out_path = Path(args.output)
        if out_path.suffix.lower() != ".csv":
            raise ValueError(f"-o {args.output}: 성적표는 .csv 파일이어야 합니다 (예: -o gradebook.csv). 학생 제출 파일(.json)이나 "
                             "다른 파일을 덮어쓰지 않도록 다른 이름은 받지 않습니다.")
        extra = [out_path.with_name(f"{out_path.stem}-{lms}.csv") for lms in (args.lms or [])]
        rubric_path = out_path.with_name(f"{out_path.stem}-rubric.md")
        predictions_path = out_path.with_name(f"{out_path.stem}-predictions.md")
        book = grade_folder(args.submissions_dir, questions, max_bytes=args.max_bytes,
                            exclude=[args.output, *extra, rubric_path, predictions_path], exercises=exercises,
                            other_ids=[q.id for q in every], key_questions=every)
        if book.submission_files == 0:
            for p in book.problems:
                print(str(p), file=err)
            print(f"decodelab grade: 경고: 제출 파일이 없습니다: {args.submissions_dir} 폴더에 학생 제출 파일(.json)이 "
                  "하나도 없어 성적표를 쓰지 않았습니다. 학생들이 내보낸 decodelab-….json 파일을 이 폴더에 넣거나, "
                  "그 파일들이 든 폴더를 지정하세요.", file=err)
            return 2
        if not book.rows and out_path.exists():
            for p in book.problems:
                print(str(p), file=err)
            print(f"decodelab grade: 경고: 채점할 수 있는 제출 파일이 하나도 없어 기존 성적표 {args.output}를 그대로 두었습니다 "
                  "(위의 '건너뜀' 이유를 확인하세요).", file=err)
            return 2
        out = write_gradebook(book, args.output)
        written = [str(out)]
        for lms, path in zip(args.lms or [], extra):
            written.append(str(write_lms_csv(book, path, lms)))
        for extra_file in (write_rubrics(book, rubric_path), write_predictions(book, predictions_path)):
            if extra_file is not None:
                written.append(str(extra_file))
    except (QuizError, FileNotFoundError, NotADirectoryError, ValueError, OSError) as e:
        print(f"decodelab grade: 오류: {_message(e)}", file=err)
        return 2
    for p in book.problems:
        print(str(p), file=err)
    print(f"{book.summary()} -> {', '.join(written)}")
    return 1 if book.skipped else 0


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
        _check_quizzes_option(args.quizzes)
        res = build_release(args.out_dir, quizzes=args.quizzes)
    except (QuizError, FileNotFoundError, ValueError, OSError) as e:
        print(f"decodelab quiz release: 오류: {_message(e)}", file=sys.stderr)
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
        _check_quizzes_option(args.quizzes)
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
        print(f"decodelab quiz view: 오류: {e.args[0] if isinstance(e, KeyError) else _message(e)}", file=sys.stderr)
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
