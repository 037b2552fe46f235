"""Structural properties of the quiz keys: nothing about a key's letter, length, size or order gives it away.

Blind rules a student might try (always "a", always the longest option, always {a, b}, sort the
ordering ids) must do no better than chance on the shipped quizzes. Also: every wrong option is
explained, and no question points at a text the student does not have.

Run as a script (``python tests/test_quiz_keys.py``) to print the statistics.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from decodelab.assess.quiz import load_quizzes
from conftest import question_texts

MAX_LETTER_SHARE = 0.35
"""No letter may key more than this share of the single-choice questions."""
MAX_LONGEST_SHARE = 0.35
"""The keyed option may be the (strictly) longest in at most this share of single-choice questions
(chance with four options: 1/4)."""
MAX_SAME_SET_SHARE = 0.25
"""No one key set (e.g. {a, b}) may answer more than this share of the multiple-choice questions."""

# Phrases that send the student to a text outside this repository.
OUTSIDE_TEXT = ["시드 글", "시드글", "첫 글", "첫글", "두 번째 글", "두번째 글", "둘째 글", "기사", "입력 자료", "원문",
                "글쓴이", "글에 따르면", "글이 전한", "글의 전망", "글의 확인문제", "글이 말하", "글은 말하"]


def _length(text: str) -> int:
    return len(re.sub(r"\s+", "", text))


def key_stats(questions=None) -> dict:
    """Statistics of the keys: letter counts, longest-key share, multiple-choice key sets."""
    qs = list(load_quizzes() if questions is None else questions)
    single = [q for q in qs if q.kind == "single"]
    multiple = [q for q in qs if q.kind == "multiple"]
    ordering = [q for q in qs if q.kind == "ordering"]
    letters = Counter(q.answer for q in single)
    longest = 0
    for q in single:
        lengths = {c.id: _length(c.text) for c in q.choices}
        top = max(lengths.values())
        if lengths[q.answer] == top and sum(1 for v in lengths.values() if v == top) == 1:
            longest += 1
    sets = Counter("".join(sorted(q.answer)) for q in multiple)
    sizes = Counter(len(q.answer) for q in multiple)
    longest_keyed_multi = 0
    chance_multi = 0.0
    for q in multiple:
        lengths = {c.id: _length(c.text) for c in q.choices}
        top = max(lengths, key=lambda k: lengths[k])
        longest_keyed_multi += top in q.answer
        chance_multi += len(q.answer) / len(q.choices)
    sorted_orderings = [q.id for q in ordering if list(q.answer) == sorted(q.answer)]
    return {
        "single": len(single),
        "letters": dict(sorted(letters.items())),
        "longest_key": longest,
        "multiple": len(multiple),
        "multiple_sets": dict(sets.most_common()),
        "multiple_sizes": dict(sorted(sizes.items())),
        "multiple_longest_keyed": longest_keyed_multi,
        "multiple_longest_chance": round(chance_multi, 2),
        "ordering": len(ordering),
        "ordering_sorted": sorted_orderings,
    }


@pytest.fixture(scope="module")
def stats():
    return key_stats()


def test_single_choice_letters_are_balanced(stats):
    n = stats["single"]
    assert n >= 20
    for letter, count in stats["letters"].items():
        assert count <= MAX_LETTER_SHARE * n, f"정답 {letter}가 {count}/{n}번입니다 (최대 {MAX_LETTER_SHARE:.0%})"
    assert set("abcd") <= set(stats["letters"]), f"정답이 a-d에 고루 있지 않습니다: {stats['letters']}"


def test_keyed_option_is_not_systematically_the_longest(stats):
    n = stats["single"]
    assert stats["longest_key"] <= MAX_LONGEST_SHARE * n, (
        f"정답 선택지가 가장 긴 문항이 {stats['longest_key']}/{n}개입니다 (최대 {MAX_LONGEST_SHARE:.0%})")
    # multiple choice: the longest option is keyed no more often than chance allows (+ 2 questions)
    assert stats["multiple_longest_keyed"] <= stats["multiple_longest_chance"] + 2


def test_multiple_choice_keys_vary_in_size_and_position(stats):
    n = stats["multiple"]
    assert n >= 8
    assert len(stats["multiple_sizes"]) >= 3, f"정답 개수가 다양하지 않습니다: {stats['multiple_sizes']}"
    for key, count in stats["multiple_sets"].items():
        assert count <= MAX_SAME_SET_SHARE * n, f"정답 묶음 {{{','.join(key)}}}가 {count}/{n}번입니다"
    prefix = sum(c for k, c in stats["multiple_sets"].items() if k == "abcdefgh"[: len(k)])
    assert prefix <= 0.4 * n, f"정답이 앞에서부터 연속한 묶음({{a,b}}, {{a,b,c}} ...)인 문항이 {prefix}/{n}개입니다"
    with_a = sum(c for k, c in stats["multiple_sets"].items() if "a" in k)
    assert with_a <= 0.7 * n, f"정답 묶음에 a가 든 문항이 {with_a}/{n}개입니다"
    questions = [q for q in load_quizzes() if q.kind == "multiple"]
    with_last = sum(1 for q in questions if q.choices[-1].id in q.answer)
    assert with_last >= 0.25 * n, f"마지막 선택지가 정답인 문항이 {with_last}/{n}개뿐입니다"


def test_ordering_answers_are_not_the_sorted_ids(stats):
    assert stats["ordering"] >= 3
    assert stats["ordering_sorted"] == [], f"정답이 id 알파벳 순서인 순서 문항: {stats['ordering_sorted']}"


def test_ordering_answers_are_not_the_file_order():
    for q in load_quizzes():
        if q.kind == "ordering":
            assert list(q.answer) != [i.id for i in q.items], q.id


def test_every_wrong_option_is_explained():
    for q in load_quizzes():
        if q.kind in ("single", "multiple"):
            keyed = {q.answer} if q.kind == "single" else set(q.answer)
            for c in q.choices:
                if c.id not in keyed:
                    assert c.explanation and len(c.explanation) >= 10, (q.id, c.id)
        if q.kind == "short":
            for m in q.misconceptions:
                assert len(m.explanation) >= 10, (q.id, m.match)


def test_no_option_text_repeats_within_a_question():
    for q in load_quizzes():
        if q.kind in ("single", "multiple"):
            texts = [re.sub(r"\s+", "", c.text) for c in q.choices]
            assert len(texts) == len(set(texts)), q.id


_texts = question_texts  # one walker for both quiz-text checks (tests/conftest.py)


def test_no_question_points_at_a_text_the_student_does_not_have():
    found = []
    for q in load_quizzes():
        for t in _texts(q):
            found += [(q.id, p) for p in OUTSIDE_TEXT if p in t]
        for s in q.source:
            assert s.seed is None, f"{q.id}: 출처는 노트북 절이나 facts/ 파일이어야 합니다 (seed 말고)"
    assert found == [], f"학생에게 없는 글을 가리키는 문항: {found}"


def test_question_ids_do_not_reveal_their_own_answer():
    """Ids are seen by the student (the widget's boxes, saved answers, the submission file), so an id
    must never hold (a folded form of) its own answer."""
    from decodelab.assess.quiz import normalize_text
    from decodelab.assess.quiz.normalize import strip_korean_ending

    checked = 0
    for q in load_quizzes():
        folded_id = normalize_text(q.id)  # "01-gpu-processor" -> "01gpuprocessor"
        name_parts = q.id.split("-")[1:]
        if q.kind == "short":
            for form in [q.answer, *q.accepted]:
                for f in {normalize_text(form), strip_korean_ending(normalize_text(form))}:
                    assert f not in folded_id, (q.id, form)
                    checked += 1
        elif q.kind == "numeric":
            for form in {f"{q.answer:g}", f"{q.answer:g}".replace(".", "")}:
                assert not re.search(rf"(?<!\d){re.escape(form)}(?!\d)", "-".join(name_parts)), (q.id, form)
        elif q.kind in ("single", "multiple"):
            ids = [q.answer] if q.kind == "single" else q.answer
            assert not any(a in name_parts for a in ids), q.id  # e.g. "05-check-b" would give away b
            assert "".join(sorted(ids)) not in name_parts, q.id
        else:  # ordering
            assert "".join(q.answer).lower() not in folded_id, q.id
    assert checked >= 25  # 5 short questions, every accepted form


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(key_stats(), ensure_ascii=False, indent=1))
