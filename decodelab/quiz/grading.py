"""Grading one response: parse it (with Korean messages for bad input), score it in [0, 1], explain.

Rules per kind (the score is multiplied by the question's ``points`` in the gradebook):

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

import re
from dataclasses import dataclass, field
from typing import Any

from .loading import get_question
from .matching import NEGATED_ENDING, Folded, states
from .normalize import ResponseError, normalize_text, parse_quantity, strip_korean_ending

__all__ = ["GradeResult", "REVIEW", "SHORT_REASONS", "answer_text", "check", "grade", "grade_short",
           "misconception_of", "parse_response", "score_response", "short_verdict"]

REVIEW = "검토 필요"
"""What the gradebook shows for an answer sent to the lecturer's review (score ``None``)."""

MAX_TEXT = 2000
_SEPARATORS = re.compile(r"[\s,;/>→·\-]+")


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


def _choice_ids(q) -> list[str]:
    return [c.id for c in (getattr(q, "choices", None) or [])]


def _item_ids(q) -> list[str]:
    return [i.id for i in (getattr(q, "items", None) or [])]


def _split_ids(response: Any, valid: list[str], upper: bool) -> list[str]:
    if isinstance(response, str):
        s = response.strip()
        s = s.upper() if upper else s.lower()
        parts = [p for p in _SEPARATORS.split(s) if p]
        if len(parts) == 1 and len(parts[0]) > 1 and all(ch in valid for ch in parts[0]):
            parts = list(parts[0])
        return parts
    if isinstance(response, (list, tuple)) and all(isinstance(x, str) for x in response):
        return [x.strip().upper() if upper else x.strip().lower() for x in response]
    raise ResponseError("선택한 항목의 id 목록을 주세요 (예: ['a', 'c']).")


def parse_response(q, response: Any) -> Any:
    """Check and normalize a response for question ``q`` (keyed or student view).

    Returns:
        single: a choice id (``str``); multiple: a sorted list of ids; short: the raw ``str``;
        numeric: a ``float`` in the question's unit; ordering: a list of item ids.

    Raises:
        ResponseError: a Korean message saying what to change (empty answer, unknown choice, not a
            number, wrong unit, an ordering that does not use every item once).
    """
    kind = q.kind
    if response is None or (isinstance(response, str) and not response.strip()):
        raise ResponseError("답이 비어 있습니다: 답을 입력하거나 고르세요.")
    if kind == "single":
        ids = _choice_ids(q)
        if isinstance(response, (list, tuple)) and len(response) == 1:
            response = response[0]
        if not isinstance(response, str) or response.strip().lower() not in ids:
            raise ResponseError(f"선택지 {', '.join(ids)} 중 하나를 고르세요.")
        return response.strip().lower()
    if kind == "multiple":
        ids = _choice_ids(q)
        picked = _split_ids(response, ids, upper=False)
        bad = [p for p in picked if p not in ids]
        if bad or not picked:
            raise ResponseError(f"선택지 {', '.join(ids)} 중에서 하나 이상 고르세요 (알 수 없는 선택: {bad}).")
        return sorted(set(picked))
    if kind == "short":
        if not isinstance(response, str):
            raise ResponseError("글로 답하세요 (문자열).")
        if len(response) > MAX_TEXT:
            raise ResponseError(f"답이 너무 깁니다 ({len(response)}자): {MAX_TEXT}자 이내로 짧게 쓰세요.")
        if not normalize_text(response):
            raise ResponseError("답이 비어 있습니다: 글자로 답하세요.")
        return response
    if kind == "numeric":
        return parse_quantity(response, q.unit or "")
    if kind == "ordering":
        ids = _item_ids(q)
        order = _split_ids(response, ids, upper=True)
        if sorted(order) != sorted(ids):
            raise ResponseError(f"항목 {', '.join(sorted(ids))}를 한 번씩 모두 써서 순서를 정하세요 (예: {' '.join(ids)}).")
        return order
    raise ResponseError(f"알 수 없는 문항 종류 {kind!r}")  # pragma: no cover - the schema forbids it


SHORT_REASONS = {
    "accepted": "정답으로 등록된 답과 같습니다.",
    "concepts": "핵심 개념을 모두 말했고, 규칙이 읽지 못한 말이 없습니다.",
    "misconception": "등록된 오개념을 말했습니다.",
    "negation": "핵심 개념을 부정했습니다.",
    "mixed": "핵심 개념과 오개념을 함께 말해 강사가 검토합니다.",
    "list": "낱말을 늘어놓았을 뿐 문장으로 설명하지 않아 강사가 검토합니다.",
    "unexplained": "규칙이 판단하지 못한 말이 있어 강사가 검토합니다.",
    "undecided": "이 답은 규칙으로 판단할 수 없어 강사가 검토합니다.",
}
"""Why :func:`short_verdict` decided as it did (key -> the Korean line the feedback shows)."""


def short_verdict(question, text: str) -> tuple[float | None, str]:
    """Grade a short Korean answer and say why: ``(score, reason)`` with ``score`` 1.0, 0.0 or
    ``None`` (the lecturer's review) and ``reason`` a key of :data:`SHORT_REASONS`.

    Full credit needs an answer that states the concept and contradicts nothing the rules cannot
    read. In order (texts folded by :func:`~decodelab.quiz.normalize.normalize_text`; stems found
    inside words, so particles, endings and spacing never matter):

    1. the answer is ``question.answer`` or one of ``question.accepted`` (optionally followed by a
       polite ending such as ``입니다``) -> ``(1.0, "accepted")``;
    2. it states one of ``question.misconceptions`` (every group of its ``match`` hit, not negated
       nor denied by "아니라"/"않고", within its span; a case particle between two hits does not
       count) -> ``(0.0, "misconception")``, or ``(None, "mixed")`` when it also states every
       concept outside the misconception's words ("CPU보다 GPU") and the misconception is not
       ``decisive`` (a wrong cause: "메모리가 부족해서 시간이 늘어난다" -> 0);
    3. it names a concept group only in negated form ("메모리 대역폭 때문이 아니다") ->
       ``(0.0, "negation")``;
    4. it states every group of ``question.concepts`` (not negated, main predicate not negated):
       a keyword list rather than a statement -> ``(None, "list")``; words outside the concept
       hits, the question's ``neutral`` stems, denied misconceptions and particles/endings
       (:meth:`~decodelab.quiz.matching.Folded.unexplained`) -> ``(None, "unexplained")``;
       otherwise -> ``(1.0, "concepts")``;
    5. anything else -> ``(None, "undecided")``.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"grade_short: 답은 str여야 합니다 (받은 값의 형식: {type(text).__name__})")
    f = Folded(text)
    if not f.text:
        return None, "undecided"
    forms = {normalize_text(x) for x in [question.answer, *question.accepted]}
    if f.text in forms or strip_korean_ending(f.text) in forms:
        return 1.0, "accepted"
    wrong: list[tuple[int, int]] = []
    decisive = False
    for m in question.misconceptions:
        spans = f.stated(m.match, m.within, contrast=True) or []
        wrong += spans
        decisive = decisive or bool(spans and m.decisive)
    concepts = list(question.concepts)
    hits = f.stated(concepts, exclude=wrong) if concepts else None
    right = hits is not None and not NEGATED_ENDING.search(strip_korean_ending(f.text))
    if wrong:
        return (None, "mixed") if right and not decisive else (0.0, "misconception")
    if concepts and f.negated_group(concepts):
        return 0.0, "negation"
    if not right:
        return None, "undecided"
    if f.is_keyword_list(concepts):
        return None, "list"
    covered = [h for g in concepts for h in f.hits(g)]
    covered += [o for k in getattr(question, "neutral", ()) for o in f.occurrences([k])]
    covered += [d for m in question.misconceptions for g in m.match for d in f.denied(g)]
    if f.unexplained(covered):
        return None, "unexplained"
    return 1.0, "concepts"


def grade_short(question, text: str) -> float | None:
    """Grade a short Korean answer: 1.0 right, 0.0 wrong, ``None`` for the lecturer's review.

    The score of :func:`short_verdict` (which also says why; the rules are listed there): full
    credit only for an accepted form, or for an answer that states every concept and contradicts
    nothing; 0 for a listed misconception or a negated concept; review for the rest (keyword
    lists, words the rules cannot read, mixed answers).

    Args:
        question: a :class:`~decodelab.quiz.schema.ShortAnswer`.
        text: the student's answer.

    Returns:
        1.0, 0.0 or None.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    return short_verdict(question, text)[0]


def misconception_of(question, text: str):
    """The first :class:`~decodelab.quiz.schema.Misconception` of ``question`` that ``text``
    states, or ``None`` (for feedback: its ``explanation`` says why the answer is wrong)."""
    return next((m for m in question.misconceptions if states(m.match, text, m.within, contrast=True)), None)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _label(labels: dict[str, str] | None, cid: str) -> str:
    return labels.get(cid, cid) if labels else cid


def answer_text(q, *, labels: dict[str, str] | None = None) -> str:
    """The right answer of a keyed question, readable by a student (Korean); ``labels`` as in
    :func:`check` (choices and items under the labels the student saw)."""
    if q.kind == "single":
        c = next(c for c in q.choices if c.id == q.answer)
        return f"{_label(labels, c.id)}. {c.text}"
    if q.kind == "multiple":
        picked = sorted((_label(labels, c.id), c.text) for c in q.choices if c.id in q.answer)
        return " / ".join(f"{lab}. {text}" for lab, text in picked)
    if q.kind == "short":
        return q.answer
    if q.kind == "numeric":
        tol = f" (허용 오차 ±{_fmt(q.tolerance)})" if q.tolerance else ""
        return f"{_fmt(q.answer)} {q.unit}".rstrip() + tol
    if q.kind == "ordering":
        text = {i.id: i.text for i in q.items}
        return " → ".join(f"{_label(labels, a)}. {text[a]}" for a in q.answer)
    return str(q.answer)  # pragma: no cover


def check(q, response: Any, *, labels: dict[str, str] | None = None) -> GradeResult:
    """Grade ``response`` against keyed question ``q`` and explain.

    Args:
        q: a keyed question.
        response: as for :func:`grade`.
        labels: choice/item id -> the label the student saw (the widget shows shuffled choices
            under positional labels, see :func:`decodelab.quiz.shuffle.choice_order`); the feedback
            and ``answer`` use these labels. Default: the ids themselves.

    Returns:
        :class:`GradeResult`; ``score`` is ``None`` for a short answer sent to review.

    Raises:
        ResponseError: the response cannot be graded as given (see :func:`parse_response`); the
            caller keeps the student's input and shows the message.
    """
    value = parse_response(q, response)
    feedback: list[str] = []
    if q.kind == "single":
        score = 1.0 if value == q.answer else 0.0
        if not score:
            c = next(c for c in q.choices if c.id == value)
            feedback.append(f"{_label(labels, c.id)}: {c.explanation}")
    elif q.kind == "multiple":
        right = set(q.answer)
        picked = set(value)
        hits, wrong = len(picked & right), len(picked - right)
        score = max(0.0, (hits - wrong) / len(right))
        for c in q.choices:
            if c.id in picked - right:
                feedback.append(f"{_label(labels, c.id)} (고르지 말아야 할 것): {c.explanation}")
        missed = sorted(_label(labels, m) for m in right - picked)
        if missed:
            feedback.append(f"빠뜨린 정답: {', '.join(missed)}")
    elif q.kind == "short":
        score, reason = short_verdict(q, value)
        m = misconception_of(q, value) if reason == "misconception" else None
        if m is not None:
            feedback.append(m.explanation)
        elif score != 1.0:
            feedback.append(SHORT_REASONS[reason])
    elif q.kind == "numeric":
        diff = abs(value - q.answer)
        score = 1.0 if diff <= q.tolerance + 1e-9 * max(1.0, abs(q.answer)) else 0.0
        if not score:
            feedback.append(f"입력한 값 {_fmt(value)} {q.unit}".rstrip() + f"은(는) 정답과 {_fmt(diff)} {q.unit}".rstrip() + " 차이가 납니다.")
    else:  # ordering
        score = 1.0 if list(value) == list(q.answer) else 0.0
    return GradeResult(score=score, correct=score == 1.0, explanation=q.explanation, feedback=feedback,
                       answer=answer_text(q, labels=labels))


def score_response(q, response: Any) -> float | None:
    """Score in [0, 1], or ``None`` for a short answer sent to the lecturer's review; a response that
    cannot be parsed scores 0 (never raises for bad input)."""
    try:
        return check(q, response).score
    except ResponseError:
        return 0.0


def grade(question: Any, response: Any, *, quizzes: str | None = None) -> float | None:
    """Score one response: a float in [0, 1] for a decided answer, ``None`` for one sent to the
    lecturer's review (a short answer the rules cannot decide; the gradebook shows "검토 필요").

    Args:
        question: a question id (e.g. ``"01-decode-definition"``) or a keyed question object.
        response: choice id (``"b"``), list of ids (``["a", "c"]``), Korean text, a number or a
            string with a unit (``"150 s"``), or an order (``["A", "C", "B"]`` / ``"A C B"``).
        quizzes: quiz folder (default: see :func:`decodelab.quiz.loading.quizzes_dir`).

    Returns:
        Score in [0, 1] or ``None`` (review); malformed responses score 0.

    Raises:
        KeyError: unknown question id.
    """
    q = get_question(question, quizzes) if isinstance(question, str) else question
    return score_response(q, response)
