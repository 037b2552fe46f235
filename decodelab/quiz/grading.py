"""Grading one response: parse it (with Korean messages for bad input), score it in [0, 1], explain.

Rules per kind (the score is multiplied by the question's ``points`` in the gradebook):

- ``single``: 1 if the chosen id is the answer, else 0.
- ``multiple``: ``max(0, (right picks - wrong picks) / number of right options)``; 1 only for the
  exact set, so ticking every option is penalized by each wrong one (e.g. right = {a, b, c}: {a, b}
  -> 2/3, {a, b, c, d} -> 2/3, {a, d} -> 0).
- ``short``: :func:`grade_short`: 1 if the answer is an accepted form; 0 if it states a listed
  misconception (``None`` if it also states every concept); 1 if it states every required concept
  group (stems, negation-aware); otherwise ``None``: the lecturer reviews it (never marked wrong by
  default).
- ``numeric``: 1 if ``|value - answer| <= tolerance`` (value converted to the question's unit), else 0.
- ``ordering``: 1 for exactly the right order, else 0.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from itertools import islice, product
from typing import Any

from .normalize import ResponseError, normalize_text, parse_quantity, strip_korean_ending

__all__ = ["GradeResult", "REVIEW", "answer_text", "check", "grade", "grade_short", "misconception_of",
           "parse_response", "score_response", "states"]

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


# ---------------------------------------------------------------------------------------------
# Negation guard of the keyword fallback
# ---------------------------------------------------------------------------------------------
# Korean negates a predicate after it ("쌓이지 않는다", "대역폭이 아니다", "늘어날 수 없다",
# "누적되는 건 아니다") or, in the short form, right before it ("안 쌓인다", "못 늘어난다"). A keyword
# hit is *negated* when such a marker sits in its scope (below); a keyword group counts only when it
# has a hit that is not negated. Markers elsewhere in the answer do not matter, so correct answers
# such as "사라지지 않고 쌓이기 때문", "끝없이 쌓여서", "무시할 수 없을 만큼 쌓여서" still score 1.

_NEG_ROOTS = ("않", "아니", "아닌", "아님", "아냐", "아닙", "없", "못")
"""Post-predicate negation roots (folded Hangul syllables)."""
_PRE_NEG = ("안", "못")
"""Short-form negation written before the predicate."""
_DEPENDENT = ("수", "게", "것", "건", "거", "일", "적", "리", "때문", "탓", "필요")
"""Dependent nouns between a predicate and its negation: "늘어날 수 없다", "쌓이는 건 아니다"."""
_POST_WINDOW = 6
"""A root this many syllables after a keyword, in the same word, negates it ("누적되는것은아니다")."""
_NEGATED_ENDING = re.compile(r"(?<!수)(?:않(?!고)|아니|아닌|아님|아냐|아닙|없(?!이)|못)[가-힣]{0,3}$")
"""An answer whose main (last) predicate is negated: "...늘어나지 않으니까", "...그런 건 아니다".
Not "...할 수 없다" (a modal: "무시할 수 없다"), "않고" (a connective) or "없이" (an adverb)."""


def _fold_words(text: str) -> list[str]:
    """The answer split at whitespace and punctuation, each word folded with ``normalize_text``
    (so ``"".join(words)`` is the folded answer). Invisible format characters do not split."""
    s = unicodedata.normalize("NFKC", text).casefold()
    words, cur = [], []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch.isspace() or cat.startswith("P") or cat in ("Cc", "Zs", "Zl", "Zp"):
            if cur:
                words.append(normalize_text("".join(cur)))
                cur = []
        else:
            cur.append(ch)
    if cur:
        words.append(normalize_text("".join(cur)))
    return [w for w in words if w]


def _starts_negation(word: str) -> bool:
    return word.startswith(_NEG_ROOTS) or word in _PRE_NEG


def _hit_negated(words: list[str], starts: list[int], s: int, e: int) -> bool:
    """Is the keyword occurrence ``folded[s:e]`` negated? (see the comment above ``_NEG_ROOTS``)"""
    i = bisect.bisect_right(starts, s) - 1  # word of the first syllable
    j = bisect.bisect_right(starts, e - 1) - 1  # word of the last syllable
    before = words[i][: s - starts[i]]
    after = words[j][e - starts[j]:]
    # in the same word: "쌓이지않아서", "대역폭이아니다", "누적안되니까", "안쌓이니까"
    if any(0 <= after.find(r) < _POST_WINDOW for r in _NEG_ROOTS) or after.startswith(_PRE_NEG):
        return True
    if before.endswith(_PRE_NEG) or (not before and i > 0 and words[i - 1] in _PRE_NEG):
        return True
    nxt = words[j + 1] if j + 1 < len(words) else ""
    nxt2 = words[j + 2] if j + 2 < len(words) else ""
    if _starts_negation(nxt):  # "쌓이지 않는다", "대역폭이 아니다", "누적 안 되니까"
        return True
    # "늘어날 수 없다", "쌓이는 건 아니다", "누적 때문은 아니다"; "하나씩 만들지 않고" (V-지 않다)
    bridge = (nxt.startswith(_DEPENDENT) and len(nxt) <= 3) or nxt.endswith(("지", "지는", "지도", "지를", "지가"))
    return bool(nxt2) and bridge and nxt2.startswith(_NEG_ROOTS)


_CONTRAST = ("아니라", "아니고", "않고", "말고")
"""Contrast markers ("X가 아니라 Y", "X하지 않고 Y"): a misconception named right before one is
denied, not stated ("병렬로 한꺼번에 만들지 않고 하나씩")."""
_CONTRAST_WINDOW = 12


class _Folded:
    """An answer folded once: its words, where each starts, and the whole folded string."""

    def __init__(self, text: str):
        self.words = _fold_words(text)
        self.text = "".join(self.words)
        self.starts = []
        pos = 0
        for w in self.words:
            self.starts.append(pos)
            pos += len(w)

    def hits(self, group: list[str], contrast: bool = False) -> list[tuple[int, int]]:
        """Spans ``(start, end)`` of the alternatives of ``group`` that are not negated."""
        out = []
        for k in group:
            k = normalize_text(k)
            at = self.text.find(k)
            while at >= 0:
                e = at + len(k)
                denied = contrast and any(m in self.text[e:e + _CONTRAST_WINDOW] for m in _CONTRAST)
                if not denied and not _hit_negated(self.words, self.starts, at, e):
                    out.append((at, e))
                at = self.text.find(k, at + 1)
        return out

    def stated(self, groups: list[list[str]], within: int | None = None, contrast: bool = False,
               exclude: list[tuple[int, int]] = ()) -> list[tuple[int, int]] | None:
        """The hits that state every group (see :func:`states`), or None. A hit lying inside a span
        of ``exclude`` does not count (the "하나씩" of the misconception "단어 하나씩")."""
        spans = []
        for g in groups:
            hs = [(s, e) for s, e in self.hits(g, contrast)
                  if not any(a <= s and e <= b for a, b in exclude)]
            if not hs:
                return None
            spans.append(hs)
        if within is None or len(spans) == 1:
            return [h for hs in spans for h in hs]
        for combo in islice(product(*spans), 4096):  # one hit per group, all in one short span
            if max(e for _, e in combo) - min(s for s, _ in combo) <= within:
                return list(combo)
        return None


def states(groups: list[list[str]], text: str, within: int | None = None, *, contrast: bool = False) -> bool:
    """Does ``text`` state every group of ``groups``?

    Each group lists alternative stems; a group is stated when one alternative occurs in the folded
    text (:func:`~decodelab.quiz.normalize.normalize_text`) and that occurrence is not negated (see
    :func:`_hit_negated`; with ``contrast``, also not followed closely by "아니라", "않고", ...).
    With ``within`` (folded characters) the hits of all groups must lie in one span that long
    (``"GPU가 커져서"``: a subject close to its predicate). ``concepts`` use no span; ``misconceptions``
    use their ``within`` and ``contrast``.
    """
    f = _Folded(text)
    return bool(f.text) and f.stated(groups, within, contrast) is not None


def grade_short(question, text: str) -> float | None:
    """Grade a short Korean answer: 1.0 right, 0.0 wrong, ``None`` for the lecturer's review.

    Rules (texts folded by :func:`~decodelab.quiz.normalize.normalize_text`, so spacing, NFD
    Hangul and punctuation never matter; stems are matched inside words, so particles and endings
    do not either):

    1. the answer is ``question.answer`` or one of ``question.accepted`` (optionally followed by one
       polite ending such as ``입니다``) -> 1.0 (the schema rejects an accepted form that states a
       misconception);
    2. the answer states one of ``question.misconceptions`` (every group of its ``match`` hit, not
       negated or denied by "아니라"/"않고", within its span) -> 0.0; but if it *also* states every
       concept group outside the misconception's words (a mixed answer such as "CPU보다 GPU")
       -> ``None``, the lecturer decides;
    3. every group of ``question.concepts`` is hit, not negated, and the answer's main (last)
       predicate is not negated -> 1.0;
    4. anything else -> ``None``: the rules cannot decide, the lecturer reviews it.

    Args:
        question: a :class:`~decodelab.quiz.schema.ShortAnswer`.
        text: the student's answer.

    Returns:
        1.0, 0.0 or None.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"grade_short: 답은 str여야 합니다 (받은 값의 형식: {type(text).__name__})")
    f = _Folded(text)
    if not f.text:
        return None
    forms = {normalize_text(x) for x in [question.answer, *question.accepted]}
    if f.text in forms or strip_korean_ending(f.text) in forms:
        return 1.0
    wrong: list[tuple[int, int]] = []
    for m in question.misconceptions:
        wrong += f.stated(m.match, m.within, contrast=True) or []
    right = (bool(question.concepts) and not _NEGATED_ENDING.search(strip_korean_ending(f.text))
             and f.stated(question.concepts, exclude=wrong) is not None)
    if wrong:
        return None if right else 0.0
    return 1.0 if right else None


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
        score = grade_short(q, value)
        m = misconception_of(q, value) if score == 0.0 else None
        if m is not None:
            feedback.append(m.explanation)
        elif score is None:
            feedback.append("이 답은 규칙으로 판단할 수 없어 강사가 검토합니다.")
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
    from .loading import get_question

    q = get_question(question, quizzes) if isinstance(question, str) else question
    return score_response(q, response)
