"""No quiz item gives another item's answer away.

A student who answers the practice quizzes in order sees every earlier item's prompt, options,
explanation and feedback. None of them may print an accepted answer of a short item, the answer of a
numeric item, a keyed option, or a sentence of another item's explanation.
"""

from __future__ import annotations

import re

import pytest

from decodelab.assess.quiz import load_quizzes
from decodelab.assess.quiz.normalize import normalize_text
from quiz_text import numeric_patterns, visible_texts

QUESTIONS = load_quizzes()
BY_ID = {q.id: q for q in QUESTIONS}
NGRAM = 12
"""A keyed option shares no run of this many folded characters with another item's text."""
TERMS = ["첫 토큰까지의 시간(TTFT)", "토큰 간 지연(ITL)", "토큰당 출력 시간(TPOT)", "전체 지연(E2E)"]
"""Glossary terms with their English names: shared by design, not a leak."""


def _others(q):
    return [o for o in QUESTIONS if o.id != q.id]


def _strip_terms(text: str) -> str:
    for t in TERMS:
        text = text.replace(t, " ").replace(t.split("(")[0], " ")
    return text


FOLDED = {q.id: "\u0000".join(normalize_text(_strip_terms(t)) for t in visible_texts(q)) for q in QUESTIONS}


def _folded(o) -> str:
    return FOLDED[o.id]


def _keyed_options(q) -> list[str]:
    if q.kind == "single":
        return [c.text for c in q.choices if c.id == q.answer]
    if q.kind == "multiple":
        return [c.text for c in q.choices if c.id in q.answer]
    return []


def test_no_accepted_short_answer_is_printed_elsewhere():
    found = []
    for q in QUESTIONS:
        if q.kind != "short":
            continue
        for form in [q.answer, *q.accepted]:
            found += [(q.id, form, o.id) for o in _others(q) if normalize_text(form) in _folded(o)]
    assert found == []


def test_no_numeric_answer_is_printed_elsewhere():
    found = []
    for q in QUESTIONS:
        if q.kind != "numeric":
            continue
        for pat in numeric_patterns(q):
            found += [(q.id, o.id, m.group()) for o in _others(q) for t in visible_texts(o) for m in [pat.search(t)] if m]
    assert found == []


def test_no_keyed_option_is_printed_elsewhere():
    found = []
    for q in QUESTIONS:
        for text in _keyed_options(q):
            f = normalize_text(_strip_terms(text))
            grams = {f[i:i + NGRAM] for i in range(len(f) - NGRAM + 1)}
            for o in _others(q):
                hit = sorted(g for g in grams if g in _folded(o))
                if hit:
                    found.append((q.id, o.id, hit[0]))
    assert found == []


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+", text) if len(normalize_text(s)) >= 20]


def test_no_explanation_sentence_is_printed_elsewhere():
    found = []
    for q in QUESTIONS:
        for s in _sentences(q.explanation):
            found += [(q.id, o.id, s) for o in _others(q) if normalize_text(s) in _folded(o)]
    assert found == []


@pytest.mark.parametrize(("where", "whose", "text"), [
    ("03-check-2", "03-added-latency", None),
    ("02-decode-step-time", "02-kv-bytes-context", None),
    ("02-kv-bytes-context", "02-kv-bytes-per-token", None),
    ("05-split-roles", "05-split-nuance", "층 단위"),
    ("05-check-3", "05-gpu-versatile", "새로 나오는 기법"),
    ("05-check-3", "05-gpu-versatile", "학습과 추론"),
    ("02-concurrency-cost", "01-check-1", "하나씩 차례로"),
    ("03-example-order", "01-check-1", "한 토큰씩"),
    ("02-ridge-point", "02-decode-bottleneck-term", "메모리 대역폭"),
    ("02-decode-step-time", "02-decode-bottleneck-term", "메모리 대역폭"),
])
def test_the_leaks_found_in_review_are_gone(where, whose, text):
    seen = " ".join(visible_texts(BY_ID[where]))
    if text is None:  # a numeric answer
        assert not any(p.search(seen) for p in numeric_patterns(BY_ID[whose]))
    else:
        assert normalize_text(text) not in normalize_text(seen)


def test_the_leak_checks_can_fail():
    q = BY_ID["03-added-latency"]
    assert any(p.search(f"작업 하나에서 {q.answer:g}초가 됩니다") for p in numeric_patterns(q))
    assert not any(p.search(f"작업 하나에서 {q.answer + 1:g}초가 됩니다") for p in numeric_patterns(q))
    kv = BY_ID["02-kv-bytes-per-token"]
    assert any(p.search("토큰 하나의 KV 캐시가 약 0.26 MB") for p in numeric_patterns(kv))


def _exercise_texts(e) -> list[str]:
    """What a student sees of a notebook exercise before answering it or with its feedback: prompts,
    choices, hints, goals, the revealed why. Not a written exercise's model answer, which is shown
    only once the student has written their own."""
    out = []
    for name in ("prompt", "why", "goal", "hint", "success"):
        v = getattr(e, name, None)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out += [x for x in v if isinstance(x, str)]
    out += [c.text for c in getattr(e, "choices", None) or []]
    return out


def test_no_quiz_answer_is_printed_in_a_notebook_exercise():
    from decodelab.assess.exercises import load_exercises

    texts = {eid: _exercise_texts(e) for eid, e in load_exercises().items()}
    found = []
    for q in QUESTIONS:
        if q.kind == "short":
            for form in [q.answer, *q.accepted]:
                found += [(q.id, form, eid) for eid, ts in texts.items()
                          if any(normalize_text(form) in normalize_text(t) for t in ts)]
        if q.kind == "numeric":
            found += [(q.id, eid, m.group()) for p in numeric_patterns(q) for eid, ts in texts.items()
                      for t in ts for m in [p.search(t)] if m]
    assert found == []
