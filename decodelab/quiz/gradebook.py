"""The lecturer's grader: a folder of submission files -> one gradebook row per student.

:func:`grade_folder` never stops at a bad file: a malformed, truncated, oversized, non-JSON or
hostile file (also one whose grading raises an unexpected error) is recorded in
``Gradebook.problems`` and skipped, and every good file still gets its row. :func:`write_gradebook` writes the CSV atomically (temporary file + ``os.replace``), so an
interrupted run leaves the previous gradebook intact.

CSV columns: ``student_id``, ``quiz_set``, ``file``, one column per question id (points earned:
score in [0, 1] x the question's points), ``total``, ``max``, ``percent``. UTF-8 with a BOM so that
spreadsheet programs show Hangul correctly. One row per (student, quiz set); when a student
submitted twice, the file with the later ``exported_at`` (then the later file name) is used and the
other is reported.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .._atomic import atomic_write_bytes, os_reason
from .grading import score_response
from .submission import MAX_BYTES, Submission, SubmissionError, read_submission

__all__ = ["GradeRow", "Gradebook", "Problem", "grade_folder", "gradebook_csv", "write_gradebook"]

MAX_FILES = 5000


@dataclass(frozen=True)
class Problem:
    """A file that was skipped (``skipped=True``) or a warning about a file that was graded."""

    file: str
    message: str
    skipped: bool = True

    def __str__(self) -> str:
        return f"{'건너뜀' if self.skipped else '주의'}: {self.file}: {self.message}"


@dataclass
class GradeRow:
    """One student's result: points earned per question id, ``total`` and ``max`` in points."""

    student_id: str
    quiz_set: str
    file: str
    scores: dict[str, float | None]
    total: float
    max: float
    exported_at: str = ""

    @property
    def percent(self) -> float:
        """``100 * total / max`` (0 when there is nothing to grade)."""
        return 100.0 * self.total / self.max if self.max else 0.0


@dataclass
class Gradebook:
    """Rows (sorted by student id), the question ids (columns, in quiz order), the problems, and
    ``submission_files``: how many ``*.json`` files the folder held (read or skipped; 0 means the
    folder had no submission file at all)."""

    question_ids: list[str]
    rows: list[GradeRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    submission_files: int = 0

    @property
    def skipped(self) -> list[Problem]:
        """Only the files that were skipped."""
        return [p for p in self.problems if p.skipped]


def _grade_submission(sub: Submission, questions: Sequence, file: str) -> tuple[GradeRow, list[Problem]]:
    by_id = {q.id: q for q in questions}
    warnings = []
    unknown = [k for k in sub.answers if k not in by_id]
    if unknown:
        warnings.append(Problem(file, f"이 채점에 없는 문항 id {len(unknown)}개는 무시했습니다 (예: {unknown[0]})", False))
    scores = {}
    for q in questions:
        score = score_response(q, sub.answers[q.id]) if q.id in sub.answers else 0.0
        scores[q.id] = None if score is None else score * q.points  # None: a short answer for review
    total = sum(v for v in scores.values() if v is not None)
    return GradeRow(sub.student_id, sub.quiz_set, file, scores, total, sum(q.points for q in questions),
                    sub.exported_at), warnings


def grade_folder(
    submissions_dir: str | os.PathLike,
    questions: Sequence | None = None,
    *,
    max_bytes: int = MAX_BYTES,
    max_files: int = MAX_FILES,
    exclude: Iterable[str | os.PathLike] = (),
) -> Gradebook:
    """Grade every ``*.json`` file in ``submissions_dir`` (not recursive).

    Ignored silently: dot files (also the temporary files of an interrupted gradebook write),
    ``*.csv`` files (a gradebook written into the folder by an earlier run), and the paths in
    ``exclude``. Every other entry that is not a ``*.json`` file is reported as skipped.

    Args:
        submissions_dir: the folder of submission files.
        questions: the keyed questions to grade against (default: :func:`decodelab.quiz.load_quizzes`).
        max_bytes: per-file size cap (bytes).
        max_files: at most this many files are read; the rest are reported.
        exclude: files never to read, e.g. the gradebook being written (whatever its name), so that
            ``cd 제출폴더 && decodelab grade .`` gives the same result every time.

    Returns:
        :class:`Gradebook` with good rows and every problem; ``submission_files == 0`` when the
        folder holds no ``*.json`` file.

    Raises:
        NotADirectoryError: (Korean) ``submissions_dir`` does not exist, or is a file rather than a
            folder. Nothing inside a file raises.
    """
    folder = Path(submissions_dir)
    if not folder.is_dir():
        if folder.exists():
            raise NotADirectoryError(
                f"{folder}은(는) 폴더가 아니라 파일입니다: 제출 파일 하나가 아니라 제출 파일(.json)들이 든 폴더를 "
                f"지정하세요 (예: decodelab grade {folder.parent})."
            )
        raise NotADirectoryError(f"제출 폴더가 없습니다: {folder}: 경로를 확인하세요 (학생 제출 파일들을 넣은 폴더).")
    if questions is None:
        from .loading import load_quizzes

        questions = load_quizzes()
    questions = list(questions)
    book = Gradebook([q.id for q in questions])
    here = folder.resolve()
    skip = set()
    for x in exclude:
        x = Path(x).expanduser()
        skip.add(x.parent.resolve() / x.name)
    entries = sorted((e for e in os.scandir(folder)
                      if not e.name.startswith(".") and not e.name.lower().endswith(".csv")
                      and here / e.name not in skip), key=lambda e: e.name)
    chosen: dict[tuple[str, str], tuple[GradeRow, list[Problem]]] = {}
    for n, entry in enumerate(entries):
        name = entry.name
        if name.lower().endswith(".json") and not entry.is_dir(follow_symlinks=False):
            book.submission_files += 1
        if n >= max_files:
            book.problems.append(Problem(name, f"파일이 너무 많아 {max_files}개까지만 읽었습니다"))
            continue
        if entry.is_dir(follow_symlinks=False):
            book.problems.append(Problem(name, "폴더입니다 (하위 폴더는 읽지 않습니다)"))
            continue
        if not name.lower().endswith(".json"):
            book.problems.append(Problem(name, ".json 파일이 아닙니다"))
            continue
        try:
            sub = read_submission(entry.path, max_bytes=max_bytes)
        except SubmissionError as e:
            book.problems.append(Problem(name, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 - one bad file must never stop the run
            book.problems.append(Problem(name, f"읽는 중 예상하지 못한 오류: {type(e).__name__}"))
            continue
        try:
            row, warnings = _grade_submission(sub, questions, name)
        except Exception as e:  # noqa: BLE001 - one hostile answer must never stop the run
            book.problems.append(Problem(name, f"채점 중 예상하지 못한 오류: {type(e).__name__} (이 파일만 건너뛰었습니다)"))
            continue
        key = (sub.student_id.casefold(), sub.quiz_set)
        if key in chosen:
            old_row, old_warnings = chosen[key]
            new_is_later = _order_key(row) >= _order_key(old_row)
            keep, drop = ((row, warnings), old_row) if new_is_later else ((old_row, old_warnings), row)
            book.problems.append(Problem(drop.file, f"학생 {row.student_id}의 다른 제출 파일 {keep[0].file}이(가) 더 최신이라 이 파일은 쓰지 않았습니다"))
            chosen[key] = keep
        else:
            chosen[key] = (row, warnings)
    for row, warnings in chosen.values():
        book.rows.append(row)
        book.problems.extend(warnings)
    book.rows.sort(key=lambda r: (r.student_id.casefold(), r.quiz_set))
    return book


def _order_key(row: GradeRow) -> tuple[float, str]:
    """Later submissions sort last: by ``exported_at`` (missing = earliest), then file name."""
    from datetime import datetime, timezone

    if not row.exported_at:
        return (float("-inf"), row.file)
    t = datetime.fromisoformat(row.exported_at)
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return (t.timestamp(), row.file)


def _cell(text: str) -> str:
    """Neutralize spreadsheet formulas in free text (file names)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _num(x: float | None) -> str:
    return "검토 필요" if x is None else f"{round(x, 4):g}"


def gradebook_csv(book: Gradebook) -> str:
    """The gradebook as CSV text (see the module docstring for the columns)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student_id", "quiz_set", "file", *book.question_ids, "total", "max", "percent"])
    for r in book.rows:
        w.writerow([_cell(r.student_id), r.quiz_set, _cell(r.file), *(_num(r.scores[q]) for q in book.question_ids),
                    _num(r.total), _num(r.max), f"{r.percent:.1f}"])
    return buf.getvalue()


def write_gradebook(book: Gradebook, path: str | os.PathLike) -> Path:
    """Write the gradebook CSV atomically (UTF-8 with BOM).

    Raises:
        FileNotFoundError: (Korean) the output folder does not exist.
        OSError: (Korean, same subclass) the write failed; any previous gradebook at ``path`` is left untouched.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"성적표를 쓸 폴더가 없습니다: {path.parent}: -o 로 있는 폴더 안의 경로를 지정하세요.")
    try:
        return atomic_write_bytes(path, gradebook_csv(book).encode("utf-8-sig"))
    except OSError as e:
        raise type(e)(f"성적표 {path}을(를) 쓸 수 없습니다 ({os_reason(e)}): -o 로 쓰기 권한이 있는 다른 경로를 지정하세요.") from None
