"""The quiz widget, driven programmatically: answer, feedback, retry, score, persistence, export."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from decodelab.assess.report import grade_folder
from decodelab.assess.quiz import AnswerStore, load_quizzes, quiz_widget, read_submission
from decodelab.assess.quiz.widget import QuizWidget


@pytest.fixture(autouse=True)
def _private_answers(tmp_path, monkeypatch):
    # never touch ~/.decodelab: every store in these tests lives under tmp_path
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))
    monkeypatch.chdir(tmp_path)


def _widget(tmp_path, nb="01", **kw) -> QuizWidget:
    return quiz_widget(nb, answers_dir=tmp_path / "answers", export_dir=tmp_path, **kw)


def test_answer_feedback_retry_score_and_persistence(tmp_path, capsys):
    w = _widget(tmp_path)
    assert len(w.views) == 17
    assert "점수: <b>0 / 17</b>" in w.score_label.value

    v = w.views["01-decode-definition"]
    v.set_response("c")
    v.submit_button.click()  # the real button path
    assert v.score == 1.0 and "정답입니다" in v.feedback.value
    assert v.input.disabled and not v.retry_button.disabled

    g = w.views["01-greedy"]
    g.set_response("a")
    g.submit()
    assert g.score == 0.0 and "틀렸습니다" in g.feedback.value
    assert "온도가 0보다 큰 샘플링" in g.feedback.value  # why the chosen option is wrong
    g.reveal()
    assert f"{g.labels['c']}. 확률이 가장 높은 토큰 하나를 고른다" in g.feedback.value  # under the label shown
    g.retry()
    assert not g.input.disabled and g.feedback.value == ""
    g.set_response("c")
    g.submit()
    assert g.score == 1.0

    s = w.views["01-check-1"]
    s.set_response(unicodedata.normalize("NFD", " 한 번에 한 토큰씩\n"))
    s.submit()
    assert s.score == 1.0

    n = w.views["01-topk-prob"]
    n.set_response("영점이팔")
    n.submit()
    assert n.score is None and "숫자로 읽을 수 없습니다" in n.feedback.value
    assert n.input.value == "영점이팔" and not n.input.disabled  # the input is kept

    o = w.views["01-phase-order"]
    o.set_response(["A", "B", "C", ""])
    o.submit()
    assert "한 번씩 모두" in o.feedback.value and o.score is None
    o.set_response(["C", "D", "A", "B"])
    o.submit()
    assert o.score == 1.0

    m = w.views["01-temperature"]
    m.set_response(["b"])
    m.submit()
    assert m.score == 0.5 and "부분 점수 0.5" in m.feedback.value

    empty = w.views["01-token-unit"]
    empty.submit()
    assert "비어 있습니다" in empty.feedback.value and not empty.saved

    assert w.score() == (4.5, 17.0)
    assert "점수: <b>4.5 / 17</b> (채점된 문항 5 / 17)" in w.score_label.value

    # saved as given, one atomic file per question
    store = AnswerStore("course", tmp_path / "answers")
    saved = store.load()
    assert saved["01-greedy"]["response"] == "c" and saved["01-greedy"]["attempts"] == 2
    assert saved["01-topk-prob"]["response"] == "영점이팔" and saved["01-topk-prob"]["score"] is None
    assert "01-token-unit" not in saved

    # a fresh widget (kernel restart) shows everything again
    w2 = _widget(tmp_path)
    assert w2.views["01-decode-definition"].input.value == "c"
    assert "정답입니다" in w2.views["01-decode-definition"].feedback.value
    assert w2.views["01-topk-prob"].input.value == "영점이팔"
    assert "숫자로 읽을 수 없습니다" in w2.views["01-topk-prob"].feedback.value
    assert [d.value for d in w2.views["01-phase-order"].input] == ["C", "D", "A", "B"]
    t2 = w2.views["01-temperature"]
    assert {c: box.value for c, box in zip(t2.order, t2.input)} == {"a": False, "b": True, "c": False, "d": False,
                                                                   "e": False}
    assert w2.score() == (4.5, 17.0)

    # the review widget shares the same answers
    review = _widget(tmp_path, "all")
    assert len(review.views) == 102 and review.score() == (4.5, 102.0)
    assert review.views["01-greedy"].score == 1.0

    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # nothing printed outside the widget


def test_export_writes_one_gradable_submission(tmp_path, capsys):
    w = _widget(tmp_path, "03")
    for qid, resp in [("03-added-latency", "43.2 s"), ("03-check-2", "지연이 쌓이니까"), ("03-agent-def", "a")]:
        w.views[qid].set_response(resp)
        w.views[qid].submit()
    w.student.value = ""
    w.export_button.click()
    assert "학번" in w.status.value and "비어 있습니다" in w.status.value
    w.student.value = "2026-001 김하나"
    w.export_button.click()
    assert "제출 파일을 만들었습니다" in w.status.value
    path = tmp_path / "decodelab-course-2026-001_김하나.json"
    sub = read_submission(path)
    assert sub.student_id == "2026-001 김하나"
    assert sub.answers == {"03-added-latency": "43.2 s", "03-check-2": "지연이 쌓이니까", "03-agent-def": "a"}
    (row,) = grade_folder(tmp_path, load_quizzes(notebook="03")).rows
    assert row.total == 2.0
    # the student id is remembered for next time
    assert _widget(tmp_path, "03").student.value == "2026-001 김하나"
    assert capsys.readouterr().out == ""


def test_bad_notebook_id_and_corrupted_answer_file(tmp_path):
    with pytest.raises(ValueError, match="노트북 번호"):
        quiz_widget("08")
    only01 = tmp_path / "only01"
    only01.mkdir()
    (only01 / "01.yaml").write_bytes((Path(__file__).resolve().parents[1] / "quizzes" / "01.yaml").read_bytes())
    with pytest.raises(ValueError, match="노트북 07의 퀴즈 파일"):  # 07 is a valid notebook without quizzes there
        quiz_widget("07", quizzes_dir=only01)
    d = tmp_path / "answers" / "course"
    d.mkdir(parents=True)
    (d / "01-greedy.json").write_text("{broken", encoding="utf-8")
    (d / "01-decode-definition.json").write_text(json.dumps({"question_id": "01-decode-definition", "response": "c"}),
                                                 encoding="utf-8")
    w = _widget(tmp_path)
    # named as the student sees the question (its number), in Korean, never a raw JSON error
    assert "읽지 못한 저장된 답" in w.status.value and f"{_number(w, '01-greedy')}번 문항" in w.status.value
    assert "잘렸거나 손상" in w.status.value and "Expecting" not in w.status.value
    assert w.views["01-decode-definition"].score == 1.0
    assert w.views["01-greedy"].input.value is None


def _number(w: QuizWidget, qid: str) -> int:
    return list(w.views).index(qid) + 1  # the number the student sees in front of the question


def test_an_answer_over_the_submission_limits_is_never_saved(tmp_path):
    w = _widget(tmp_path)
    s = w.views["01-check-1"]
    n = _number(w, "01-check-1")
    s.set_response("한 번에 한 토큰씩")
    s.submit()
    assert s.score == 1.0
    s.retry()
    long_text = "가" * 2001
    s.set_response(long_text)
    s.submit()
    assert f"{n}번 문항" in s.feedback.value and "01-check-1" not in s.feedback.value
    assert "2,001자" in s.feedback.value and "저장하지 않았습니다" in s.feedback.value
    assert s.input.value == long_text and not s.input.disabled  # kept in the box, still editable
    # the earlier valid answer is what stays saved (and still counts)
    assert AnswerStore("course", tmp_path / "answers").get("01-check-1")["response"] == "한 번에 한 토큰씩"
    assert s.saved and s.score == 1.0

    num = w.views["01-topk-prob"]
    pasted = "0.28 " * 500  # 2500 characters pasted into a numeric answer
    num.set_response(pasted)
    num.submit()
    assert f"{_number(w, '01-topk-prob')}번 문항" in num.feedback.value and "숫자와 단위만" in num.feedback.value
    assert num.input.value == pasted and not num.saved
    assert AnswerStore("course", tmp_path / "answers").get("01-topk-prob") is None

    # the student can still hand everything in
    w.student.value = "s1"
    w.export_button.click()
    assert "제출 파일을 만들었습니다" in w.status.value and "주의" not in w.status.value
    assert read_submission(tmp_path / "decodelab-course-s1.json").answers == {"01-check-1": "한 번에 한 토큰씩"}


def test_export_leaves_out_stored_answers_that_would_not_validate(tmp_path):
    # records saved by an older widget that stored anything: they must not block the export
    store = AnswerStore("course", tmp_path / "answers")
    store.save("01-decode-definition", "b", score=1.0)
    store.save("01-check-1", "가" * 2500)
    store.save("01-topk-prob", "1" * 3000)
    store.save("01-greedy", ["x" * 201])  # a list item over 200 characters
    store.save("03-check-2", "나" * 2001)  # a question of another notebook
    store.save("03-agent-def", "a")

    w = _widget(tmp_path)
    w.student.value = "s2"
    w.export_button.click()
    status = w.status.value
    assert "제출 파일을 만들었습니다" in status
    numbers = [_number(w, q) for q in ("01-check-1", "01-topk-prob", "01-greedy")]
    for k in numbers:
        assert f"{k}번 문항" in status
    k3 = [q.id for q in load_quizzes(notebook="03")].index("03-check-2") + 1
    assert f"노트북 03의 {k3}번 문항" in status  # numbered as in notebook 03's own quiz
    assert "01-check-1" not in status and "answers." not in status  # no internal ids
    assert w.left_out == [f"{k}번 문항" for k in sorted(numbers)] + [f"노트북 03의 {k3}번 문항"]
    sub = read_submission(tmp_path / "decodelab-course-s2.json")
    assert sub.answers == {"01-decode-definition": "b", "03-agent-def": "a"}  # every valid answer
    # nothing was deleted: the student can still see and shorten the long answers
    assert len(AnswerStore("course", tmp_path / "answers").load()) == 6
    assert w.views["01-check-1"].input.value == "가" * 2500
    assert f"{numbers[0]}번 문항" in w.views["01-check-1"].feedback.value

    # the store itself reports what it left out, by question id
    store.export("s3", tmp_path)
    assert set(store.left_out) == {"01-check-1", "01-topk-prob", "01-greedy", "03-check-2"}
    assert "2,500자" in store.left_out["01-check-1"]


def test_export_with_only_unusable_answers_names_the_questions(tmp_path):
    AnswerStore("course", tmp_path / "answers").save("01-check-1", "가" * 2500)
    w = _widget(tmp_path)
    w.student.value = "s4"
    w.export_button.click()
    n = _number(w, "01-check-1")
    assert "내보낼 수 있는 답이 없습니다" in w.status.value and f"{n}번 문항" in w.status.value
    assert not (tmp_path / "decodelab-course-s4.json").exists()


def test_export_fits_the_file_size_cap_by_leaving_out_the_longest_answers(tmp_path):
    from decodelab.assess.quiz.submission import MAX_BYTES

    store = AnswerStore("course", tmp_path / "answers")
    ids = [q.id for q in load_quizzes()][:40]
    for i, qid in enumerate(ids):  # each answer is valid alone (2000 characters) but 40 x 8000 bytes is too big
        store.save(qid, "😀" * (2000 - i))
    path = store.export("s5", tmp_path)
    assert path.stat().st_size <= MAX_BYTES
    sub = read_submission(path)
    assert set(sub.answers) | set(store.left_out) == set(ids) and not set(sub.answers) & set(store.left_out)
    assert set(store.left_out) == set(ids[: len(store.left_out)])  # the longest ones went first
    assert 0 < len(store.left_out) < 10 and "크기 한도" in next(iter(store.left_out.values()))


def test_choices_are_shown_in_a_per_student_order_under_positional_labels(tmp_path):
    from decodelab.assess.quiz import get_question, student_view

    a = quiz_widget("01", answers_dir=tmp_path / "a", student_id="2026-00001")
    b = quiz_widget("01", answers_dir=tmp_path / "b", student_id="2026-00002")
    orders_a = {qid: v.order for qid, v in a.views.items() if v.order}
    orders_b = {qid: v.order for qid, v in b.views.items() if v.order}
    assert orders_a and orders_a != orders_b  # students see different orders
    for qid, v in a.views.items():
        if not v.order:
            continue
        q = get_question(qid)
        # the lecturer reproduces exactly what this student saw
        assert [(lab, oid) for lab, oid, _ in student_view(q, "2026-00001")] == [(v.labels[o], o) for o in v.order]
        labels = [v.labels[o] for o in v.order]
        assert labels == (["1", "2", "3", "4", "5", "6", "7", "8"] if q.kind != "ordering" else list("가나다라마바사아"))[:len(labels)]
        html = v.prompt.value
        for lab, oid, text in student_view(q, "2026-00001"):
            assert f"<b>{lab}.</b>" in html
        if q.kind == "single":
            assert [opt for opt in v.input.options] == [(v.labels[o], o) for o in v.order]
    # stable: reopening on the same computer shows the same order, even with another id typed later
    a2 = quiz_widget("01", answers_dir=tmp_path / "a", student_id="someone-else")
    assert {qid: v.order for qid, v in a2.views.items() if v.order} == orders_a
    assert a2.shuffle_key == "2026-00001"


def test_the_submission_carries_the_shuffle_key(tmp_path):
    w = quiz_widget("01", answers_dir=tmp_path / "answers")  # no id yet: a random key, kept
    key = w.shuffle_key
    assert key.startswith("anon-")
    v = w.views["01-greedy"]
    v.set_response(v.order[0])
    v.submit()
    path = w.export("2026-12345", tmp_path)
    data = read_submission(path)
    assert data.shuffle_key == key and data.student_id == "2026-12345"
    assert quiz_widget("01", answers_dir=tmp_path / "answers").shuffle_key == key


def test_lecturer_cli_shows_what_a_student_saw(tmp_path, capsys):
    from decodelab.assess.quiz.cli import quiz_main

    w = quiz_widget("01", answers_dir=tmp_path / "answers", student_id="2026-00001")
    v = w.views["01-greedy"]
    assert quiz_main(["view", "01-greedy", "2026-00001"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [ln.split("]")[0].strip() for ln in lines] == [f"{v.labels[o]}. [{o}" for o in v.order]
    assert quiz_main(["view", "01-nope", "x"]) == 2
    assert "찾을 수 없습니다" in capsys.readouterr().err
