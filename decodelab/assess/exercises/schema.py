"""Exercise definitions: the schema of ``quizzes/exercises/NN.yaml``, loading them, reading a typed
number (:func:`parse_number`) and checking a task's goal (:func:`evaluate`). No widgets; see
:mod:`.views` for what the notebooks display. The file format is described in :mod:`decodelab.assess.exercises`.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import Field, ValidationError, field_validator, model_validator

from ..quiz.loading import (QuizError, QuizProblem, error_message, load_quizzes, notebook_id, quizzes_dir, read_yaml,
                           validate_entries)
from ..quiz.schema import NOTEBOOK_IDS, Identified, Option, Strict, field_error

OPS = ("<", "<=", ">", ">=", "==", "!=", "between", "in")
"""The comparison operators of a task's ``check``."""


class ExerciseError(QuizError):
    """An exercise definition file (or folder) is invalid; ``problems`` lists every problem (file, id,
    field, Korean message)."""

    def __init__(self, problems):
        super().__init__(problems)
        self.args = ("연습 파일 오류:\n" + "\n".join(f"  - {p}" for p in self.problems),)


# --------------------------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------------------------


#: One option of a choice prediction (the quiz's option: ``id`` ``a``..``h`` and ``text``).
ExerciseChoice = Option


class Prediction(Identified):
    """Predict, then run: a number (with ``unit``) or a choice, committed before the measuring cell."""

    prompt: str = Field(min_length=5)
    kind: Literal["number", "choice"]
    unit: str | None = None
    choices: list[ExerciseChoice] | None = None
    why: str = Field(min_length=5)

    @model_validator(mode="after")
    def _kind_fields(self) -> "Prediction":
        if self.kind == "number":
            if self.choices is not None:
                raise field_error("choices", "kind: number에는 choices를 쓰지 않습니다 (choice일 때만)")
        else:
            if self.unit is not None:
                raise field_error("unit", "kind: choice에는 unit을 쓰지 않습니다 (number일 때만)")
            if not self.choices or len(self.choices) < 2:
                raise field_error("choices", "kind: choice에는 선택지가 2개 이상 필요합니다")
            ids = [c.id for c in self.choices]
            if len(set(ids)) != len(ids):
                raise field_error("choices", f"선택지 id가 겹칩니다: {ids}")
        return self


class Written(Identified):
    """An explanation in the student's own words: never scored automatically; after submitting, the
    student sees ``model_answer`` and ``rubric``."""

    prompt: str = Field(min_length=5)
    rubric: list[str] = Field(min_length=2)
    model_answer: str = Field(min_length=5)

    @field_validator("rubric")
    @classmethod
    def _points(cls, v: list[str]) -> list[str]:
        if any(not p.strip() for p in v):
            raise ValueError("빈 채점 기준 항목은 쓸 수 없습니다")
        return v


Scalar = Union[float, str]


class TaskCheck(Strict):
    """``op`` and ``value`` of a task: ``<``, ``<=``, ``>``, ``>=`` (a number), ``==``, ``!=`` (a number or
    a text), ``between`` (``[lo, hi]``, both inclusive, lo <= hi), ``in`` (a non-empty list)."""

    op: Literal["<", "<=", ">", ">=", "==", "!=", "between", "in"]
    value: Union[float, str, list[Scalar]]

    @model_validator(mode="after")
    def _value_form(self) -> "TaskCheck":
        v = self.value
        if self.op in ("<", "<=", ">", ">="):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise field_error("value", f"op {self.op!r}에는 유한한 숫자 하나가 필요합니다 (받은 값: {v!r})")
        elif self.op in ("==", "!="):
            if isinstance(v, list):
                raise field_error("value", f"op {self.op!r}에는 값 하나(숫자나 글)가 필요합니다")
        elif self.op == "between":
            if (not isinstance(v, list) or len(v) != 2
                    or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in v)):
                raise field_error("value", "op 'between'에는 [하한, 상한] 숫자 두 개가 필요합니다")
            if v[0] > v[1]:
                raise field_error("value", f"op 'between'의 하한 {v[0]}이 상한 {v[1]}보다 큽니다")
        elif not isinstance(v, list) or not v:
            raise field_error("value", "op 'in'에는 비어 있지 않은 목록이 필요합니다")
        return self


class Task(Identified):
    """Change the code and observe: ``check`` decides whether the student's value reaches ``goal``."""

    goal: str = Field(min_length=5)
    check: TaskCheck
    success: str = Field(min_length=2)
    hint: str = Field(min_length=2)


class ExerciseFile(Strict):
    """One ``quizzes/exercises/NN.yaml``: ``notebook`` and its ``predictions``, ``written``, ``tasks``."""

    notebook: Literal["01", "02", "03", "04", "04b", "05", "06", "07"]
    predictions: list[Prediction] = Field(default_factory=list)
    written: list[Written] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)

    @field_validator("notebook", mode="before")
    @classmethod
    def _int_notebook(cls, v: Any) -> Any:
        return f"{v:02d}" if isinstance(v, int) and not isinstance(v, bool) else v


Exercise = Union[Prediction, Written, Task]
_SECTIONS = {"predictions": Prediction, "written": Written, "tasks": Task}
_KIND = {Prediction: "prediction", Written: "written", Task: "task"}


def exercise_kind(ex: Exercise) -> str:
    """``"prediction"``, ``"written"`` or ``"task"`` (the ``kind`` of its saved record)."""
    return _KIND[type(ex)]


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def exercises_dir(path: str | os.PathLike | None = None) -> Path:
    """``<quiz folder>/exercises`` (see :func:`decodelab.assess.quiz.loading.quizzes_dir`); it may not exist."""
    return quizzes_dir(path) / "exercises"


def _problems(err: ValidationError, file: str, label: str | None, prefix: str = "") -> list[QuizProblem]:
    out = []
    for e in err.errors():
        override, msg = error_message(e)
        loc = ".".join(str(x) for x in e.get("loc", ()))
        field = ".".join(x for x in (prefix, loc, override) if x)
        out.append(QuizProblem(file, label, field or None, msg))
    return out


def load_exercise_file(path: str | os.PathLike) -> ExerciseFile:
    """Load and validate one definition file.

    Raises:
        ExerciseError: every problem, each naming the file, the id and the field (Korean).
        FileNotFoundError: no such file.
    """
    path = Path(path)
    name = f"exercises/{path.name}"
    try:
        raw = read_yaml(path)
    except QuizError as e:
        raise ExerciseError([QuizProblem(name, p.question, p.field, p.message) for p in e.problems]) from None
    if not isinstance(raw, dict):
        raise ExerciseError([QuizProblem(name, None, None, "최상위는 notebook, predictions, written, tasks 키를 가진 매핑이어야 합니다")])
    problems: list[QuizProblem] = []
    unknown = [k for k in raw if k not in ("notebook", *_SECTIONS)]
    for k in unknown:
        problems.append(QuizProblem(name, None, str(k), "알 수 없는 필드입니다 (notebook, predictions, written, tasks 중 하나)"))
    nb = notebook_id(raw.get("notebook"))
    if nb not in NOTEBOOK_IDS:
        problems.append(QuizProblem(name, None, "notebook", f"notebook은 {', '.join(NOTEBOOK_IDS)} 중 하나여야 합니다 (받은 값: {nb!r})"))
    elif path.stem != nb:
        problems.append(QuizProblem(name, None, "notebook", f"파일 이름 {path.name}과 notebook {nb!r}이 다릅니다"))
    seen: dict[str, str] = {}
    for section, model in _SECTIONS.items():
        entries = raw.get(section, [])
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            problems.append(QuizProblem(name, None, section, "목록이어야 합니다"))
            continue
        problems += validate_entries(name, entries, model.model_validate, lambda e, label: _problems(e, name, label),
                                     notebook=nb, seen=seen, place=section, what="항목")
    if problems:
        raise ExerciseError(problems)
    return ExerciseFile.model_validate(raw)


_CACHE: dict[tuple, dict] = {}


def load_exercises(path: str | os.PathLike | None = None) -> dict[str, Exercise]:
    """Every exercise definition by id, in file order (notebook 01 first); ``{}`` when there is no
    ``exercises/`` folder yet.

    Ids are unique across every exercise file and every quiz file (``quizzes/NN.yaml``).

    Raises:
        ExerciseError: an invalid file or a repeated id (all problems at once, Korean).
    """
    folder = exercises_dir(path)
    if not folder.is_dir():
        return {}
    paths = sorted(p for p in folder.iterdir() if p.suffix == ".yaml" and p.is_file())
    key = (str(folder.resolve()),) + tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    if key in _CACHE:
        return dict(_CACHE[key])
    problems: list[QuizProblem] = []
    for p in paths:
        if p.stem not in NOTEBOOK_IDS:
            problems.append(QuizProblem(f"exercises/{p.name}", None, None,
                                        "파일 이름은 01.yaml ~ 07.yaml 또는 04b.yaml이어야 합니다"))
    files: list[ExerciseFile] = []
    for p in paths:
        if p.stem in NOTEBOOK_IDS:
            try:
                files.append(load_exercise_file(p))
            except ExerciseError as e:
                problems += e.problems
    owner: dict[str, str] = {}
    try:
        for q in load_quizzes(path):
            owner[q.id] = f"{q.notebook}.yaml"
    except (QuizError, FileNotFoundError):
        pass  # the quiz files report their own problems; exercises still load
    out: dict[str, Exercise] = {}
    for f in files:
        for ex in [*f.predictions, *f.written, *f.tasks]:
            here = f"exercises/{f.notebook}.yaml"
            if ex.id in owner:
                problems.append(QuizProblem(here, ex.id, "id", f"{owner[ex.id]}에도 같은 id가 있습니다 (퀴즈와 연습의 id는 모두 달라야 합니다)"))
                continue
            owner[ex.id] = here
            out[ex.id] = ex
    if problems:
        raise ExerciseError(problems)
    _CACHE.clear()
    _CACHE[key] = out
    return dict(out)


def get_exercise(exercise_id: str, path: str | os.PathLike | None = None) -> Exercise:
    """The definition with this id.

    Raises:
        KeyError: (Korean) no such id (the message names the file it should be in).
        ExerciseError: the definition files are invalid.
    """
    every = load_exercises(path)
    if exercise_id not in every:
        nb = exercise_id[:2] if isinstance(exercise_id, str) else "NN"
        same = sorted(i for i in every if i[:2] == nb)
        known = (f"노트북 {nb}의 id: {', '.join(same)}" if same
                 else f"있는 노트북 번호: {', '.join(sorted({i[:2] for i in every})) or '없음'}")
        raise KeyError(f"연습 id {exercise_id!r}는 정의되어 있지 않습니다: 철자를 확인하세요. "
                       f"id는 '노트북 번호-종류-이름' 꼴입니다(예: '01-predict-...', '02-task-...', '03-written-...'). "
                       f"{known}. (강좌를 만드는 사람이라면 quizzes/exercises/{nb}.yaml에 정의합니다.)")
    return every[exercise_id]


def get_of_kind(exercise_id: str, model: type, path) -> Any:
    ex = get_exercise(exercise_id, path)
    if not isinstance(ex, model):
        want = {Prediction: "predict/reveal", Written: "written", Task: "check"}
        raise ValueError(f"연습 {exercise_id}: {exercise_kind(ex)} 항목이라 {want[model]}에 쓸 수 없습니다.")
    return ex


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------

_NUM = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?", re.IGNORECASE)


#: Counters and measure words a student may write after a number whatever the prediction's unit
#: ("8개", "3 위치", "4배", "260번"): they name what is counted, never a scale.
COUNTERS = ("개", "번", "회", "배", "위치", "토큰", "장", "명", "가지", "칸", "층", "스텝", "단계", "라운드", "개 위치",
            "개 토큰", "tokens", "token", "x", "×")
#: Units with a scale: one of these after the number is accepted only when it is the prediction's
#: own unit ("2초" for a prediction in ms would be read 1,000 times too small).
_SCALED = ("ms", "s", "µs", "μs", "us", "ns", "밀리초", "마이크로초", "초", "분", "시간", "GB", "MB", "KB", "TB",
           "GB/s", "TB/s", "%", "tokens/s", "토큰/초", "W", "kW")
_TAIL = re.compile(r"\s*(?:정도|쯤|가량|내외|이요|요|입니다|이에요|예요)?\s*[.!]?$")


def parse_number(text: str, unit: str | None = None) -> float:
    """A typed prediction as a float: ``"12.5"``, ``"1,000"``, ``"약 20"``, ``"20 ms"`` (the unit of the
    prediction may follow), ``"8개"``, ``"-3 위치"``, ``"4배 정도"`` (a Korean counter such as 개, 번,
    배, 위치, 토큰 may follow whatever the unit: :data:`COUNTERS`).

    Raises:
        ValueError: (Korean) not a finite number, or followed by a different unit with a scale
            ("2초" for a prediction in ms: the message names the unit to write).
    """
    s = unicodedata.normalize("NFKC", str(text)).strip().replace("\u2212", "-")
    s = re.sub(r"^(?:약|대략|about|~|≈)\s*", "", s)
    s = _TAIL.sub("", s)
    m = re.match(r"^([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:e[+-]?\d+)?|[+-]?\.\d+(?:e[+-]?\d+)?)\s*(.*)$", s,
                 re.IGNORECASE)
    if not m:
        raise ValueError(f"숫자로 읽을 수 없습니다: {str(text).strip()[:30]!r}. 숫자만 입력하세요 (예: 12.5).")
    number, after = m.group(1), m.group(2).strip()
    own = (unit or "").strip()
    if after and after.lower() != own.lower() and after not in COUNTERS:
        if after in _SCALED:
            raise ValueError(f"단위가 다릅니다: {after!r}가 아니라 {own or '단위 없이'}(으)로 적으세요 "
                             f"(예: 12.5{(' ' + own) if own else ''}).")
        raise ValueError(f"숫자로 읽을 수 없습니다: {str(text).strip()[:30]!r}. 숫자 하나를 입력하세요 "
                         f"(예: 12.5{(' ' + own) if own else ''}).")
    v = float(number.replace(",", ""))
    if not math.isfinite(v):
        raise ValueError("유한한 숫자를 입력하세요.")
    return v


def as_real(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = ": 따옴표 없이 쓰세요" if isinstance(value, str) else ""
        raise TypeError(f"{what}={value!r}: 숫자를 넣으세요 (예: 0.2){hint} (받은 형식: {type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what}={value!r}: 유한한 숫자여야 합니다")
    return v


def format_value(x: Any, unit: str | None = None) -> str:
    if isinstance(x, float):
        text = f"{x:.4g}" if abs(x) < 1e6 else f"{x:.3e}"
    else:
        text = str(x)
    return f"{text} {unit}".rstrip() if unit else text


def evaluate(task_check: TaskCheck, value: Any) -> bool:
    """Whether ``value`` satisfies ``task_check`` (``op`` and ``value`` of a task definition).

    Numbers compare as floats (a ``bool`` is not a number here); ``==``/``!=`` on a number compare
    with a relative tolerance of 1e-9; ``in`` tests membership (numbers with the same tolerance).

    Raises:
        TypeError: (Korean) a number was needed and ``value`` is not one.
    """
    op, ref = task_check.op, task_check.value

    def same(a: Any, b: Any) -> bool:
        if isinstance(b, (int, float)) and not isinstance(b, bool):
            if isinstance(a, bool) or not isinstance(a, numbers.Real):
                return False
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        return a == b

    if op in ("<", "<=", ">", ">=", "between"):
        v = as_real(value, "value")
        if op == "<":
            return v < ref
        if op == "<=":
            return v <= ref
        if op == ">":
            return v > ref
        if op == ">=":
            return v >= ref
        return ref[0] <= v <= ref[1]
    if op == "==":
        return same(value, ref)
    if op == "!=":
        return not same(value, ref)
    return any(same(value, r) for r in ref)


def storable(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        return v if math.isfinite(v) else str(value)
    if isinstance(value, str):
        return value[:200]
    return repr(value)[:200]


# --------------------------------------------------------------------------------------------
# Widgets (ipywidgets 8; imported on first use)
# --------------------------------------------------------------------------------------------
