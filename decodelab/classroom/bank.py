"""The exam bank on the lecturer's side: loading it, a student's variant, grading one cell.

The bank is a folder (``classroom/exam/`` in the repository, copied to ``<course>/exam/`` by
:func:`decodelab.classroom.assignments.write_course`), never part of the package students install:

- ``items.yaml``: per notebook, fixed questions in :mod:`decodelab.quiz.schema`'s format
  (single/multiple/short/...) and ``written`` answers with their ``rubric`` (manually graded);
- ``parametric.py``: ``ITEMS`` (numeric items with per-student numbers, answers computed by
  :mod:`decodelab.latency`) and ``TASKS`` (edit-the-code tasks); see that file's docstring.

The hidden test cells of the graded notebooks call :func:`grade_cell` / :func:`grade_code`. They
run inside nbgrader's autograde, in ``<course>/autograded/<student>/<assignment>/``: the course
folder gives the bank, the folder name the student (never anything the notebook says). Outside a
course directory they refuse (Korean message): the student package holds no key.
"""

from __future__ import annotations

import math
import os
import runpy
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import TypeAdapter

from .student import draw

__all__ = ["Bank", "ExamError", "Parametric", "REVIEW_MARK", "Written", "course_context", "grade_cell",
           "grade_code", "load_bank", "variant"]

REVIEW_MARK = "[검토 필요]"
"""First words of a hidden test's output when the rules cannot decide: the answer goes to formgrader."""


class ExamError(RuntimeError):
    """The exam bank is missing or invalid (Korean message saying what to do)."""


@dataclass(frozen=True)
class Parametric:
    id: str
    notebook: str
    prompt: str
    params: dict
    unit: str
    answer: Callable[[dict], float]
    explanation: str
    points: float = 1.0
    rel_tol: float = 0.02
    abs_tol: float = 0.0

    def values(self, student: str) -> dict:
        """This student's numbers (name -> value)."""
        return draw(self.id, self.params, student)

    def question(self, student: str):
        """A keyed :class:`decodelab.quiz.schema.NumericQuestion` with this student's answer."""
        from ..quiz.schema import NumericQuestion

        p = self.values(student)
        ans = float(self.answer(p))
        tol = max(self.abs_tol, self.rel_tol * abs(ans))
        shown = {k: v for k, v in p.items()}
        return NumericQuestion(
            id=self.id, kind="numeric", prompt=self.prompt.format(**shown), answer=ans, tolerance=tol, unit=self.unit,
            explanation=self.explanation.format(**shown, answer=f"{ans:.4g}"), points=self.points,
            source=[{"notebook": self.notebook, "passage": "시험 문항(학생별 수치)"}])

    def public(self) -> dict:
        """What the student notebook holds: id, prompt template, parameter space, unit (no answer)."""
        return {"id": self.id, "prompt": self.prompt, "params": self.params, "unit": self.unit}


@dataclass(frozen=True)
class Written:
    id: str
    notebook: str
    prompt: str
    rubric: str
    explanation: str
    points: float = 1.0


@dataclass(frozen=True)
class Task:
    id: str
    notebook: str
    prompt: str
    function: str
    stub: str
    solution: str
    cases: list
    reference: Callable[..., float]
    points: float = 1.0
    rel_tol: float = 1e-6
    explanation: str = ""


@dataclass
class Bank:
    """The whole exam bank: ``notebooks`` (ids, e.g. "02"), their titles and items in order."""

    folder: Path
    titles: dict[str, str] = field(default_factory=dict)
    questions: dict[str, Any] = field(default_factory=dict)  # keyed decodelab.quiz questions
    written: dict[str, Written] = field(default_factory=dict)
    parametric: dict[str, Parametric] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)

    @property
    def notebooks(self) -> list[str]:
        return sorted(self.titles)

    def items(self, notebook: str) -> list:
        """The items of one notebook's exam, in order: questions, parametric, tasks, written."""
        groups = (self.questions, self.parametric, self.tasks, self.written)
        return [it for g in groups for it in g.values() if _nb(it) == notebook]

    def get(self, item_id: str):
        for g in (self.questions, self.parametric, self.tasks, self.written):
            if item_id in g:
                return g[item_id]
        raise KeyError(f"{item_id!r}: 시험 문항 은행에 없는 문항입니다 (decodelab classroom variant DIR --list로 확인하세요)")

    def points(self, item) -> float:
        return float(item.points)


def _nb(item) -> str:
    return item.notebook if hasattr(item, "notebook") and isinstance(item.notebook, str) else item.id[:2]


def load_bank(folder: str | os.PathLike) -> Bank:
    """Read an exam bank folder (``items.yaml`` and ``parametric.py``).

    Raises:
        ExamError: (Korean) the folder or a file is missing, an item is invalid or an id repeats.
    """
    folder = Path(folder)
    return _load_bank(folder.resolve(), *(_mtime(folder / n) for n in ("items.yaml", "parametric.py")))


def _mtime(p: Path) -> float:
    if not p.is_file():
        raise ExamError(f"{p}: 시험 문항 은행 파일이 없습니다 (decodelab classroom init DIR로 강좌 폴더를 다시 만드세요)")
    return p.stat().st_mtime


@lru_cache(maxsize=8)
def _load_bank(folder: Path, *_stamps: float) -> Bank:
    from ..quiz.schema import Question

    bank = Bank(folder)
    seen: set[str] = set()

    def add(group: dict, item) -> None:
        if item.id in seen:
            raise ExamError(f"{item.id}: 시험 문항 id가 두 번 나옵니다 (하나를 바꾸세요)")
        seen.add(item.id)
        group[item.id] = item

    raw = yaml.safe_load((folder / "items.yaml").read_text(encoding="utf-8")) or {}
    adapter = TypeAdapter(Question)
    for nb, body in (raw.get("notebooks") or {}).items():
        nb = str(nb)
        bank.titles[nb] = body.get("title", f"노트북 {nb}")
        for q in body.get("questions", []):
            try:
                add(bank.questions, adapter.validate_python(q))
            except ValueError as e:
                raise ExamError(f"items.yaml {q.get('id', '?')}: 문항이 올바르지 않습니다: {e}") from None
        for w in body.get("written", []):
            add(bank.written, Written(notebook=nb, **w))
    ns = runpy.run_path(str(folder / "parametric.py"))
    for it in ns.get("ITEMS", []):
        add(bank.parametric, Parametric(**it))
        bank.titles.setdefault(it["notebook"], f"노트북 {it['notebook']}")
    for t in ns.get("TASKS", []):
        add(bank.tasks, Task(**t))
    return bank


def variant(bank: Bank, item_id: str, student: str) -> tuple[dict, Any]:
    """A student's numbers and the keyed question (``.answer``, ``.tolerance``, ``.unit``) of a parametric item.

    Raises:
        KeyError: (Korean) not a parametric item of the bank.
    """
    if item_id not in bank.parametric:
        raise KeyError(f"{item_id!r}: 학생별 수치 문항이 아닙니다 (목록: decodelab classroom variant DIR --list)")
    it = bank.parametric[item_id]
    return it.values(student), it.question(student)


@dataclass(frozen=True)
class Context:
    root: Path
    student: str
    bank: Bank


def course_context(cwd: str | os.PathLike | None = None) -> Context:
    """The course directory above ``cwd`` (it holds ``nbgrader_config.py`` and ``exam/``) and the
    student whose folder ``cwd`` is (``autograded/<student>/<assignment>``; in ``source/`` the
    lecturer's own run: student ``"source"``).

    Raises:
        ExamError: (Korean) not inside a course directory: the student's side never grades.
    """
    here = Path(cwd or os.getcwd()).resolve()
    for d in (here, *here.parents):
        if (d / "nbgrader_config.py").is_file() and (d / "exam").is_dir():
            rel = here.relative_to(d).parts
            if len(rel) >= 3 and rel[0] in ("autograded", "submitted"):
                student = rel[1]
            elif rel[:1] == ("source",):
                student = "source"
            else:
                raise ExamError(f"{here}: 학생 제출 폴더(autograded/<학생>/<과제>)가 아닙니다 (nbgrader autograde로 채점하세요)")
            return Context(d, student, load_bank(d / "exam"))
    raise ExamError("채점은 강의자의 nbgrader autograde에서만 합니다: 이 노트북에는 정답이 없습니다")


def _say(lines: list[str]) -> None:
    print("\n".join(l for l in lines if l))


def grade_cell(item_id: str, response: Any, *, cwd: str | os.PathLike | None = None) -> float:
    """Grade one answer of a graded notebook; prints the Korean feedback and the explanation.

    ``response`` None (the answer cell left as it was) takes the answer given in the item's widget
    (:func:`decodelab.classroom.student.answer_box`, saved next to the notebook).

    Returns the points earned (nbgrader's partial credit: a test cell's last value). An answer the
    rules cannot decide prints :data:`REVIEW_MARK` and returns 0; nbgrader's autograde (with
    :class:`decodelab.classroom.review.MarkForReview`) then leaves it to formgrader.
    """
    from ..quiz.grading import ResponseError, check

    from .student import read_answers

    ctx = course_context(cwd)
    item = ctx.bank.get(item_id)
    q = item.question(ctx.student) if isinstance(item, Parametric) else item
    if response is None:  # nothing in the answer cell: the widget's answer, submitted beside the notebook
        response = read_answers(cwd).get(item_id)
    points = float(q.points)
    if response is None or (isinstance(response, str) and not response.strip()):
        _say(["답이 비어 있습니다: 0점.", f"해설: {q.explanation}"])
        return 0.0
    try:
        res = check(q, response)
    except ResponseError as e:
        _say([f"답을 읽을 수 없습니다: {e} (0점)", f"해설: {q.explanation}"])
        return 0.0
    if res.score is None:
        _say([f"{REVIEW_MARK} 규칙으로 판단할 수 없는 답이라 강의자가 채점합니다.", f"해설: {q.explanation}"])
        return 0.0
    verdict = "정답입니다." if res.correct else ("부분 점수입니다." if res.score > 0 else "틀렸습니다.")
    _say([f"{verdict} ({res.score * points:g}/{points:g}점)", *res.feedback, f"정답: {res.answer}",
          f"해설: {res.explanation}"])
    return round(res.score * points, 6)


def grade_code(task_id: str, func: Any, *, cwd: str | os.PathLike | None = None) -> float:
    """Grade an edit-the-code task: the student's ``func`` on the task's cases against decodelab's
    reference; partial credit per case passed. Prints each case's result (Korean)."""
    ctx = course_context(cwd)
    task = ctx.bank.get(task_id)
    if not callable(func):
        print(f"{task.function}가 함수가 아닙니다: 0점.")
        return 0.0
    passed = 0
    for args in task.cases:
        want = float(task.reference(*args))
        try:
            got = func(*args)
            ok = got is not None and math.isclose(float(got), want, rel_tol=task.rel_tol, abs_tol=1e-12)
        except Exception as e:  # the student's code: any error fails the case
            got, ok = f"오류 {type(e).__name__}: {e}", False
        passed += ok
        print(f"{task.function}{tuple(args)} = {got!r} ({'맞음' if ok else f'틀림, 기대값 {want:.6g}'})")
    print(f"{passed}/{len(task.cases)} 사례 통과")
    if task.explanation:
        print(f"해설: {task.explanation}")
    return round(task.points * passed / len(task.cases), 6)
