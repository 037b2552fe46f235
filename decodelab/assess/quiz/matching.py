"""The short-answer matcher: where a Korean answer states a stem, whether that statement is negated,
and what in the answer no rule accounts for; and the verdict on a short answer built on it
(:func:`short_verdict`).

Below :mod:`decodelab.assess.quiz.schema` (which checks accepted forms against misconceptions with it, and
whose :class:`~decodelab.assess.quiz.schema.ShortAnswer` scores with :func:`short_verdict`); it imports only
:mod:`decodelab.assess.quiz.normalize`.

Texts are folded with :func:`~decodelab.assess.quiz.normalize.normalize_text` word by word, so spacing,
NFD Hangul, case and punctuation never matter; stems are found inside words, so particles and
endings do not either.

Negation. Korean negates a predicate after it ("쌓이지 않는다", "대역폭이 아니다", "늘어날 수
없다", "누적되는 건 아니다") or, in the short form, right before it ("안 쌓인다", "못 늘어난다"). A
hit of a stem is *negated* when such a marker sits in its scope (:meth:`Folded.negated`); markers
elsewhere in the answer do not matter, so "사라지지 않고 쌓이기 때문" states "쌓".
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from itertools import islice, product

from .normalize import normalize_text, strip_korean_ending

__all__ = ["CONTRAST", "FUNCTION_SYLLABLES", "Folded", "NEGATED_ENDING", "PARTICLES", "SHORT_REASONS", "grade_short",
           "misconception_of", "short_verdict", "states"]

_NEG_ROOTS = ("않", "아니", "아닌", "아님", "아냐", "아닙", "없", "못")
"""Post-predicate negation roots (folded Hangul syllables)."""
_PRE_NEG = ("안", "못")
"""Short-form negation written before the predicate."""
_DEPENDENT = ("수", "게", "것", "건", "거", "일", "적", "리", "때문", "탓", "필요")
"""Dependent nouns between a predicate and its negation: "늘어날 수 없다", "쌓이는 건 아니다"."""
_POST_WINDOW = 6
"""A root this many syllables after a hit, in the same word, negates it ("누적되는것은아니다")."""
NEGATED_ENDING = re.compile(r"(?<!수)(?:않(?!고)|아니|아닌|아님|아냐|아닙|없(?!이)|못)[가-힣]{0,3}$")
"""An answer whose main (last) predicate is negated: "...늘어나지 않으니까", "...그런 건 아니다".
Not "...할 수 없다" (a modal: "무시할 수 없다"), "않고" (a connective) or "없이" (an adverb)."""

CONTRAST = ("아니라", "아니고", "않고", "말고")
"""Contrast markers ("X가 아니라 Y", "X하지 않고 Y"): a stem named right before one is denied, not
stated ("병렬로 한꺼번에 만들지 않고 하나씩")."""
_CONTRAST_WINDOW = 12
_DEGREE = ("오래", "길게", "많이", "크게", "너무", "그다지", "별로", "거의", "꽤", "한참", "조금도는")
"""Degree words a negation may target instead of the stem after them ("오래 기다리지 않는다")."""

PARTICLES = ("으로", "에서", "까지", "부터", "이", "가", "을", "를", "은", "는", "의", "에", "로", "와", "과", "도", "만")
"""Case particles that may follow a noun inside a span ("단어를 하나씩" is as close as "단어 하나씩")."""

FUNCTION_SYLLABLES = frozenset(
    "이가을를은는의에서로으와과도만까지부터요다니해하한함했할될되된됨돼됐기게고며면임음입습죠네어아여져진짐라던데때문"
    "거것건걸수있등및즉곧더잘나든랑께야합인린집")
"""Syllables of particles, endings and dependent nouns ("을", "니까", "때문", "수 있다"): text made
only of these states nothing by itself. Negation ("아니", "않", "없", "못", "안") is never
function text (see :meth:`Folded.unexplained`)."""

_NOMINAL = ("임", "음", "짐", "됨", "함", "기")
"""Nominal endings of a bare keyword ("쌓임", "곱해짐")."""
_LIST_SEPARATORS = re.compile(r"[,，、/;·ㆍ]")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|（[^）]*）")


def fold_words(text: str) -> list[str]:
    """``text`` split at whitespace and punctuation, each word folded with ``normalize_text``
    (so ``"".join(words)`` is the folded text). Invisible format characters do not split."""
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


class Folded:
    """An answer folded once: ``words``, where each starts (``starts``), the whole folded ``text``.

    Offsets (``s``, ``e``) below index ``text``.
    """

    def __init__(self, text: str):
        self.raw = text
        self.words = fold_words(text)
        self.text = "".join(self.words)
        self.starts: list[int] = []
        pos = 0
        for w in self.words:
            self.starts.append(pos)
            pos += len(w)

    # -- where ------------------------------------------------------------------------------

    def word_of(self, pos: int) -> int:
        """Index of the word that holds character ``pos``."""
        return bisect.bisect_right(self.starts, pos) - 1

    def occurrences(self, group: list[str]) -> list[tuple[int, int]]:
        """Every span ``(s, e)`` of every alternative of ``group``, negated or not."""
        out = []
        for k in group:
            k = normalize_text(k)
            at = self.text.find(k)
            while at >= 0:
                out.append((at, at + len(k)))
                at = self.text.find(k, at + 1)
        return out

    # -- negation ---------------------------------------------------------------------------

    def negated(self, s: int, e: int, *, direct: bool = False) -> bool:
        """Is the occurrence ``text[s:e]`` negated? (see the module docstring). With ``direct``, only
        a negation of this word itself counts: not one of the predicate after it ("시간이 길지
        않다" negates "길", not "시간")."""
        words, starts = self.words, self.starts
        i, j = self.word_of(s), self.word_of(e - 1)
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
        bridge = (nxt.startswith(_DEPENDENT) and len(nxt) <= 3) or (
            not direct and nxt.endswith(("지", "지는", "지도", "지를", "지가")))
        return bool(nxt2) and bridge and nxt2.startswith(_NEG_ROOTS)

    def contrasted(self, e: int) -> bool:
        """Does a contrast marker ("아니라", "않고", ...) follow closely after offset ``e``?"""
        return any(m in self.text[e:e + _CONTRAST_WINDOW] for m in CONTRAST)

    def negation_end(self, e: int) -> int:
        """End of the word holding the first negation or contrast marker at or after ``e`` (within a
        few words), else ``e``: the part of the answer that denies what ends at ``e``."""
        window = self.text[e:e + _CONTRAST_WINDOW + _POST_WINDOW]
        at = [window.find(r) for r in (*_NEG_ROOTS, *CONTRAST)]
        at = [a for a in at if a >= 0]
        if not at:
            j = self.word_of(max(0, e - 1))
            nxt = j + 1
            if nxt < len(self.words) and self.words[nxt] in _PRE_NEG:
                return self.starts[nxt] + len(self.words[nxt])
            return e
        pos = e + min(at)
        w = self.word_of(pos)
        return self.starts[w] + len(self.words[w])

    # -- statements -------------------------------------------------------------------------

    def hits(self, group: list[str], contrast: bool = False) -> list[tuple[int, int]]:
        """Spans of the alternatives of ``group`` that are not negated (with ``contrast``: nor
        followed closely by a contrast marker)."""
        return [(s, e) for s, e in self.occurrences(group)
                if not (contrast and self.contrasted(e)) and not self.negated(s, e)]

    def denied(self, group: list[str]) -> list[tuple[int, int]]:
        """Spans of the alternatives of ``group`` that are negated or contrasted away, each
        extended to the end of the words that deny it ("한꺼번에 만들지 않고")."""
        out = []
        for s, e in self.occurrences(group):
            if self.contrasted(e) or self.negated(s, e):
                out.append((s, max(e, self.negation_end(e))))
        return out

    def _span(self, combo) -> int:
        """Length of the text a combination of hits covers, not counting a case particle right
        after a hit that another hit follows ("단어를하나씩" spans as "단어하나씩")."""
        combo = sorted(combo)
        span = max(e for _, e in combo) - combo[0][0]
        for (s1, e1), (s2, _) in zip(combo, combo[1:]):
            gap = self.text[e1:s2]
            p = next((p for p in PARTICLES if gap.startswith(p)), "")
            span -= len(p)
        return span

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
            if self._span(combo) <= within:
                return list(combo)
        return None

    def negated_group(self, groups: list[list[str]]) -> bool:
        """Is some group of ``groups`` named only in negated form ("메모리 대역폭 때문이 아니다",
        "하나씩 만들지 않는다")?"""
        def flat_no(s, e):  # negated, and not through a degree word ("오래 기다리지 않는다": not long)
            i = self.word_of(s)
            before = self.words[i][: s - self.starts[i]] or (self.words[i - 1] if i > 0 else "")
            return self.negated(s, e, direct=True) and not before.endswith(_DEGREE)

        return any(self.occurrences(g) and all(flat_no(s, e) for s, e in self.occurrences(g)) for g in groups)

    # -- what no rule explains --------------------------------------------------------------

    def unexplained(self, covered: list[tuple[int, int]]) -> list[str]:
        """The runs of the answer outside ``covered`` spans that are more than particles and
        endings (:data:`FUNCTION_SYLLABLES`), and every negation outside them: what the rules did
        not read, so it may contradict the rest."""
        mask = [False] * len(self.text)
        for s, e in covered:
            for k in range(max(0, s), min(e, len(mask))):
                mask[k] = True
        out = []
        for w, start in zip(self.words, self.starts):
            run = ""
            for k, ch in enumerate(w):
                if mask[start + k]:
                    if run:
                        out.append(run)
                    run = ""
                else:
                    run += ch
            if run:
                out.append(run)
        bad = []
        for run in out:
            negation = run in _PRE_NEG or any(r in run for r in _NEG_ROOTS)
            if negation or any(ch not in FUNCTION_SYLLABLES for ch in run):
                bad.append(run)
        return bad

    def is_keyword_list(self, concepts: list[list[str]]) -> bool:
        """Is the answer a list of keywords rather than a statement? Either three or more items
        parted by commas or slashes, each a single word; or four or more words that each name a
        concept, bare (no particle or ending but a nominal one such as "쌓임"), making up at least
        three quarters of the words. A gloss in brackets ("메모리(HBM) 대역폭") is not an item."""
        plain = _BRACKETS.sub(" ", self.raw)
        items = [i for i in _LIST_SEPARATORS.split(plain) if normalize_text(i)]
        if len(items) >= 3 and all(len(fold_words(i)) == 1 for i in items):
            return True
        words = fold_words(plain)
        stems = sorted({normalize_text(k) for g in concepts for k in g}, key=len, reverse=True)
        # written without spaces ("지연누적쌓임곱해짐"): four or more concept stems and nothing else
        text = "".join(words)
        mask, spans = [False] * len(text), []
        for k in stems:
            at = text.find(k) if k else -1
            while at >= 0:
                spans.append((at, at + len(k)))
                mask[at:at + len(k)] = [True] * len(k)
                at = text.find(k, at + 1)
        runs, end = 0, -1
        for s, e in sorted(spans):  # occurrences that do not overlap
            if s >= end:
                runs, end = runs + 1, e
            else:
                end = max(end, e)
        rest = [ch for ch, m in zip(text, mask) if not m]
        if runs >= 4 and all(ch in _NOMINAL for ch in rest):
            return True
        if len(words) < 4:
            return False
        bare = 0
        for w in words:
            rest = w
            hit = False
            for k in stems:
                if k and k in rest:
                    rest = rest.replace(k, "")
                    hit = True
            if hit and (rest == "" or rest in _NOMINAL):
                bare += 1
        return bare >= 4 and bare >= 0.75 * len(words)


def states(groups: list[list[str]], text: str, within: int | None = None, *, contrast: bool = False) -> bool:
    """Does ``text`` state every group of ``groups``?

    Each group lists alternative stems; a group is stated when one alternative occurs in the folded
    text and that occurrence is not negated (with ``contrast``, also not followed closely by
    "아니라", "않고", ...). With ``within`` (folded characters; a case particle between two hits does
    not count) the hits of all groups must lie in one span that long (``"GPU가 커져서"``: a subject
    close to its predicate). ``concepts`` use no span; ``misconceptions`` use their ``within`` and
    ``contrast``.
    """
    f = Folded(text)
    return bool(f.text) and f.stated(groups, within, contrast) is not None


# --------------------------------------------------------------------------------------------
# The short-answer verdict (ShortAnswer.score)
# --------------------------------------------------------------------------------------------


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
    read. In order (texts folded by :func:`~decodelab.assess.quiz.normalize.normalize_text`; stems found
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
       (:meth:`~decodelab.assess.quiz.matching.Folded.unexplained`) -> ``(None, "unexplained")``;
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
        question: a :class:`~decodelab.assess.quiz.schema.ShortAnswer`.
        text: the student's answer.

    Returns:
        1.0, 0.0 or None.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    return short_verdict(question, text)[0]


def misconception_of(question, text: str):
    """The first :class:`~decodelab.assess.quiz.schema.Misconception` of ``question`` that ``text``
    states, or ``None`` (for feedback: its ``explanation`` says why the answer is wrong)."""
    return next((m for m in question.misconceptions if states(m.match, text, m.within, contrast=True)), None)
