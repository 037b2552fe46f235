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
  formgrader shows it beside the answer and the feedback shows it after grading;
- a graded cell of the release that the submission no longer has (the student deleted it) scores 0
  automatically, with a warning in autograde's log and a note at the end of the autograded copy
  (nbgrader itself would leave the previous autograde's score in the gradebook);
- the autograded notebook's metadata ``decodelab`` records the submission it was graded from (the
  gradebook's timestamp) and the missing cells: :class:`decodelab.classroom.lms.LmsExport` exports
  a score only when that copy exists and matches the gradebook's submission.

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
            missing = self._missing_cells(gb, info, nb)
            try:
                graded = str(gb.find_submission(info["assignment"], student).timestamp)
            except MissingEntry:
                graded = "None"
        if missing:
            cells.append(nbformat.v4.new_markdown_cell(
                "**채점 칸이 없습니다**: " + ", ".join(f"`{g}`" for g in missing)
                + " (제출한 노트북에서 지워짐). 그 문항은 0점입니다."))
        nb.cells = cells
        # what lms.LmsExport checks: which submission this copy was graded from, which cells were missing
        nb.metadata["decodelab"] = {"submission": graded, "missing_cells": missing}
        return nb, resources

    def _missing_cells(self, gb: Gradebook, info: dict, nb) -> list[str]:
        """The graded cells of the release that ``nb`` no longer has (the student deleted them): each
        scores 0 automatically (a manual score the lecturer gave stays), with a warning; without this
        nbgrader leaves the previous autograde's score in the gradebook."""
        present = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells if is_grade(c)}
        missing = []
        for cell in gb.find_notebook(info["notebook"], info["assignment"]).grade_cells:
            if cell.name in present:
                continue
            grade = gb.find_grade(cell.name, info["notebook"], info["assignment"], info["student"])
            grade.auto_score = 0.0
            grade.needs_manual_grade = grade.manual_score is not None
            missing.append(cell.name)
            self.log.warning("%s %s: 채점 칸 %s이(가) 제출한 노트북에 없어 0점으로 매깁니다 (학생이 지운 칸)",
                             info["student"], info["assignment"], cell.name)
        gb.db.commit()
        return sorted(missing)

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
