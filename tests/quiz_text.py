"""What a student sees of each quiz question, and what gives its answer away (for the leak tests)."""

from __future__ import annotations

import math
import re

from decodelab.assess.quiz.grading import answer_text
from decodelab.assess.quiz.normalize import normalize_text

UNIT_WORDS = {
    "s": ["s", "초"], "ms": ["ms", "밀리초"], "µs": ["µs", "μs", "us", "마이크로초"], "GB": ["GB"], "MB": ["MB"],
    "토큰": ["토큰", "개"], "개": ["개", "토큰", "번"], "tokens/s": ["tokens/s", "토큰/초", "토큰"], "배": ["배", "x"],
    "FLOP/byte": ["FLOP/byte", "FLOP/B"], "": [],
}


def visible_texts(q) -> list[str]:
    """The texts a student sees of question ``q``: prompt, options and their explanations, ordering
    items, the explanation, the answer shown after grading, the misconception feedback."""
    out = [q.prompt, q.explanation]
    for c in getattr(q, "choices", None) or []:
        out += [c.text, c.explanation or ""]
    for i in getattr(q, "items", None) or []:
        out.append(i.text)
    if q.kind == "short":
        out += [q.answer] + [m.explanation for m in q.misconceptions]
    if q.kind == "numeric":
        out.append(answer_text(q))
    return [t for t in out if t]


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    return f"{round(x, digits - 1 - int(math.floor(math.log10(abs(x))))):g}"


def numeric_patterns(q) -> list[re.Pattern]:
    """Ways the answer of numeric ``q`` would be written in another text, followed by its unit (a
    unitless answer: the number alone). An integer answer as it is, when 20 or more (smaller counts
    such as "4개" are everywhere); any other answer to 2 and 3 significant digits, each with at least
    two significant digits ("0.26", "0.262"; "0.4" alone says nothing)."""
    a = q.answer
    if float(a).is_integer():
        values = {f"{int(a)}"} if abs(a) >= 20 else set()
    else:
        values = {v for v in (_sig(a, 2), _sig(a, 3)) if len(v.replace("-", "").replace(".", "").lstrip("0")) >= 2}
    out = []
    for v in sorted(values):
        num = re.escape(v)
        if q.unit:
            units = "|".join(re.escape(u) for u in UNIT_WORDS.get(q.unit, [q.unit]))
            out.append(re.compile(rf"(?<![\d.,])(?:{num})(?![\d])\s*(?:{units})"))
        else:
            out.append(re.compile(rf"(?<![\d.,]){num}(?![\d])"))
    return out


def folded(texts) -> str:
    return "\u0000".join(normalize_text(t) for t in texts)
