"""nbgrader autograde step that fills formgrader's review queue (lecturer's side).

Registered in the course's ``nbgrader_config.py`` right after nbgrader's ``SaveAutoGrades``:

- an autograded test cell whose output starts with :data:`decodelab.classroom.bank.REVIEW_MARK`
  (an answer decodelab's rules cannot decide) loses its automatic score and is flagged
  ``needs_manual_grade``: formgrader lists it and the lecturer's score is the one that counts;
  a manual score already given stays (nbgrader never overwrites ``manual_score``);
- the hidden tests run in the student's kernel, which the student's own cells could tamper with;
  so an answer written as a plain value (``답["id"] = "4.07 ms"``) is graded again here, outside
  that kernel, and a score that differs from the kernel's is flagged for review with a note
  (answers computed by code in the notebook cannot be re-read and keep the kernel's score);
- after each written answer (a manually graded cell) a note with the item's rubric is inserted
  into the autograded notebook, so formgrader shows it beside the answer, and the feedback file
  shows it to the student with the explanation after grading.
"""

from __future__ import annotations

import ast
import io
from contextlib import redirect_stdout

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution

from .bank import REVIEW_MARK, ExamError, course_context, grade_cell
from .student import read_answers

__all__ = ["MarkForReview"]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


_UNREADABLE = object()


def literal_answer(source: str, item_id: str):
    """The value a student's answer cell gives ``답[item_id]`` as a plain literal (None when the cell
    does not assign it), or ``_UNREADABLE`` when it is computed by code or the cell does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return _UNREADABLE
    value = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "답"
                    and isinstance(t.slice, ast.Constant) and t.slice.value == item_id):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    return _UNREADABLE
        elif not isinstance(node, ast.Expr):
            return _UNREADABLE
    return value


class MarkForReview(NbGraderPreprocessor):
    """Send undecidable answers to formgrader and show written answers' rubrics there."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        path = resources.get("metadata", {}).get("path") or "."
        try:
            bank = course_context(path).bank
        except ExamError:
            bank = None
        answers = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
        cells = []
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                cells.append(cell)
                meta = cell.metadata.get("nbgrader", {})
                if not is_grade(cell):
                    continue
                gid = meta["grade_id"]
                if cell.cell_type == "code" and not is_solution(cell) and REVIEW_MARK in _text(cell):
                    try:
                        grade = gb.find_grade(gid, info["notebook"], info["assignment"], info["student"])
                    except MissingEntry:
                        continue
                    grade.auto_score = None
                    grade.needs_manual_grade = True
                    gb.db.commit()
                elif (cell.cell_type == "code" and not is_solution(cell) and bank is not None
                      and (gid in bank.questions or gid in bank.parametric)):
                    value = literal_answer(answers.get(f"{gid}-answer", ""), gid)
                    if value is _UNREADABLE:
                        continue
                    if value is None:  # the widget's answer, as the hidden test reads it
                        value = read_answers(path).get(gid)
                    with redirect_stdout(io.StringIO()):
                        again = grade_cell(gid, value, cwd=path)
                    try:
                        grade = gb.find_grade(gid, info["notebook"], info["assignment"], info["student"])
                    except MissingEntry:
                        continue
                    if grade.auto_score is not None and abs(grade.auto_score - again) > 1e-6:
                        grade.needs_manual_grade = True
                        gb.db.commit()
                        cells.append(nbformat.v4.new_markdown_cell(
                            f"**[검토 필요] 점수 불일치**: 노트북 안의 채점은 {grade.auto_score:g}점, 답 칸의 값을 "
                            f"강의자 쪽에서 다시 채점하면 {again:g}점입니다. 강의자가 점수를 정합니다."))
                elif is_solution(cell) and bank is not None and gid in bank.written:
                    w = bank.written[gid]
                    cells.append(nbformat.v4.new_markdown_cell(
                        f"**채점 기준 ({w.points:g}점)**\n\n{w.rubric}\n\n**해설**: {w.explanation}"))
        nb.cells = cells
        return nb, resources
