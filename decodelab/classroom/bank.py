"""The exam bank on the lecturer's side: loading it, a student's variant, grading one cell.

The bank is a folder (``classroom/exam/`` in the repository, copied to ``<course>/exam/`` by
:func:`decodelab.classroom.assignments.write_course`), never part of the package students install:

- ``items.yaml``: per notebook, fixed questions in :mod:`decodelab.assess.quiz.schema`'s format
  (single/multiple/short/...) and ``written`` answers with their ``rubric`` (manually graded);
- ``parametric.py``: ``ITEMS`` (numeric items with per-student numbers, answers computed by
  :mod:`decodelab.latency`) and ``TASKS`` (edit-the-code tasks); see that file's docstring.

Answers are data. The graded notebook's hidden test cells only record each answer's value
(:func:`decodelab.classroom.student.record`); the decision is made afterwards in the lecturer's
nbgrader process by :class:`decodelab.classroom.review.GradeAnswers`, which loads the bank and calls
:func:`decide` (a quiz or per-student numeric item) and :func:`decide_task` (an edit-the-code task,
whose function runs alone in a fresh sandboxed interpreter: :func:`decodelab.classroom.sandbox.run_function`).
Nothing here computes a key without the bank: every key comes from ``items.yaml`` or
``parametric.py``, which never enter the student's kernel (at autograde the kernel runs in a sandbox
without the course folder: :mod:`decodelab.classroom.sandbox`).
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

__all__ = ["Bank", "ExamError", "Parametric", "REVIEW_MARK", "Verdict", "Written", "decide", "decide_task",
           "load_bank", "variant"]

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
        """A keyed :class:`decodelab.assess.quiz.schema.NumericQuestion` with this student's answer."""
        from ..assess.quiz.schema import NumericQuestion

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
    questions: dict[str, Any] = field(default_factory=dict)  # keyed decodelab.assess.quiz questions
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
    from ..assess.quiz.schema import Question

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
class Verdict:
    """The decision on one answer: ``points`` earned (None: the rules cannot decide, the lecturer
    grades it in formgrader) out of ``max_points``, and the Korean feedback ``lines``."""

    points: float | None
    max_points: float
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(l for l in self.lines if l) + "\n"


def decide(bank: Bank, item_id: str, student: str, response: Any) -> Verdict:
    """Grade one answer to a quiz or per-student numeric item of ``bank`` for ``student``.

    Args:
        bank: the exam bank (:func:`load_bank`), read in the lecturer's process.
        item_id: a question or parametric item of the bank.
        student: nbgrader's student id (whose numbers a parametric item uses).
        response: the recorded answer (str, number, list; None or blank: no answer).

    Returns:
        :class:`Verdict`: partial credit as :func:`decodelab.assess.quiz.grading.check` gives it; an answer
        the rules cannot decide has ``points`` None and a first line starting with :data:`REVIEW_MARK`.

    Raises:
        KeyError: (Korean) not an item of the bank.
    """
    from ..assess.quiz.grading import ResponseError, check

    item = bank.get(item_id)
    q = item.question(student) if isinstance(item, Parametric) else item
    points = float(q.points)
    if response is None or (isinstance(response, str) and not response.strip()) or response == []:
        return Verdict(0.0, points, ["답이 비어 있습니다: 0점.", f"해설: {q.explanation}"])
    try:
        res = check(q, response)
    except ResponseError as e:
        return Verdict(0.0, points, [f"답을 읽을 수 없습니다: {e} (0점)", f"해설: {q.explanation}"])
    if res.score is None:
        return Verdict(None, points, [f"{REVIEW_MARK} 규칙으로 판단할 수 없는 답이라 강의자가 채점합니다.",
                                      f"해설: {q.explanation}"])
    verdict = "정답입니다." if res.correct else ("부분 점수입니다." if res.score > 0 else "틀렸습니다.")
    return Verdict(round(res.score * points, 6), points,
                   [f"{verdict} ({res.score * points:g}/{points:g}점)", *res.feedback, f"정답: {res.answer}",
                    f"해설: {res.explanation}"])


def decide_task(bank: Bank, task_id: str, source: str | None, *, run=None) -> Verdict:
    """Grade an edit-the-code task: the answer cell's ``source`` runs alone in a fresh sandboxed
    interpreter (``run``, default :func:`decodelab.classroom.sandbox.run_function`) on the task's
    cases; the expected values are computed here, by the bank's reference, and never sent there.
    Partial credit per case passed (``math.isclose`` with the task's ``rel_tol``). The verdict's
    lines (the feedback) show each case's inputs, the student's value and right/wrong, never the
    expected value.

    Raises:
        KeyError: (Korean) not a task of the bank.
        decodelab.classroom.sandbox.SandboxError: (Korean) no safe way to run the code here.
    """
    if task_id not in bank.tasks:
        raise KeyError(f"{task_id!r}: 코드 과제가 아닙니다")
    task = bank.tasks[task_id]
    if run is None:
        from .sandbox import run_function as run
    results = run(source or "", task.function, task.cases)
    lines, passed = [], 0
    for args, got in zip(task.cases, results):
        want = float(task.reference(*args))
        value = got.get("value")
        ok = value is not None and math.isclose(value, want, rel_tol=task.rel_tol, abs_tol=1e-12)
        passed += ok
        shown = f"{value!r}" if value is not None else got.get("error", "값이 없습니다")
        # no expected value in the verdict: it becomes the feedback, and the cases are the same for
        # every student, so printed values would be a table to hard-code
        lines.append(f"{task.function}{tuple(args)} = {shown} ({'맞음' if ok else '틀림'})")
    lines.append(f"{passed}/{len(task.cases)} 사례 통과 (표준 라이브러리만 있는 새 파이썬에서 따로 실행했습니다)")
    if task.explanation:
        lines.append(f"해설: {task.explanation}")
    return Verdict(round(task.points * passed / len(task.cases), 6), float(task.points), lines)
