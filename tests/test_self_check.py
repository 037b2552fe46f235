"""A short answer the rules cannot decide is no dead end for a student alone (issue 32, deliver 5):
the practice quiz shows the model answer, the key ideas and the explanation at once, with a
"맞았는지 스스로 확인" row whose choice is saved and changes no score; the lecturer still reviews it.
The written exercises let the student tick the rubric points their answer covers."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

from decodelab.assess import exercises as ex  # noqa: E402
from decodelab.assess.quiz import grading, load_quizzes, quiz_widget  # noqa: E402
from decodelab.assess.quiz.store import AnswerStore  # noqa: E402

SHORTS = [q for q in load_quizzes() if q.kind == "short" and q.concepts]


def _undecided(q) -> str:
    """A right answer with words the rules cannot place: the rules send it to review."""
    text = f"{q.answer} 그런데 고양이는 귀엽다"
    assert grading.grade(q, text) is None, (q.id, grading.short_verdict(q, text) if hasattr(grading, "short_verdict") else "")
    return text


def test_an_undecided_practice_answer_shows_the_model_answer_and_a_self_check(tmp_path):
    q = SHORTS[0]
    w = quiz_widget(q.notebook, answers_dir=tmp_path / "answers")
    v = w.views[q.id]
    v.set_response(_undecided(q))
    v.submit()
    assert v.review and v.score is None
    body = v.feedback.value
    assert "맞았는지 스스로 확인" in body and "강사의 검토를 기다립니다" not in body
    assert "모범 답안" in body and q.answer[:10] in body
    assert all(" / ".join(g)[:8] in body for g in q.concepts)  # every key idea is listed
    assert v.self_row.layout.display is None and v.box.children[-1] is v.self_row  # the 맞았다 / 틀렸다 row shows
    earned, total = w.score()
    v.self_right.click()
    rec = AnswerStore("course", tmp_path / "answers").get(q.id)
    assert rec["self_check"] == "right" and rec["score"] is None  # recorded; the lecturer still reviews it
    assert w.score() == (earned, total) and "스스로 확인: 맞음 1개" in w.score_label.value
    assert "맞았다" in v.self_note.value
    v.self_wrong.click()
    assert AnswerStore("course", tmp_path / "answers").get(q.id)["self_check"] == "wrong"
    assert "다시 풀기" in v.self_note.value

    again = quiz_widget(q.notebook, answers_dir=tmp_path / "answers").views[q.id]  # reopened
    assert again.review and again.self_check == "wrong" and "틀렸다" in again.self_note.value
    again.retry()
    assert again.self_row.layout.display == "none" and again.self_note.value == ""
    again.set_response(q.answer)
    again.submit()  # now right by the rules: no self-check, the record starts over
    assert again.score == 1.0 and again.self_row.layout.display == "none"
    assert "self_check" not in AnswerStore("course", tmp_path / "answers").get(q.id)


def test_a_decided_answer_has_no_self_check_row(tmp_path):
    q = SHORTS[0]
    v = quiz_widget(q.notebook, answers_dir=tmp_path / "answers").views[q.id]
    v.set_response(q.answer)
    v.submit()
    assert v.score == 1.0 and v.self_row is None  # the row is built only for an undecided answer
    assert v.self_row not in v.box.children
    v.judge_self(True)  # ignored: nothing to judge
    assert "self_check" not in AnswerStore("course", tmp_path / "answers").get(q.id)


def test_a_written_exercise_lets_the_student_tick_the_rubric(tmp_path):
    wid = next(i for i, e in ex.load_exercises().items() if isinstance(e, ex.Written))
    view = ex.WrittenView(wid, answers_dir=tmp_path / "answers")
    view.text.value = "내 설명입니다."
    view.submit()
    assert "맞았는지 스스로 확인" in view.feedback.value and len(view.points) == len(view.ex.rubric)
    view.points[0].value = True
    rec = AnswerStore("course", tmp_path / "answers").get(wid)
    assert rec["self_check"] == [0] and rec["response"] == "내 설명입니다."
    assert f"1 / {len(view.points)}" in view.tally.value
    again = ex.WrittenView(wid, answers_dir=tmp_path / "answers")  # reopened: the ticks are kept
    assert [p.value for p in again.points] == [True] + [False] * (len(again.points) - 1)


def test_a_new_written_answer_starts_the_ticks_over(tmp_path):
    wid = next(i for i, e in ex.load_exercises().items() if isinstance(e, ex.Written))
    view = ex.WrittenView(wid, answers_dir=tmp_path / "answers")
    view.text.value = "첫 설명."
    view.submit()
    view.points[-1].value = True
    view.text.value = "고쳐 쓴 설명."
    view.submit()
    assert not any(p.value for p in view.points)
    assert "self_check" not in AnswerStore("course", tmp_path / "answers").get(wid)
