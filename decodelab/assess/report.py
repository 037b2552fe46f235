"""The practice report: a folder of exported practice answers -> one row per student.

:func:`grade_folder` never stops at a bad file: a malformed, truncated, oversized, non-JSON or
hostile file (also one whose grading raises an unexpected error) is recorded in
``PracticeReport.problems`` with a Korean reason and skipped, and every good file still gets its row.
Every entry of the folder that is not graded is reported and counted (:attr:`PracticeReport.skipped`:
unusable files, dot-files included; :attr:`PracticeReport.ignored`: earlier reports ``*.csv`` and the
output file). :func:`write_report` writes the CSV atomically (temporary file + ``os.replace``), so
an interrupted run leaves the previous report intact.

CSV columns (:func:`report_csv`), one row per (student, quiz set):

- ``student_id``, ``quiz_set``, ``file``, ``shuffle_key`` (reproduces the order the student saw,
  :func:`decodelab.assess.quiz.shuffle.student_view`);
- one column per question id: the points earned (score x points); **blank** = not answered,
  ``0`` = answered wrong, ``검토 필요`` = a short answer the rules cannot decide (the lecturer
  reviews it; it counts in no total);
- ``<id> [답]`` for each short question: the student's text, for the review;
- exercises (:mod:`decodelab.assess.exercises`): ``<id> [예측]`` and ``<id> [실제]`` side by side,
  ``<id> [서술]`` (written answers as text, never scored; the rubric is in the file written by
  :func:`write_rubrics`), ``<id> [실습]`` (``통과`` / ``미통과``) and ``<id> [값]``;
- per notebook ``NN 점수`` and ``NN 만점``: the maximum is computed from the questions that notebook
  has (an unanswered question counts in it; one awaiting review is left out until reviewed);
- ``검토 필요`` (how many answers await review), ``total``, ``max``, ``percent``.

UTF-8 with a BOM so that spreadsheet programs show Hangul correctly; free text that a spreadsheet
would read as a formula is prefixed with ``'``.

**Duplicate submissions** of one student (same student id, case-insensitive, and quiz set) are
resolved by :data:`DUPLICATE_RULE`, which the report quotes: files with the same content are one
submission; otherwise the file with more answers wins (an export holds every answer saved so far,
so a later export of the same student normally holds more), then the later ``exported_at`` (a time
in the future of the grading run is not trusted: it counts as no time and is reported), then the
later file name. A timestamp the student controls therefore never wins on its own against a file
with more answers.

It is the **practice** report (the answers a student exported from the widgets, whose keys the
student could read: never grades). It writes no LMS file; graded work goes through nbgrader and
``decodelab classroom export`` (:mod:`decodelab.classroom.lms`, the one Canvas/Moodle writer).

The command ``decodelab grade`` is :func:`main`. Exit status: 0 all files graded; 1 report
written but some files were skipped (each listed on stderr with its reason; the stdout summary
counts them); 2 nothing written (no such folder, a file instead of a folder, no submission file in
the folder, invalid quiz key, bad arguments).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from .._atomic import atomic_write_bytes, os_reason
from .._cli import ArgumentParser, check_quizzes_option, error_text, printable
from .exercises import Prediction, Written, exercise_kind, load_exercises
from .quiz.grading import REVIEW, score_response
from .quiz.loading import QuizError, load_quizzes, select_notebook
from .quiz.submission import MAX_BYTES, Submission, SubmissionError, read_submission

__all__ = [
    "DUPLICATE_RULE",
    "GradeRow",
    "PracticeReport",
    "Problem",
    "grade_folder",
    "report_csv",
    "main",
    "predictions_markdown",
    "rubrics_markdown",
    "write_report",
    "write_predictions",
    "write_rubrics",
]

MAX_FILES = 5000
FUTURE_SLACK = timedelta(minutes=10)
"""An ``exported_at`` more than this after the grading run is treated as missing (clock skew allowed)."""

DUPLICATE_RULE = ("같은 학생의 제출이 여럿이면: 내용이 같은 파일은 하나로 보고, 다르면 답이 더 많은 파일 → "
                  "내보낸 시각(exported_at)이 더 늦은 파일(채점 시각보다 미래인 시각은 무시) → 파일 이름이 뒤인 파일을 씁니다")
"""The rule that picks one of a student's several submissions (quoted in every duplicate report)."""


@dataclass(frozen=True)
class Problem:
    """A file that was skipped (``kind="skipped"``), ignored on purpose (``"ignored"``: an earlier
    report ``*.csv``, the output file), or a warning about a file that was graded (``"warning"``)."""

    file: str
    message: str
    skipped: bool = True
    kind: str = ""

    def __post_init__(self):
        if not self.kind:
            object.__setattr__(self, "kind", "skipped" if self.skipped else "warning")

    def __str__(self) -> str:
        head = {"skipped": "건너뜀", "ignored": "읽지 않음", "warning": "주의"}[self.kind]
        return f"{head}: {printable(self.file)}: {printable(self.message)}"  # a student's name or key, never raw


@dataclass
class GradeRow:
    """One student's result.

    Attributes:
        scores: question id -> points earned (score x points) for every **answered** question, or
            ``None`` for an answer awaiting review; an unanswered question has no key.
        answers: question id -> the response as submitted.
        exercises: exercise id -> the submission's entry (``kind``, ``response``, ``revealed``, ``passed``).
        total, max: points over the decided answers / over every question graded, minus those
            awaiting review.
        notebooks: notebook -> ``(points, max points)`` computed from that notebook's questions.
    """

    student_id: str
    quiz_set: str
    file: str
    scores: dict[str, float | None]
    total: float
    max: float
    exported_at: str = ""
    answers: dict[str, Any] = field(default_factory=dict)
    exercises: dict[str, dict] = field(default_factory=dict)
    notebooks: dict[str, tuple[float, float]] = field(default_factory=dict)
    shuffle_key: str = ""

    @property
    def percent(self) -> float:
        """``100 * total / max`` (0 when there is nothing to grade)."""
        return 100.0 * self.total / self.max if self.max else 0.0

    @property
    def review(self) -> list[str]:
        """Question ids whose answers await the lecturer's review."""
        return [q for q, s in self.scores.items() if s is None]


@dataclass
class PracticeReport:
    """Rows (sorted by student id), the question ids (columns, in quiz order), the problems,
    ``submission_files`` (how many ``*.json`` files the folder held, read or skipped), and the
    definitions behind the columns: ``questions`` (keyed) and ``exercises`` (id -> definition)."""

    question_ids: list[str]
    rows: list[GradeRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    submission_files: int = 0
    questions: list = field(default_factory=list)
    exercises: dict = field(default_factory=dict)
    duplicates: int = 0
    unknown_ids: Counter = field(default_factory=Counter)

    @property
    def skipped(self) -> list[Problem]:
        """The folder entries that could not be graded (each with its reason)."""
        return [p for p in self.problems if p.kind == "skipped"]

    @property
    def ignored(self) -> list[Problem]:
        """The folder entries not read on purpose (earlier reports, the output file)."""
        return [p for p in self.problems if p.kind == "ignored"]

    @property
    def warnings(self) -> list[Problem]:
        """Warnings about graded files (duplicates, future timestamps, ids unknown to this key)."""
        return [p for p in self.problems if p.kind == "warning"]

    def summary(self) -> str:
        """One Korean line: students, questions, reviews, skipped files by reason, ignored files,
        duplicates, answers to ids this key does not have."""
        review = sum(len(r.review) for r in self.rows)
        parts = [f"학생 {len(self.rows)}명 채점", f"문항 {len(self.question_ids)}개"]
        if self.exercises:
            parts.append(f"연습 {len(self.exercises)}개")
        parts.append(f"검토 필요 {review}건")
        reasons = Counter(p.message.split(":")[0].split(" (")[0] for p in self.skipped)
        why = ", ".join(f"{k} {n}" for k, n in reasons.most_common(3))
        parts.append(f"건너뛴 파일 {len(self.skipped)}개" + (f" ({why})" if why else ""))
        if self.ignored:
            parts.append(f"읽지 않은 파일 {len(self.ignored)}개 (이전 연습 보고서 .csv 등)")
        if self.duplicates:
            parts.append(f"중복 제출 {self.duplicates}건")
        if self.unknown_ids:
            ex = next(iter(self.unknown_ids))
            parts.append(f"이 채점에 없는 id의 답 {sum(self.unknown_ids.values())}개 무시 (예: {ex})")
        return " · ".join(parts)


# --------------------------------------------------------------------------------------------
# One submission
# --------------------------------------------------------------------------------------------


def _grade_submission(sub: Submission, questions: Sequence, file: str,
                      known: set[str] | frozenset = frozenset()) -> tuple[GradeRow, list[str]]:
    """Grade one submission: ``(row, ids answered that this key does not have)``."""
    by_id = {q.id: q for q in questions}
    unknown = [k for k in sub.answers if k not in by_id and k not in known]
    scores: dict[str, float | None] = {}
    answers: dict[str, Any] = {}
    notebooks: dict[str, list[float]] = {}
    for q in questions:
        nb = notebooks.setdefault(q.notebook, [0.0, 0.0])
        if q.id not in sub.answers:
            nb[1] += q.points
            continue
        answer = sub.answers[q.id]
        answers[q.id] = answer
        s = score_response(q, answer)
        scores[q.id] = None if s is None else s * q.points
        if s is not None:
            nb[0] += s * q.points
            nb[1] += q.points
    total = sum(s for s in scores.values() if s is not None)
    review_pts = sum(by_id[q].points for q, s in scores.items() if s is None)
    row = GradeRow(sub.student_id, sub.quiz_set, file, scores, total,
                   sum(q.points for q in questions) - review_pts, sub.exported_at, answers,
                   {k: v.model_dump(exclude_none=True) for k, v in sub.exercises.items()},
                   {nb: (v[0], v[1]) for nb, v in notebooks.items()}, sub.shuffle_key)
    return row, unknown


def _content_hash(sub: Submission) -> str:
    body = {"answers": sub.answers, "exercises": {k: v.model_dump() for k, v in sub.exercises.items()}}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _when(exported_at: str, now: datetime) -> float | None:
    """``exported_at`` as a timestamp, or None when missing or in the future of ``now``."""
    if not exported_at:
        return None
    t = datetime.fromisoformat(exported_at)
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return None if t > now + FUTURE_SLACK else t.timestamp()


def grade_folder(
    submissions_dir: str | os.PathLike,
    questions: Sequence | None = None,
    *,
    max_bytes: int = MAX_BYTES,
    max_files: int = MAX_FILES,
    exclude: Iterable[str | os.PathLike] = (),
    exercises: dict | None = None,
    other_ids: Iterable[str] = (),
    now: datetime | None = None,
) -> PracticeReport:
    """Grade every ``*.json`` file in ``submissions_dir`` (not recursive).

    Every other entry is reported: dot-files (``.x.json``, ``.DS_Store``), folders, non-JSON files are
    skipped with a reason; ``*.csv`` files (earlier reports) and the paths in ``exclude`` are
    listed as not read. Duplicate submissions are resolved by :data:`DUPLICATE_RULE`.

    Args:
        submissions_dir: the folder of submission files.
        questions: the keyed questions to grade against (default: :func:`decodelab.assess.quiz.load_quizzes`).
        max_bytes: per-file size cap (bytes).
        max_files: at most this many files are read; the rest are reported.
        exclude: files never to read, e.g. the report being written (whatever its name).
        exercises: exercise id -> definition, for the exercise columns (default:
            :func:`decodelab.assess.exercises.load_exercises` of the default quiz folder).
        other_ids: ids of questions that exist but are not graded this time (``--notebook``):
            their answers are left out without a warning.
        now: the grading time (default: now, UTC), against which future ``exported_at`` are judged.

    Returns:
        :class:`PracticeReport`; ``submission_files == 0`` when the folder holds no ``*.json`` file.

    Raises:
        NotADirectoryError: (Korean) ``submissions_dir`` does not exist, or is a file.
        decodelab.assess.exercises.ExerciseError: the exercise definitions are invalid (default ``exercises``).
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
        questions = load_quizzes()
    if exercises is None:
        exercises = load_exercises()
    questions = list(questions)
    now = now or datetime.now(timezone.utc)
    book = PracticeReport([q.id for q in questions], questions=questions, exercises=dict(exercises))
    known = frozenset(other_ids) | frozenset(exercises)
    here = folder.resolve()
    skip = set()
    for x in exclude:
        x = Path(x).expanduser()
        skip.add(x.parent.resolve() / x.name)
    entries = sorted(os.scandir(folder), key=lambda e: e.name)
    candidates: dict[tuple[str, str], list[tuple[GradeRow, list[Problem], Submission]]] = {}
    read = 0
    for entry in entries:
        name = entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if here / name in skip:
            book.problems.append(Problem(name, "이번에 쓰는 연습 보고서 파일이라 읽지 않았습니다", kind="ignored"))
            continue
        if name.lower().endswith(".csv") and not name.startswith("."):
            book.problems.append(Problem(name, "CSV 파일(이전 연습 보고서)이라 읽지 않았습니다", kind="ignored"))
            continue
        if re.search(r"-(rubric|predictions)\.md\Z", name) and not is_dir:
            book.problems.append(Problem(name, "연습 보고서와 함께 쓰는 보조 파일(채점 기준·예측 요약)이라 읽지 않았습니다",
                                         kind="ignored"))
            continue
        if name.startswith(".") and name.endswith(".tmp") and not is_dir:
            book.problems.append(Problem(name, "중단된 쓰기가 남긴 임시 파일이라 읽지 않았습니다", kind="ignored"))
            continue
        if name.lower().endswith(".json") and not is_dir:
            book.submission_files += 1
        if name.startswith("."):
            book.problems.append(Problem(name, "숨김 파일 (이름이 '.'으로 시작): 읽지 않았습니다. 제출 파일이면 이름 앞의 "
                                               "'.'을 지우고 다시 채점하세요"))
            continue
        if is_dir:
            book.problems.append(Problem(name, "폴더입니다 (하위 폴더는 읽지 않습니다)"))
            continue
        if not name.lower().endswith(".json"):
            book.problems.append(Problem(name, ".json 파일이 아닙니다"))
            continue
        if read >= max_files:
            book.problems.append(Problem(name, f"파일이 너무 많아 {max_files}개까지만 읽었습니다"))
            continue
        read += 1
        try:
            sub = read_submission(entry.path, max_bytes=max_bytes)
        except SubmissionError as e:
            book.problems.append(Problem(name, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 - one bad file must never stop the run
            book.problems.append(Problem(name, f"읽는 중 예상하지 못한 오류: {type(e).__name__}"))
            continue
        try:
            row, unknown = _grade_submission(sub, questions, name, known)
        except Exception as e:  # noqa: BLE001 - one hostile answer must never stop the run
            book.problems.append(Problem(name, f"채점 중 예상하지 못한 오류: {type(e).__name__} (이 파일만 건너뛰었습니다)"))
            continue
        warnings: list[Problem] = []
        for k in unknown:
            book.unknown_ids[k] += 1
        for k in sub.exercises:
            if k not in exercises:
                book.unknown_ids[k] += 1
        if sub.exported_at and _when(sub.exported_at, now) is None:
            warnings.append(Problem(name, f"exported_at {sub.exported_at}이(가) 채점 시각보다 미래라 믿지 않았습니다 "
                                          "(중복 제출을 고를 때 시각이 없는 것으로 봅니다)", False))
        candidates.setdefault((sub.student_id.casefold(), sub.quiz_set), []).append((row, warnings, sub))
    for group in candidates.values():
        def rank(c):
            row, _, sub = c
            t = _when(sub.exported_at, now)
            return (len(sub.answers) + len(sub.exercises), t if t is not None else float("-inf"), row.file)

        group.sort(key=rank)
        keep_row, keep_warnings, keep_sub = group[-1]
        book.rows.append(keep_row)
        book.problems.extend(keep_warnings)
        for row, dropped_warnings, sub in group[:-1]:
            book.problems.extend(dropped_warnings)
            book.duplicates += 1
            same = _content_hash(sub) == _content_hash(keep_sub)
            what = "내용이 같은 중복 파일이라" if same else "답이 다른 제출이지만 규칙에 따라"
            book.problems.append(Problem(
                row.file, f"학생 {row.student_id}의 다른 제출 파일 {keep_row.file}을(를) 썼고 이 파일은 {what} 쓰지 않았습니다 "
                          f"(이 파일: 답 {len(sub.answers) + len(sub.exercises)}개, 쓴 파일: 답 "
                          f"{len(keep_sub.answers) + len(keep_sub.exercises)}개). 규칙: {DUPLICATE_RULE}", False))
    book.rows.sort(key=lambda r: (r.student_id.casefold(), r.quiz_set))
    return book


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------


def _cell(text: Any) -> str:
    """Neutralize spreadsheet formulas in free text: a ``'`` before a first character that starts a
    formula (OWASP's CSV Injection list: ``= + - @``, tab, CR; ASVS 5.0 requirement 1.2.10 adds NUL)."""
    text = "" if text is None else str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r", "\x00") else text


def _num(x: float) -> str:
    return f"{round(x, 4):g}"


def _value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, list):
        return _cell(" ".join(str(x) for x in v))
    return _cell(unicodedata.normalize("NFC", v) if isinstance(v, str) else v)


def _notebooks(book: PracticeReport) -> list[str]:
    return sorted({q.notebook for q in book.questions} or {q[:2] for q in book.question_ids})


def _exercise_columns(book: PracticeReport) -> list[tuple[str, str, str]]:
    """(header, exercise id, part) for the exercise columns, in definition order."""
    cols = []
    for eid, ex in book.exercises.items():
        kind = exercise_kind(ex)
        if kind == "prediction":
            cols += [(f"{eid} [예측]", eid, "response"), (f"{eid} [실제]", eid, "revealed")]
        elif kind == "written":
            cols.append((f"{eid} [서술]", eid, "response"))
        else:
            cols += [(f"{eid} [실습]", eid, "passed"), (f"{eid} [값]", eid, "response")]
    return cols


def report_csv(book: PracticeReport) -> str:
    """The practice report as CSV text (see the module docstring for the columns).

    Rows end in CRLF (RFC 4180): the csv writer quotes a field holding any character of the line
    terminator, so a CR or LF inside a student's answer stays inside its cell (with ``"\\n"`` as the
    terminator a lone CR would stay unquoted, and spreadsheets start a new row at it)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    shorts = [q.id for q in book.questions if q.kind == "short"]
    ex_cols = _exercise_columns(book)
    nbs = _notebooks(book)
    w.writerow(["student_id", "quiz_set", "file", "shuffle_key", *book.question_ids,
                *(f"{q} [답]" for q in shorts), *(h for h, _, _ in ex_cols),
                *(h for nb in nbs for h in (f"{nb} 점수", f"{nb} 만점")), REVIEW, "total", "max", "percent"])
    for r in book.rows:
        cells = []
        for q in book.question_ids:
            if q not in r.scores:
                cells.append("")
            elif r.scores[q] is None:
                cells.append(REVIEW)
            else:
                cells.append(_num(r.scores[q]))
        texts = [_value(r.answers.get(q)) for q in shorts]
        ex_cells = []
        for _, eid, part in ex_cols:
            v = r.exercises.get(eid, {}).get(part)
            if part == "passed":
                ex_cells.append("" if v is None else ("통과" if v else "미통과"))
            else:
                ex_cells.append(_value(v))
        nb_cells = []
        for nb in nbs:
            pts, mx = r.notebooks.get(nb, (0.0, 0.0))
            nb_cells += [_num(pts), _num(mx)]
        w.writerow([_cell(r.student_id), r.quiz_set, _cell(r.file), _cell(r.shuffle_key), *cells, *texts, *ex_cells,
                    *nb_cells, str(len(r.review)), _num(r.total), _num(r.max), f"{r.percent:.1f}"])
    return buf.getvalue()


def _write(path: str | os.PathLike, data: bytes, what: str) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{what}을(를) 쓸 폴더가 없습니다: {path.parent}: -o 로 있는 폴더 안의 경로를 지정하세요.")
    try:
        return atomic_write_bytes(path, data)
    except OSError as e:
        raise type(e)(f"{what} {path}을(를) 쓸 수 없습니다 ({os_reason(e)}): -o 로 쓰기 권한이 있는 다른 경로를 지정하세요.") from None


def write_report(book: PracticeReport, path: str | os.PathLike) -> Path:
    """Write the practice report CSV atomically (UTF-8 with BOM).

    Raises:
        FileNotFoundError: (Korean) the output folder does not exist.
        OSError: (Korean, same subclass) the write failed; any previous report at ``path`` is left untouched.
    """
    return _write(path, report_csv(book).encode("utf-8-sig"), "연습 보고서")


def rubrics_markdown(book: PracticeReport) -> str:
    """The written exercises for hand grading (Korean Markdown): for each, the question, the rubric
    (what a full answer mentions) and the model answer; ``""`` when there is none."""
    parts = []
    for eid, ex in book.exercises.items():
        if isinstance(ex, Written):
            rubric = "\n".join(f"- {p}" for p in ex.rubric)
            parts.append(f"## {eid}\n\n**질문**: {ex.prompt}\n\n**채점 기준** (온전한 답이 말하는 것):\n\n{rubric}\n\n"
                         f"**모범 답안**: {ex.model_answer}\n")
    if not parts:
        return ""
    return ("# 서술형 답 채점 기준\n\n연습 보고서의 `[서술]` 열에 있는 학생 답을 아래 기준으로 직접 채점하세요 "
            "(자동으로 채점하지 않습니다).\n\n" + "\n".join(parts))


def write_rubrics(book: PracticeReport, path: str | os.PathLike) -> Path | None:
    """Write :func:`rubrics_markdown` to ``path`` (UTF-8); None (nothing written) when there is no
    written exercise."""
    text = rubrics_markdown(book)
    return _write(path, text.encode("utf-8"), "채점 기준 파일") if text else None


def predictions_markdown(book: PracticeReport) -> str:
    """How far the class's intuition was off (Korean Markdown), one section per prediction:

    - ``number``: how many predicted, the median prediction, the median revealed value, and the
      median and range of prediction / revealed (only where both are positive);
    - ``choice``: how many picked each choice, and how many matched the revealed one.

    ``""`` when no prediction is defined.
    """
    from statistics import median

    parts = []
    for eid, ex in book.exercises.items():
        if not isinstance(ex, Prediction):
            continue
        entries = [r.exercises[eid] for r in book.rows if eid in r.exercises]
        preds = [e.get("response") for e in entries if e.get("response") is not None]
        revealed = [e.get("revealed") for e in entries if e.get("revealed") is not None]
        lines = [f"## {eid}", "", f"**질문**: {ex.prompt}", "", f"- 예측한 학생: {len(preds)}명 / 제출 {len(book.rows)}명"]
        if ex.kind == "number":
            nums = [float(p) for p in preds if isinstance(p, (int, float))]
            unit = f" {ex.unit}" if ex.unit else ""
            if nums:
                lines.append(f"- 예측의 중앙값: {median(nums):.4g}{unit} (최소 {min(nums):.4g}, 최대 {max(nums):.4g})")
            vals = [float(v) for v in revealed if isinstance(v, (int, float))]
            if vals:
                lines.append(f"- 실제 값의 중앙값: {median(vals):.4g}{unit}")
            ratios = [float(e["response"]) / float(e["revealed"]) for e in entries
                      if isinstance(e.get("response"), (int, float)) and isinstance(e.get("revealed"), (int, float))
                      and e["response"] > 0 and e["revealed"] > 0]
            if ratios:
                lines.append(f"- 예측 / 실제: 중앙값 {median(ratios):.3g}배 (최소 {min(ratios):.3g}배, 최대 {max(ratios):.3g}배)")
        else:
            text = {c.id: c.text for c in ex.choices}
            for c in ex.choices:
                lines.append(f"- {c.id}. {text[c.id]}: {sum(p == c.id for p in preds)}명")
            hit = sum(1 for e in entries if e.get("response") is not None and e.get("response") == e.get("revealed"))
            lines.append(f"- 실제와 같은 예측: {hit}명")
        parts.append("\n".join(lines) + "\n")
    if not parts:
        return ""
    return "# 예측 요약: 학생들의 직관은 얼마나 빗나갔나\n\n" + "\n".join(parts)


def write_predictions(book: PracticeReport, path: str | os.PathLike) -> Path | None:
    """Write :func:`predictions_markdown` to ``path`` (UTF-8); None when no prediction is defined."""
    text = predictions_markdown(book)
    return _write(path, text.encode("utf-8"), "예측 요약 파일") if text else None


# --- the command ``decodelab grade`` ---------------------------------------------------------

_GRADE_EPILOG = (
    "종료 코드: 0: 모든 제출 파일을 채점함. 1: 연습 보고서는 썼지만 건너뛴 파일이 있음 (stderr에 이유). "
    "2: 아무것도 쓰지 않음 (폴더가 없거나 파일을 지정함, 폴더에 제출 파일이 없을 때, 정답 파일 오류, 잘못된 인자). "
    "폴더 안의 .csv 파일(이전 연습 보고서)과 -o 로 쓰는 파일은 읽지 않으므로 `cd 제출폴더 && decodelab grade .`를 "
    "여러 번 실행해도 됩니다. 빈칸 = 답하지 않음, 0 = 틀림, '검토 필요' = 규칙으로 판단할 수 없어 강사가 읽을 답. "
    f"중복 제출: {DUPLICATE_RULE}."
)


def _grade_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="decodelab grade",
        description="학생 제출 파일(.json)이 든 폴더를 채점해 연습 보고서 CSV를 만듭니다 (학생 한 명당 한 행, 문항마다 한 열 + 합계). "
        "제출 파일은 데이터로만 읽으며, 잘못된 파일은 건너뛰고 알려 줍니다.",
        epilog=_GRADE_EPILOG,
    )
    p.add_argument("submissions_dir", help="제출 파일 폴더")
    p.add_argument("-o", "--output", default="report.csv", help="연습 보고서 CSV 경로 (기본: report.csv; 성적이 아님: 성적은 decodelab classroom)")
    p.add_argument("--quizzes", default=None, help="정답이 든 퀴즈 폴더 (기본: $DECODELAB_QUIZZES, 없으면 패키지에 든 연습 퀴즈)")
    p.add_argument("--notebook", action="append", default=None, metavar="NN",
                   help="이 노트북의 문항만 채점 (여러 번 쓸 수 있음, 예: --notebook 01 --notebook 02)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, help=f"제출 파일 하나의 최대 크기 (기본 {MAX_BYTES})")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``decodelab grade SUBMISSIONS_DIR -o report.csv [--quizzes DIR] [--notebook NN] [--max-bytes N]``.

    Next to the practice report it writes ``<name>-rubric.md`` (the written exercises' rubrics and
    model answers, when there are any) and ``<name>-predictions.md`` (how far the class's
    predictions were off, when predictions are defined). It never writes an LMS file: grades for an
    LMS come from the graded path only (nbgrader, ``decodelab classroom export``).

    Prints skipped files and warnings to stderr, a one-line summary to stdout. The output file and
    any ``*.csv`` in the folder are never read as submissions (see
    :func:`grade_folder`), so grading the current folder twice works.

    Returns:
        0 all good, 1 written with skipped files, 2 nothing written: the output is not a ``.csv``
        (so a student's ``.json`` submission is never overwritten), the folder holds no submission
        file, or no file could be graded while a report already exists (it is left as it was).
    """
    args = _grade_parser().parse_args(argv)
    err = sys.stderr
    try:
        check_quizzes_option(args.quizzes)
        notebooks = {select_notebook(n) for n in args.notebook} if args.notebook else None
        every = load_quizzes(args.quizzes)
        questions, exercises = every, load_exercises(args.quizzes)
        if notebooks and None not in notebooks:  # None: "all" or "06" (every question) was among them
            questions = [q for q in every if q.notebook in notebooks]
            exercises = {k: v for k, v in exercises.items() if k[:2] in notebooks}
        if args.max_bytes < 1:
            raise ValueError("--max-bytes는 1 이상이어야 합니다.")
        out_path = Path(args.output)
        if out_path.suffix.lower() != ".csv":
            raise ValueError(f"-o {args.output}: 연습 보고서는 .csv 파일이어야 합니다 (예: -o report.csv). 학생 제출 파일(.json)이나 "
                             "다른 파일을 덮어쓰지 않도록 다른 이름은 받지 않습니다.")
        rubric_path = out_path.with_name(f"{out_path.stem}-rubric.md")
        predictions_path = out_path.with_name(f"{out_path.stem}-predictions.md")
        book = grade_folder(args.submissions_dir, questions, max_bytes=args.max_bytes,
                            exclude=[args.output, rubric_path, predictions_path], exercises=exercises,
                            other_ids=[q.id for q in every])
        if book.submission_files == 0:
            for p in book.problems:
                print(str(p), file=err)
            print(f"decodelab grade: 경고: 제출 파일이 없습니다: {args.submissions_dir} 폴더에 학생 제출 파일(.json)이 "
                  "하나도 없어 연습 보고서를 쓰지 않았습니다. 학생들이 내보낸 decodelab-….json 파일을 이 폴더에 넣거나, "
                  "그 파일들이 든 폴더를 지정하세요.", file=err)
            return 2
        if not book.rows and out_path.exists():
            for p in book.problems:
                print(str(p), file=err)
            print(f"decodelab grade: 경고: 채점할 수 있는 제출 파일이 하나도 없어 기존 연습 보고서 {args.output}를 그대로 두었습니다 "
                  "(위의 '건너뜀' 이유를 확인하세요).", file=err)
            return 2
        out = write_report(book, args.output)
        written = [str(out)]
        for extra_file in (write_rubrics(book, rubric_path), write_predictions(book, predictions_path)):
            if extra_file is not None:
                written.append(str(extra_file))
    except (QuizError, FileNotFoundError, NotADirectoryError, ValueError, OSError) as e:
        print(f"decodelab grade: 오류: {error_text(e)}", file=err)
        return 2
    for p in book.problems:
        print(str(p), file=err)
    print(f"{book.summary()} -> {', '.join(written)}")
    return 1 if book.skipped else 0
