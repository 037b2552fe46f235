"""Grading one response: parse it (with Korean messages for bad input), score it in [0, 1], explain.

Each question kind is a class of :mod:`decodelab.assess.quiz.schema` with its own rules: ``parse`` (read a
response, or say in Korean what to change), ``score`` (the score in [0, 1] and the feedback lines)
and ``answer_text`` (the right answer, readable). The score is multiplied by the question's
``points`` in the practice report:

- ``single``: 1 if the chosen id is the answer, else 0.
- ``multiple``: ``max(0, (right picks - wrong picks) / number of right options)``; 1 only for the
  exact set, so ticking every option is penalized by each wrong one (e.g. right = {a, b, c}: {a, b}
  -> 2/3, {a, b, c, d} -> 2/3, {a, d} -> 0).
- ``short``: :func:`grade_short` (rules in :func:`short_verdict`): 1 for an accepted form or an
  answer that states every required concept and contradicts nothing; 0 for a listed misconception
  or a negated concept; otherwise ``None``: the lecturer reviews it.
- ``numeric``: 1 if ``|value - answer| <= tolerance`` (value converted to the question's unit), else 0.
- ``ordering``: 1 for exactly the right order, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .loading import get_question
from .matching import SHORT_REASONS, grade_short, misconception_of, short_verdict
from .normalize import ResponseError

__all__ = ["GradeResult", "REVIEW", "SHORT_REASONS", "answer_text", "check", "grade", "grade_short",
           "misconception_of", "parse_response", "score_response", "short_verdict"]

REVIEW = "검토 필요"
"""What the practice report shows for an answer sent to the lecturer's review (score ``None``)."""


@dataclass(frozen=True)
class GradeResult:
    """Outcome of :func:`check`.

    Attributes:
        score: in [0, 1]; ``None`` for a short answer the rules cannot decide (lecturer's review).
        correct: ``score == 1``.
        explanation: why the right answer is right (the question's ``explanation``).
        feedback: extra lines for this response: why each wrongly chosen option is wrong, what was
            missed, how far a number is off.
        answer: the right answer, readable (``"b. ..."``, ``"150 s (±0.5)"``, ``"A → B → C"``).
    """

    score: float | None
    correct: bool
    explanation: str
    feedback: list[str] = field(default_factory=list)
    answer: str = ""

    @property
    def review(self) -> bool:
        """True when the answer awaits the lecturer's review (``score is None``)."""
        return self.score is None


def parse_response(q, response: Any) -> Any:
    """Check and normalize a response for keyed question ``q`` (its kind's ``parse``).

    Returns:
        single: a choice id (``str``); multiple: a sorted list of ids; short: the raw ``str``;
        numeric: a ``float`` in the question's unit; ordering: a list of item ids.

    Raises:
        ResponseError: a Korean message saying what to change (empty answer, unknown choice, not a
            number, wrong unit, an ordering that does not use every item once).
    """
    return q.parse(response)


def answer_text(q, *, labels: dict[str, str] | None = None) -> str:
    """The right answer of a keyed question, readable by a student (Korean); ``labels`` as in
    :func:`check` (choices and items under the labels the student saw)."""
    return q.answer_text(labels)


def check(q, response: Any, *, labels: dict[str, str] | None = None) -> GradeResult:
    """Grade ``response`` against keyed question ``q`` and explain.

    Args:
        q: a keyed question.
        response: as for :func:`grade`.
        labels: choice/item id -> the label the student saw (the widget shows shuffled choices
            under positional labels, see :func:`decodelab.assess.quiz.shuffle.choice_order`); the feedback
            and ``answer`` use these labels. Default: the ids themselves.

    Returns:
        :class:`GradeResult`; ``score`` is ``None`` for a short answer sent to review.

    Raises:
        ResponseError: the response cannot be graded as given (see :func:`parse_response`); the
            caller keeps the student's input and shows the message.
    """
    score, feedback = q.score(q.parse(response), labels)
    return GradeResult(score=score, correct=score == 1.0, explanation=q.explanation, feedback=feedback,
                       answer=q.answer_text(labels))


def score_response(q, response: Any) -> float | None:
    """Score in [0, 1], or ``None`` for a short answer sent to the lecturer's review; a response that
    cannot be parsed scores 0 (never raises for bad input)."""
    try:
        return check(q, response).score
    except ResponseError:
        return 0.0


def grade(question: Any, response: Any, *, quizzes: str | None = None) -> float | None:
    """Score one response: a float in [0, 1] for a decided answer, ``None`` for one sent to the
    lecturer's review (a short answer the rules cannot decide; the practice report shows "검토 필요").

    Args:
        question: a question id (e.g. ``"01-decode-definition"``) or a keyed question object.
        response: choice id (``"b"``), list of ids (``["a", "c"]``), Korean text, a number or a
            string with a unit (``"150 s"``), or an order (``["A", "C", "B"]`` / ``"A C B"``).
        quizzes: quiz folder (default: see :func:`decodelab.assess.quiz.loading.quizzes_dir`).

    Returns:
        Score in [0, 1] or ``None`` (review); malformed responses score 0.

    Raises:
        KeyError: unknown question id.
    """
    q = get_question(question, quizzes) if isinstance(question, str) else question
    return score_response(q, response)
