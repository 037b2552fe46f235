"""Comprehension quizzes: schema, loading, grading one answer, the widget.

Entry points:

- :func:`load_quizzes` -> every question (each with ``id``, ``kind``, ``prompt``, ``answer``,
  ``explanation``, ``source``, ``points``); quiz files live in the repository's ``quizzes/``
  (or ``$DECODELAB_QUIZZES``), see :mod:`decodelab.assess.quiz.loading`.
- :func:`grade` ``(question_id, response)`` -> score in [0, 1], or ``None`` for an answer sent to the
  lecturer's review ("검토 필요"); :func:`check` for the explanation; :func:`short_verdict` for a
  short answer's score and the rule that decided it.
- :func:`student_view` ``(question, shuffle_key)``: the order and labels in which a student saw the
  choices (the widget shuffles them per student, see :mod:`decodelab.assess.quiz.shuffle`).
- :func:`quiz_widget` ``("01")`` -> the notebook widget (``"all"`` for the review notebook).
- The exercises of the notebooks (predict, reveal, written, check) are in :mod:`decodelab.assess.exercises`;
  they are saved with the quiz answers and exported in the same submission file.
- A folder of submissions (quiz answers and exercises) is graded by :mod:`decodelab.assess.report`
  (``decodelab grade DIR -o CSV``). The dependency runs one way: report -> exercises -> this
  package.

The widget is imported lazily, so grading does not need ipywidgets.
"""

from __future__ import annotations

from .grading import REVIEW, GradeResult, check, grade, grade_short, parse_response, score_response, short_verdict
from .loading import (
    QuizError,
    QuizProblem,
    get_question,
    load_quiz_file,
    load_quiz_files,
    load_quizzes,
    quizzes_dir,
)
from .normalize import ResponseError, normalize_text, parse_quantity
from .shuffle import choice_order, student_view
from .store import AnswerStore
from .submission import Submission, SubmissionError, read_submission

__all__ = [
    "AnswerStore",
    "GradeResult",
    "QuizError",
    "QuizProblem",
    "REVIEW",
    "ResponseError",
    "Submission",
    "SubmissionError",
    "check",
    "choice_order",
    "get_question",
    "grade",
    "grade_short",
    "load_quiz_file",
    "load_quiz_files",
    "load_quizzes",
    "normalize_text",
    "parse_quantity",
    "parse_response",
    "quiz_widget",
    "quizzes_dir",
    "read_submission",
    "score_response",
    "short_verdict",
    "student_view",
]


def quiz_widget(notebook_id="all", *, quizzes_dir=None, answers_dir=None, export_dir=None, student_id=None):
    """The quiz widget at the end of a notebook: ``quiz_widget("01")``; ``"all"`` (or ``"06"``) for the review.

    Answers are saved as they are given to ``answers_dir`` (default ``$DECODELAB_ANSWERS_DIR``, else
    ``~/.decodelab/answers``). See :func:`decodelab.assess.quiz.widget.quiz_widget` for details. ipywidgets is imported on first use.

    Raises:
        ValueError: (Korean) bad ``notebook_id``. QuizError / FileNotFoundError: quiz files invalid or missing.
    """
    from .widget import quiz_widget as _quiz_widget

    return _quiz_widget(notebook_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir, export_dir=export_dir,
                        student_id=student_id)
