"""nbgrader autograde step that grades the exam items outside the student's kernel (lecturer's side).

Registered in the course's ``nbgrader_config.py`` right after nbgrader's ``SaveAutoGrades`` (the
kernel has stopped by then; it ran in :mod:`decodelab.classroom.sandbox`'s sandbox). For each
autograded cell of an item of the exam bank (``GradeAnswers.bank_dir``, the course's ``exam/``):

- a quiz or per-student numeric item: the answer value the hidden test recorded
  (:data:`decodelab.classroom.student.ANSWER_MIME`), else the widget's answer in the submission's
  ``answers.json``, is graded by :func:`decodelab.classroom.bank.decide` with the bank, for the
  student nbgrader names (never anyone the notebook names);
- an edit-the-code task: the answer cell's source is run alone in a fresh sandboxed interpreter on
  the task's inputs (:func:`decodelab.classroom.bank.decide_task`); only the returned values come back;
- the cell's score is set in the gradebook (``auto_score``; an undecidable answer: no automatic
  score and ``needs_manual_grade``, so formgrader lists it; a manual score already given stays and
  counts, as with nbgrader's own step), and the cell's output becomes the Korean verdict and
  explanation, which the feedback shows;
- after each written answer (a manually graded cell) a note with the item's rubric is inserted, so
  formgrader shows it beside the answer and the feedback shows it after grading.

Whatever the kernel printed or computed, the score comes from here: a recorded value is only an
answer (anything a student's cell forges there is an answer they could have typed).
"""

from __future__ import annotations

import os

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Unicode

from .bank import ExamError, Verdict, decide, decide_task, load_bank
from .student import ANSWER_MIME, read_answers

__all__ = ["GradeAnswers", "recorded_answer"]

_MISSING = object()


def recorded_answer(cell, item_id: str):
    """The value :func:`decodelab.classroom.student.record` emitted for ``item_id`` in ``cell``'s
    outputs (the last one), or ``_MISSING`` when there is none."""
    value = _MISSING
    for out in cell.get("outputs", []):
        data = out.get("data", {}).get(ANSWER_MIME) if out.get("output_type") in ("display_data", "execute_result") else None
        if isinstance(data, dict) and data.get("id") == item_id:
            value = data.get("value")
    return value


class GradeAnswers(NbGraderPreprocessor):
    """Grade the exam items with the bank, in nbgrader's process; show rubrics to formgrader."""

    bank_dir = Unicode("", help="the exam bank folder (items.yaml, parametric.py); "
                                "default: exam/ of the course folder").tag(config=True)

    def _bank(self):
        folder = self.bank_dir or os.path.join(CourseDirectory(config=self.config).root, "exam")
        return load_bank(folder)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        bank = self._bank()  # ExamError (Korean) when missing: autograde fails rather than guess
        student = info["student"]
        path = resources.get("metadata", {}).get("path") or "."
        widgets = read_answers(path)
        sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
        cells = []
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                cells.append(cell)
                if not is_grade(cell):
                    continue
                gid = cell.metadata["nbgrader"]["grade_id"]
                if cell.cell_type == "code" and not is_solution(cell):
                    if gid in bank.tasks:
                        verdict = decide_task(bank, gid, sources.get(f"{gid}-answer"))
                    elif gid in bank.questions or gid in bank.parametric:
                        value = recorded_answer(cell, gid)
                        if value is _MISSING or value is None:  # the answer cell left as it was: the widget's
                            value = widgets.get(gid)
                        verdict = decide(bank, gid, student, value)
                    else:
                        continue  # not an exam item: nbgrader's own rule stands
                    self._save(gb, info, gid, verdict)
                    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=verdict.text)]
                elif is_solution(cell) and gid in bank.written:
                    w = bank.written[gid]
                    cells.append(nbformat.v4.new_markdown_cell(
                        f"**채점 기준 ({w.points:g}점)**\n\n{w.rubric}\n\n**해설**: {w.explanation}"))
        nb.cells = cells
        return nb, resources

    @staticmethod
    def _save(gb: Gradebook, info: dict, gid: str, verdict: Verdict) -> None:
        try:
            grade = gb.find_grade(gid, info["notebook"], info["assignment"], info["student"])
        except MissingEntry:
            raise ExamError(f"{gid}: 성적부에 없는 채점 칸입니다 (nbgrader generate_assignment를 다시 하세요)") from None
        grade.auto_score = verdict.points
        # as nbgrader's SaveAutoGrades: a manual score (kept, it counts) or no automatic one: review
        grade.needs_manual_grade = grade.manual_score is not None or verdict.points is None
        gb.db.commit()
