"""nbgrader autograde step that fills formgrader's review queue (lecturer's side).

Registered in the course's ``nbgrader_config.py`` right after nbgrader's ``SaveAutoGrades``:

- an autograded test cell whose output starts with :data:`decodelab.classroom.bank.REVIEW_MARK`
  (an answer decodelab's rules cannot decide) loses its automatic score and is flagged
  ``needs_manual_grade``: formgrader lists it and the lecturer's score is the one that counts;
  a manual score already given stays (nbgrader never overwrites ``manual_score``);
- after each written answer (a manually graded cell) a note with the item's rubric is inserted
  into the autograded notebook, so formgrader shows it beside the answer, and the feedback file
  shows it to the student with the explanation after grading.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution

from .bank import REVIEW_MARK, ExamError, course_context

__all__ = ["MarkForReview"]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


class MarkForReview(NbGraderPreprocessor):
    """Send undecidable answers to formgrader and show written answers' rubrics there."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        path = resources.get("metadata", {}).get("path") or "."
        try:
            bank = course_context(path).bank
        except ExamError:
            bank = None
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
                elif is_solution(cell) and bank is not None and gid in bank.written:
                    w = bank.written[gid]
                    cells.append(nbformat.v4.new_markdown_cell(
                        f"**채점 기준 ({w.points:g}점)**\n\n{w.rubric}\n\n**해설**: {w.explanation}"))
        nb.cells = cells
        return nb, resources
