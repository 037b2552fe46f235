"""Submission files: what a student exports and the lecturer's grader reads.

Format (JSON, UTF-8)::

    {
      "format": "decodelab-quiz-submission",
      "version": 1,
      "student_id": "2026-12345",
      "quiz_set": "course",                 # the practice quizzes (the only set)
      "exported_at": "2026-05-01T09:30:00+00:00",
      "answers": {"01-decode-definition": "b", "03-added-latency": "43.2 s", "04-round-order": ["A", "B"]},
      "shuffle_key": "2026-12345",          # optional: the order the student saw (decodelab.assess.quiz.shuffle)
      "exercises": {                        # optional: decodelab.assess.exercises (never auto-scored)
        "01-predict-kv-step": {"kind": "prediction", "response": 12.0, "revealed": 3.1},
        "01-written-decode-definition": {"kind": "written", "response": "디코드 단계는 ..."},
        "04-task-low-acceptance": {"kind": "task", "response": 0.21, "passed": true}
      }
    }

``exercises`` was added within version 1: an older grader ignores it (unknown fields are ignored).

The grader treats a submission as data only: it is parsed with ``json`` (no ``eval``, no pickle,
no YAML tags), with a size cap read before parsing, duplicate keys, NaN/Infinity and huge numbers
rejected, nesting depth bounded by the size cap and :class:`RecursionError` caught, symlinks and
non-regular files (FIFOs, devices) refused, and every field validated by pydantic with length caps.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from .loading import error_message
from .schema import QUESTION_ID, QUIZ_SET

__all__ = [
    "FORMAT",
    "MAX_BYTES",
    "MAX_NUMBER",
    "MAX_ANSWERS",
    "ExerciseAnswer",
    "Submission",
    "SubmissionError",
    "answer_problem",
    "make_submission",
    "parse_submission",
    "read_submission",
    "read_submission_bytes",
    "validate_student_id",
]

FORMAT = "decodelab-quiz-submission"
MAX_BYTES = 256 * 1024
"""Size cap of one submission file (bytes). All answers of the course fit in a few KiB."""

MAX_NUMBER = 1e15
"""Largest magnitude of a numeric answer in a submission (every answer of the course is far below)."""

MAX_ANSWER_TEXT = 2000
"""Longest text answer in a submission (characters, i.e. code points)."""

MAX_LIST_ITEMS = 20
"""Most ids in a list answer (choices, ordering) in a submission."""

MAX_ITEM_TEXT = 200
"""Longest id in a list answer (characters)."""

MAX_ANSWERS = 1000
"""Most answers (and, separately, most exercise entries) in one submission file."""

EXERCISE_KINDS = ("prediction", "written", "task")
"""Kinds of :mod:`decodelab.assess.exercises` records (saved in the same answers folder as quiz answers)."""

_STUDENT_ID = re.compile(r"[^\W_][\w .\-]{0,63}")


class SubmissionError(ValueError):
    """A submission file that cannot be used; the message (Korean) says why."""


def validate_student_id(value: Any) -> str:
    """Check and normalize a student id: NFC, stripped, 1-64 characters of letters (Hangul too),
    digits, space, ``.``, ``-``, ``_``; starts with a letter or digit (so a spreadsheet never reads it as
    a formula).

    Raises:
        ValueError: (Korean) what is wrong with it.
    """
    if not isinstance(value, str):
        raise ValueError("학번(student_id)은 글자여야 합니다.")
    sid = unicodedata.normalize("NFC", value).strip()
    if not sid:
        raise ValueError("학번(student_id)이 비어 있습니다: 학번이나 이름을 입력하세요.")
    if not _STUDENT_ID.fullmatch(sid):
        raise ValueError(
            f"학번(student_id) {sid[:70]!r}에 쓸 수 없는 글자가 있거나 너무 깁니다: 글자·숫자로 시작하고, "
            "글자·숫자·공백·'.'·'-'·'_'만, 64자 이내로 쓰세요."
        )
    return sid


Answer = Union[
    Annotated[str, Field(max_length=MAX_ANSWER_TEXT)],
    StrictInt,
    StrictFloat,
    Annotated[list[Annotated[str, Field(max_length=MAX_ITEM_TEXT)]], Field(max_length=MAX_LIST_ITEMS)],
]

_ANSWER = TypeAdapter(Answer)


def answer_problem(answer: Any) -> str | None:
    """Why one answer cannot go into a submission file, or None when it can.

    The same limits as :class:`Submission` (what the grader accepts): a text of at most
    :data:`MAX_ANSWER_TEXT` characters, a finite number of magnitude at most :data:`MAX_NUMBER`, or a
    list of at most :data:`MAX_LIST_ITEMS` texts of at most :data:`MAX_ITEM_TEXT` characters each.
    The widget checks an answer with this before saving it, and the export leaves out (and reports)
    any saved answer for which this is not None, so one bad answer never blocks a submission.

    Args:
        answer: a response as saved (str, int, float, or list of str).

    Returns:
        None, or a Korean reason without the question id (the caller names the question the way
        the student sees it), e.g. ``"답이 너무 깁니다 (2,500자): 2,000자 이내로 줄이세요"``.
    """
    if isinstance(answer, bool):
        return "참/거짓 값은 답으로 쓸 수 없습니다"
    if isinstance(answer, str):
        if len(answer) > MAX_ANSWER_TEXT:
            return f"답이 너무 깁니다 ({len(answer):,}자): {MAX_ANSWER_TEXT:,}자 이내로 줄이세요"
    elif isinstance(answer, (int, float)):
        if isinstance(answer, float) and not math.isfinite(answer):
            return "유한한 숫자가 아닙니다"
        if abs(answer) > MAX_NUMBER:  # exact for ints of any size (no float conversion)
            return f"숫자가 너무 큽니다 (절댓값이 {MAX_NUMBER:g} 이하여야 합니다)"
    elif isinstance(answer, list):
        if len(answer) > MAX_LIST_ITEMS:
            return f"고른 항목이 너무 많습니다 ({len(answer)}개): {MAX_LIST_ITEMS}개 이내여야 합니다"
        if not all(isinstance(x, str) for x in answer):
            return "목록에 글이 아닌 값이 있습니다"
        if any(len(x) > MAX_ITEM_TEXT for x in answer):
            return f"목록의 항목이 너무 깁니다: 항목마다 {MAX_ITEM_TEXT}자 이내여야 합니다"
    else:
        return f"답으로 쓸 수 없는 형식입니다 ({type(answer).__name__})"
    try:  # the model's own check, so that the two can never disagree
        _ANSWER.validate_python(answer)
    except ValidationError:
        return "답은 글, 숫자, 또는 글의 목록이어야 합니다"
    return None


class ExerciseAnswer(BaseModel):
    """One exercise entry of a submission: ``kind`` (prediction | written | task), ``response`` (the
    prediction, the written text, or the value checked), ``revealed`` (prediction: the measured
    value shown at the reveal), ``passed`` (task: whether the goal was reached)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["prediction", "written", "task"]
    response: Answer | None = None
    revealed: Union[StrictInt, StrictFloat, Annotated[str, Field(max_length=MAX_ITEM_TEXT)], None] = None
    passed: bool | None = None

    @field_validator("response", "revealed")
    @classmethod
    def _limits(cls, v: Any) -> Any:
        if v is not None:
            why = answer_problem(v)
            if why is not None:
                raise ValueError(why)
        return v


class Submission(BaseModel):
    """A validated submission (see the module docstring for the JSON form)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    format: Literal["decodelab-quiz-submission"]
    version: Literal[1]
    student_id: str
    quiz_set: str = "course"
    exported_at: str = ""
    shuffle_key: str = ""
    answers: dict[str, Answer] = Field(max_length=MAX_ANSWERS)
    exercises: dict[str, ExerciseAnswer] = Field(default_factory=dict, max_length=MAX_ANSWERS)

    @field_validator("shuffle_key", mode="before")
    @classmethod
    def _key(cls, v: Any) -> str:
        return validate_student_id(v) if v not in ("", None) else ""

    @field_validator("exercises")
    @classmethod
    def _exercise_ids(cls, v: dict) -> dict:
        for k in v:
            if not QUESTION_ID.fullmatch(k):
                raise ValueError(f"연습 id {k[:40]!r}의 형식이 잘못됐습니다")
        return v

    @field_validator("student_id", mode="before")
    @classmethod
    def _sid(cls, v: Any) -> str:
        return validate_student_id(v)

    @field_validator("quiz_set")
    @classmethod
    def _set(cls, v: str) -> str:
        if not QUIZ_SET.fullmatch(v):
            raise ValueError("quiz_set은 'course'여야 합니다")
        return v

    @field_validator("exported_at")
    @classmethod
    def _time(cls, v: str) -> str:
        if v:
            if len(v) > 40:
                raise ValueError("exported_at이 너무 깁니다")
            try:
                datetime.fromisoformat(v)
            except ValueError:
                raise ValueError("exported_at은 ISO 8601 시각이어야 합니다") from None
        return v

    @field_validator("answers")
    @classmethod
    def _answers(cls, v: dict) -> dict:
        for k, a in v.items():
            if not QUESTION_ID.fullmatch(k):
                raise ValueError(f"문항 id {k[:40]!r}의 형식이 잘못됐습니다")
            if isinstance(a, (int, float)) and not isinstance(a, bool):
                why = answer_problem(a)
                if why is not None:
                    raise ValueError(f"문항 {k}: {why}")
        return v

    @property
    def exported(self) -> datetime | None:
        """``exported_at`` as an aware datetime (UTC if no zone), or None."""
        if not self.exported_at:
            return None
        t = datetime.fromisoformat(self.exported_at)
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def make_submission(student_id: str, answers: dict[str, Any], quiz_set: str = "course", *,
                    shuffle_key: str = "", exercises: dict[str, dict] | None = None) -> dict:
    """The JSON-ready dict of a submission, validated.

    Args:
        student_id, answers, quiz_set: see the module docstring.
        shuffle_key: the key of the order the student saw (:mod:`decodelab.assess.quiz.shuffle`); omitted
            when empty.
        exercises: exercise id -> ``{"kind", "response", "revealed"?, "passed"?}``; omitted when empty.

    Raises:
        ValueError: (Korean) bad student id, quiz set or answers.
    """
    data = {
        "format": FORMAT,
        "version": 1,
        "student_id": validate_student_id(student_id),
        "quiz_set": quiz_set,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "answers": {k: v for k, v in answers.items() if v is not None},
    }
    if shuffle_key:
        data["shuffle_key"] = shuffle_key
    if exercises:
        data["exercises"] = exercises
    try:
        Submission.model_validate(data)
    except ValidationError as e:
        raise ValueError(_summarize(e)) from None
    return data


def _summarize(e: ValidationError, limit: int = 3) -> str:
    parts: list[str] = []
    for err in e.errors():
        loc = tuple(err.get("loc", ()))
        typ = err.get("type", "")
        if len(loc) >= 3 and loc[0] == "answers":  # one Korean line per bad answer, not per union member
            line = (f"문항 {loc[1]}: 답은 {MAX_ANSWER_TEXT}자 이내의 글, 숫자, 또는 {MAX_ITEM_TEXT}자 이내 글 "
                    f"{MAX_LIST_ITEMS}개 이내의 목록이어야 합니다")
        elif len(loc) >= 2 and loc[0] == "exercises":
            line = f"연습 {loc[1]}: 형식이 잘못됐습니다 ({'.'.join(str(x) for x in loc[2:3]) or '항목'})"
        elif typ == "too_long" and loc and loc[0] in ("answers", "exercises"):
            n = (err.get("ctx") or {}).get("actual_length")
            n = len(err["input"]) if not n and isinstance(err.get("input"), dict) else n
            what = "답" if loc[0] == "answers" else "연습 항목"
            line = f"{loc[0]}: {what}이 너무 많습니다 ({n:,}개, 한도 {MAX_ANSWERS:,}개)" if n else \
                f"{loc[0]}: {what}이 너무 많습니다 (한도 {MAX_ANSWERS:,}개)"
        elif typ == "missing":
            line = f"{'.'.join(str(x) for x in loc)}: 필수 필드가 없습니다"
        elif typ in ("dict_type", "string_type", "model_type"):
            line = f"{'.'.join(str(x) for x in loc) or '(전체)'}: 형식이 잘못됐습니다"
        else:
            msg = error_message(err)[1]  # Korean text for pydantic's error kinds
            line = f"{'.'.join(str(x) for x in loc) or '(전체)'}: {msg}"
        if line not in parts:
            parts.append(line)
    more = len(parts) - limit
    return "; ".join(parts[:limit]) + (f" (외 {more}개)" if more > 0 else "")


class _Reject(ValueError):
    pass


def _no_constants(name: str) -> Any:
    raise _Reject(f"JSON에 {name} 값이 있습니다 (숫자는 유한해야 합니다)")


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise _Reject(f"숫자 {text[:20]}가 너무 큽니다")
    return v


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _Reject(f"키 {k[:40]!r}가 두 번 나옵니다")
        out[k] = v
    return out


def read_submission(path: str | os.PathLike, *, max_bytes: int = MAX_BYTES) -> Submission:
    """Read and validate one submission file, treating it strictly as data
    (:func:`read_submission_bytes`, then :func:`parse_submission`).

    Args:
        path: the file.
        max_bytes: size cap; a bigger file is refused before it is parsed.

    Raises:
        SubmissionError: (Korean) why the file cannot be used: symlink or not a regular file, too big,
            not UTF-8, not JSON (truncated or corrupted), too deeply nested, wrong format/version,
            bad student id, bad answers.
    """
    return parse_submission(read_submission_bytes(path, max_bytes=max_bytes))


def read_submission_bytes(path: str | os.PathLike, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of one submission file, read once: never through a symbolic link, never waiting on a
    FIFO, at most ``max_bytes`` (the size is checked before reading, and again on what was read).

    Raises:
        SubmissionError: (Korean) a link, not a regular file, too big, unreadable.
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError as e:
        raise SubmissionError(f"파일을 열 수 없습니다: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise SubmissionError("심볼릭 링크는 읽지 않습니다 (제출 파일을 직접 넣으세요)")
    if not stat.S_ISREG(st.st_mode):
        raise SubmissionError("일반 파일이 아닙니다")
    if st.st_size > max_bytes:
        raise SubmissionError(f"파일이 너무 큽니다 ({st.st_size:,}바이트, 한도 {max_bytes:,}바이트)")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise SubmissionError(f"파일을 열 수 없습니다: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SubmissionError("일반 파일이 아닙니다")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SubmissionError(f"파일이 너무 큽니다 (한도 {max_bytes:,}바이트)")
    return data


def parse_submission(data: bytes) -> Submission:
    """Validate the bytes of a submission file (:func:`read_submission_bytes`) as a submission.

    Raises:
        SubmissionError: (Korean) empty, not UTF-8, not JSON, too deeply nested, wrong format/version,
            bad student id, bad answers.
    """
    if not data.strip():
        raise SubmissionError("빈 파일입니다")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError("UTF-8 텍스트가 아닙니다 (JSON 제출 파일이 아닌 것 같습니다)") from None
    try:
        obj = json.loads(text, parse_constant=_no_constants, parse_float=_finite_float,
                         object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as e:
        raise SubmissionError(
            f"JSON 형식이 아닙니다 ({e.lineno}행 {e.colno}열에서 읽기가 멈춤): 잘렸거나 손상된 파일, 또는 제출 파일이 아닌 파일일 수 있습니다"
        ) from None
    except RecursionError:
        raise SubmissionError("JSON이 너무 깊이 중첩되어 있습니다") from None
    except _Reject as e:
        raise SubmissionError(f"JSON 값이 잘못됐습니다: {e}") from None
    except ValueError as e:  # e.g. an integer with thousands of digits
        why = "정수의 자릿수가 너무 많습니다" if "digits" in str(e) else str(e)[:120]
        raise SubmissionError(f"JSON 값이 잘못됐습니다: {why}") from None
    if not isinstance(obj, dict):
        raise SubmissionError("JSON 최상위가 객체({...})가 아닙니다")
    if obj.get("format") != FORMAT:
        raise SubmissionError(f"decodelab 제출 파일이 아닙니다 (format이 {FORMAT!r}가 아님)")
    if obj.get("version") != 1:
        raise SubmissionError(f"지원하지 않는 제출 파일 버전입니다: {str(obj.get('version'))[:20]!r} (지원: 1)")
    try:
        return Submission.model_validate(obj)
    except ValidationError as e:
        raise SubmissionError(f"내용이 잘못됐습니다: {_summarize(e)}") from None
