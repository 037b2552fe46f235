"""decodelab.assess.exercises: definitions (schema errors), predictions, written answers, tasks, persistence,
export and the lecturer's gradebook columns."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import quizzes_with_exercises

from decodelab.assess import exercises as ex
from decodelab.assess.exercises import views
from decodelab.assess.report import grade_folder, report_csv, rubrics_markdown
from decodelab.assess.quiz import AnswerStore, read_submission

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def quizzes(tmp_path, monkeypatch) -> Path:
    """A copy of the real quiz folder with one exercise file, and a private answers folder."""
    return quizzes_with_exercises(tmp_path, monkeypatch)


# --------------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------------


def test_definitions_load_with_their_fields(quizzes):
    every = ex.load_exercises()
    assert list(every) == ["01-predict-kv-step", "01-predict-curve", "01-written-decode-definition",
                           "01-task-low-rate", "01-task-band", "01-task-mode"]
    p = every["01-predict-kv-step"]
    assert (p.kind, p.unit, p.choices) == ("number", "ms", None)
    w = every["01-written-decode-definition"]
    assert len(w.rubric) == 2 and w.model_answer.startswith("디코드 단계는")
    t = every["01-task-band"]
    assert (t.check.op, t.check.value) == ("between", [10.0, 20.0])


def test_no_exercise_folder_is_no_exercises(tmp_path):
    q = tmp_path / "q"
    shutil.copytree(REPO / "quizzes", q, ignore=shutil.ignore_patterns("exercises"))
    assert ex.load_exercises(q) == {}
    with pytest.raises(KeyError, match="quizzes/exercises/03.yaml"):
        ex.get_exercise("03-predict-x", q)


BROKEN = {
    # (yaml text, [(question label, field, message fragment), ...])
    "bad-kind": ('notebook: "02"\npredictions:\n  - {id: 02-p, prompt: "질문입니다 길게", kind: numbr, why: "이유입니다 길게"}\n',
                 [("02-p", "kind", "")]),
    "choice-no-choices": ('notebook: "02"\npredictions:\n  - {id: 02-p, prompt: "질문입니다 길게", kind: choice, why: "이유입니다 길게"}\n',
                          [("02-p", "choices", "2개 이상")]),
    "unit-on-choice": ('notebook: "02"\npredictions:\n  - {id: 02-p, prompt: "질문입니다 길게", kind: choice, unit: ms, '
                       'choices: [{id: a, text: x}, {id: b, text: y}], why: "이유입니다 길게"}\n', [("02-p", "unit", "number일 때만")]),
    "one-rubric-point": ('notebook: "02"\nwritten:\n  - {id: 02-w, prompt: "설명하세요 길게", rubric: ["하나"], model_answer: "모범 답안입니다"}\n',
                         [("02-w", "rubric", "")]),
    "between-one-value": ('notebook: "02"\ntasks:\n  - {id: 02-t, goal: "목표입니다 길게", check: {op: between, value: 3}, success: 좋아, hint: 힌트}\n',
                          [("02-t", "check.value", "[하한, 상한]")]),
    "between-reversed": ('notebook: "02"\ntasks:\n  - {id: 02-t, goal: "목표입니다 길게", check: {op: between, value: [5, 1]}, success: 좋아, hint: 힌트}\n',
                         [("02-t", "check.value", "하한")]),
    "lt-text": ('notebook: "02"\ntasks:\n  - {id: 02-t, goal: "목표입니다 길게", check: {op: "<", value: abc}, success: 좋아, hint: 힌트}\n',
                [("02-t", "check.value", "숫자")]),
    "unknown-op": ('notebook: "02"\ntasks:\n  - {id: 02-t, goal: "목표입니다 길게", check: {op: "=~", value: 1}, success: 좋아, hint: 힌트}\n',
                   [("02-t", "check.op", "")]),
    "typo-field": ('notebook: "02"\nwritten:\n  - {id: 02-w, prompt: "설명하세요 길게", rubric: [a, b], model_answr: "모범 답안입니다"}\n',
                   [("02-w", "model_answr", "알 수 없는 필드"), ("02-w", "model_answer", "필수 필드")]),
    "wrong-prefix": ('notebook: "02"\nwritten:\n  - {id: 03-w, prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n',
                     [("03-w", "id", "notebook '02'로 시작")]),
    "bad-id": ('notebook: "02"\nwritten:\n  - {id: "02_W", prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n',
               [("02_W", "id", "형식은 'NN-이름'")]),
    "id-newline": ('notebook: "02"\nwritten:\n  - {id: "02-w\\n", prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n',
                   []),  # stripped by the schema: "02-w" is fine
    "dup-in-file": ('notebook: "02"\nwritten:\n  - {id: 02-w, prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n'
                    'tasks:\n  - {id: 02-w, goal: "목표입니다 길게", check: {op: ">", value: 1}, success: 좋아, hint: 힌트}\n',
                    [("02-w", "id", "같은 id")]),
    "top-typo": ('notebook: "02"\npredictons: []\n', [(None, "predictons", "알 수 없는 필드")]),
    "bad-notebook": ('notebook: "09"\n', [(None, "notebook", "01, 02, 03")]),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_schema_errors_are_korean_and_name_file_id_field(tmp_path, case):
    text, expected = BROKEN[case]
    q = tmp_path / "q"
    shutil.copytree(REPO / "quizzes", q, ignore=shutil.ignore_patterns("exercises"))
    (q / "exercises").mkdir()
    (q / "exercises" / "02.yaml").write_text(text, encoding="utf-8")
    if not expected:
        assert list(ex.load_exercises(q)) == ["02-w"]
        return
    with pytest.raises(ex.ExerciseError) as info:
        ex.load_exercises(q)
    probs = info.value.problems
    assert all(p.file == "exercises/02.yaml" for p in probs)
    for label, field, fragment in expected:
        hits = [p for p in probs if p.question == label and p.field and p.field.startswith(field)]
        assert hits, (case, [str(p) for p in probs])
        assert any(fragment in p.message for p in hits), (case, [str(p) for p in probs])
    text = str(info.value)
    assert text.startswith("연습 파일 오류:") and "exercises/02.yaml" in text
    assert "Input should" not in text and "Field required" not in text  # Korean, not pydantic's English


def test_ids_are_unique_across_quizzes_and_exercises(tmp_path):
    q = tmp_path / "q"
    shutil.copytree(REPO / "quizzes", q, ignore=shutil.ignore_patterns("exercises"))
    (q / "exercises").mkdir()
    (q / "exercises" / "01.yaml").write_text(
        'notebook: "01"\nwritten:\n  - {id: 01-greedy, prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n',
        encoding="utf-8")
    (q / "exercises" / "02.yaml").write_text(
        'notebook: "02"\nwritten:\n  - {id: 02-w, prompt: "설명하세요 길게", rubric: [a, b], model_answer: "모범 답안입니다"}\n',
        encoding="utf-8")
    (q / "exercises" / "notes.yaml").write_text("x: 1\n", encoding="utf-8")
    with pytest.raises(ex.ExerciseError) as info:
        ex.load_exercises(q)
    msgs = [str(p) for p in info.value.problems]
    assert any("01-greedy" in m and "01.yaml에도 같은 id" in m for m in msgs), msgs
    assert any("notes.yaml" in m and "01.yaml ~ 07.yaml" in m for m in msgs), msgs


def test_notebook_07_is_allowed(tmp_path):
    q = tmp_path / "q"
    shutil.copytree(REPO / "quizzes", q, ignore=shutil.ignore_patterns("exercises"))
    (q / "exercises").mkdir()
    (q / "exercises" / "07.yaml").write_text(
        'notebook: "07"\npredictions:\n  - {id: 07-predict-ttft, prompt: "서버의 TTFT는 몇 ms일까요?", kind: number, unit: ms, '
        'why: "프롬프트 길이에 비례합니다."}\n', encoding="utf-8")
    assert list(ex.load_exercises(q)) == ["07-predict-ttft"]


# --------------------------------------------------------------------------------------------
# check(): op/value variants
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op, ref, value, expected", [
    ("<", 0.3, 0.29, True), ("<", 0.3, 0.3, False), ("<=", 0.3, 0.3, True), ("<=", 0.3, 0.31, False),
    (">", 2, 2.5, True), (">", 2, 2, False), (">=", 2, 2, True), (">=", 2, 1.99, False),
    ("==", 4, 4.0, True), ("==", 4, 4 + 1e-12, True), ("==", 4, 4.01, False), ("==", "greedy", "greedy", True),
    ("==", "greedy", "Greedy", False), ("!=", 4, 5, True), ("!=", 4, 4, False), ("==", 1, True, False),
    ("between", [10, 20], 10, True), ("between", [10, 20], 20, True), ("between", [10, 20], 20.001, False),
    ("between", [10, 20], 9.99, False), ("in", ["greedy", "top-k"], "top-k", True), ("in", ["greedy", "top-k"], "top-p", False),
    ("in", [1, 2, 4], 4.0, True), ("in", [1, 2, 4], 3, False),
])
def test_evaluate_ops(op, ref, value, expected):
    assert ex.evaluate(ex.TaskCheck(op=op, value=ref), value) is expected


def test_evaluate_needs_a_number_for_comparisons():
    import numpy as np

    assert ex.evaluate(ex.TaskCheck(op="<", value=0.3), np.float32(0.2)) is True  # numpy scalars are numbers
    with pytest.raises(TypeError, match="숫자"):
        ex.evaluate(ex.TaskCheck(op="<", value=0.3), "0.2")
    with pytest.raises(TypeError, match="숫자"):
        ex.evaluate(ex.TaskCheck(op="<", value=0.3), True)


def test_check_records_and_shows_success_or_hint(quizzes, tmp_path):
    ok, body = ex.check_record("01-task-low-rate", 0.5)
    assert ok is False and "아직 목표에 이르지 못했습니다" in body and "초안 모델이 대상 모델과 얼마나" in body
    assert "0.3" in body  # the goal is restated, the solution is not given
    assert ex.check("01-task-low-rate", 0.21) is True
    rec = AnswerStore("course").get("01-task-low-rate")
    assert rec["kind"] == "task" and rec["passed"] is True and rec["response"] == 0.21 and rec["attempts"] == 2
    with pytest.raises(ValueError, match="check에 쓸 수 없습니다"):
        ex.check("01-written-decode-definition", 1)
    with pytest.raises(KeyError, match="01-task-missing"):
        ex.check("01-task-missing", 1)


# --------------------------------------------------------------------------------------------
# predict / reveal / written
# --------------------------------------------------------------------------------------------


def test_predict_then_reveal(quizzes):
    v = ex.PredictView("01-predict-kv-step")
    v.input.value = "약 1,200 ms"
    assert v.commit() == 1200.0 and "예측을 저장했습니다" in v.feedback.value
    v.input.value = "12.5"
    v.button.click()  # the real button path
    assert AnswerStore("course").get("01-predict-kv-step")["response"] == 12.5
    v.input.value = "열두"
    v.button.click()
    assert "숫자로 읽을 수 없습니다" in v.feedback.value  # Korean, inside the widget; nothing saved
    assert AnswerStore("course").get("01-predict-kv-step")["response"] == 12.5

    rec, body = ex.reveal_record("01-predict-kv-step", 3.1)
    assert rec["response"] == 12.5 and rec["revealed"] == 3.1
    assert "내 예측: <b>12.5 ms</b>" in body and "실제 값: 3.1 ms" in body and "거의 일정합니다" in body
    assert "실제의 4배" in body  # 12.5 / 3.1 = 4.03
    # after the reveal the prediction is locked
    v2 = ex.PredictView("01-predict-kv-step")
    assert v2.input.value == "12.5" and v2.input.disabled and "바꿀 수 없습니다" in v2.feedback.value
    with pytest.raises(ValueError, match="바꿀 수 없습니다"):
        v2.commit()
    with pytest.raises(TypeError, match="숫자"):
        ex.reveal("01-predict-kv-step", "3.1")
    with pytest.raises(ValueError, match="선택지 id"):
        ex.reveal("01-predict-curve", "c")


def test_reveal_without_a_prediction_says_so_and_records_the_value(quizzes):
    rec, body = ex.reveal_record("01-predict-curve", "b")
    assert "예측을 확정하지 않았습니다" in body and "위치에 따라 늘어난다" in body
    assert rec["response"] is None and rec["revealed"] == "b"


def test_choice_prediction(quizzes):
    v = ex.PredictView("01-predict-curve")
    with pytest.raises(ValueError, match="비어 있습니다"):
        v.commit()
    v.input.value = "a"
    assert v.commit() == "a"
    _, body = ex.reveal_record("01-predict-curve", "b")
    assert "내 예측: <b>a. 평평하다</b>" in body and "예측과 다릅니다" in body


def test_written_saves_text_then_shows_model_answer_and_rubric(quizzes):
    w = ex.WrittenView("01-written-decode-definition")
    assert "모범 답안" not in w.feedback.value  # not before submitting
    w.button.click()
    assert "비어 있습니다" in w.feedback.value
    w.text.value = "x" * 2001
    w.button.click()
    assert "너무 깁니다" in w.feedback.value and AnswerStore("course").get("01-written-decode-definition") is None
    w.text.value = "토큰을 하나씩, 앞의 토큰을 보고 만든다"
    w.button.click()
    fb = w.feedback.value
    assert "모범 답안" in fb and "방금 만든 토큰을 입력으로" in fb
    assert "토큰을 하나씩 만든다" in fb and "방금 만든 토큰을 다음 입력으로 쓴다" in fb  # the rubric
    rec = AnswerStore("course").get("01-written-decode-definition")
    assert rec["kind"] == "written" and rec["score"] is None  # never scored
    w2 = ex.WrittenView("01-written-decode-definition")
    assert w2.text.value == "토큰을 하나씩, 앞의 토큰을 보고 만든다" and "모범 답안" in w2.feedback.value


def test_public_functions_display_and_return(quizzes, monkeypatch):
    shown = []
    monkeypatch.setattr(views, "_display", shown.append)
    assert ex.predict("01-predict-kv-step") is None
    assert ex.written("01-written-decode-definition") is None
    assert ex.reveal("01-predict-kv-step", 3.0) is None
    assert ex.check("01-task-band", 15) is True
    import ipywidgets as W

    assert [type(x) for x in shown] == [W.VBox, W.VBox, W.VBox, W.HTML]
    assert "decodelab-exercise-01-predict-kv-step" in shown[0]._dom_classes
    assert "decodelab-result-01-predict-kv-step" in shown[2]._dom_classes


def _visible(gate) -> str:
    """The text a student sees in a result widget (hidden parts left out)."""
    parts = [gate.notice.value, gate.result.value]
    if gate.skip_button.layout.display != "none":
        parts.append(gate.skip_button.description)
    return " ".join(parts)


def test_run_all_first_keeps_the_value_hidden_until_the_prediction(quizzes):
    # Run All: the prediction widget shows, then the result cell runs before any prediction
    v = ex.PredictView("01-predict-kv-step")
    gate = ex.RevealView("01-predict-kv-step")
    assert gate.state == "waiting"
    gate.set_value(3.1)
    assert gate.state == "hidden" and gate.held.layout.display == "none"
    seen = _visible(gate)
    assert "3.1" not in seen and "결과를 숨겨 두었습니다" in seen and "예측 없이 보기" in seen
    assert AnswerStore("course").get("01-predict-kv-step") is None  # nothing recorded, nothing closed
    assert not v.input.disabled
    # the student now predicts: the value opens below at once, and the prediction locks
    v.input.value = "12.5"
    v.button.click()
    assert gate.state == "open" and gate.held.layout.display is None
    assert "내 예측: <b>12.5 ms</b>" in gate.result.value and "실제 값: 3.1 ms" in gate.result.value
    assert gate.skip_button.layout.display == "none" and gate.notice.value == ""
    assert v.input.disabled and "바꿀 수 없습니다" in v.feedback.value
    rec = AnswerStore("course").get("01-predict-kv-step")
    assert (rec["response"], rec["revealed"]) == (12.5, 3.1)
    # a rerun of the result cell opens at once (the prediction stays)
    again = ex.RevealView("01-predict-kv-step")
    again.set_value(3.3)
    assert again.state == "open" and "내 예측: <b>12.5 ms</b>" in again.result.value


def test_skipping_opens_the_value_and_closes_the_prediction(quizzes):
    v = ex.PredictView("01-predict-curve")
    gate = ex.RevealView("01-predict-curve")
    gate.set_value("b")
    assert gate.state == "hidden" and "위치에 따라 늘어난다" not in _visible(gate)
    gate.prediction_committed()  # nothing was committed: a stray call changes nothing
    assert gate.state == "hidden"
    gate.skip_button.click()
    assert gate.state == "open" and "예측을 확정하지 않았습니다" in gate.result.value
    assert "위치에 따라 늘어난다" in gate.result.value
    assert v.input.disabled and "예측 없이 결과를 보았으므로" in v.feedback.value
    rec = AnswerStore("course").get("01-predict-curve")
    assert rec["response"] is None and rec["revealed"] == "b"
    # reopened later (a new kernel): the result shows at once, the prediction stays closed
    assert ex.PredictView("01-predict-curve").input.disabled
    later = ex.RevealView("01-predict-curve")
    later.set_value("b")
    assert later.state == "open"
    gate.skip()  # already open: stays open, records nothing new
    assert gate.state == "open" and AnswerStore("course").get("01-predict-curve")["revealed"] == "b"


def test_a_prediction_committed_before_the_result_cell_opens_it_at_once(quizzes):
    v = ex.PredictView("01-predict-kv-step")
    v.input.value = "2"
    v.commit()
    gate = ex.RevealView("01-predict-kv-step")
    gate.set_value(3.0)
    assert gate.state == "open" and "내 예측: <b>2 ms</b>" in gate.result.value


def test_hold_then_reveal_holds_the_cells_figures_and_validates(quizzes, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(views, "_display", shown.append)
    ex.hold("01-predict-kv-step")
    (gate,) = views._HOLDING["01-predict-kv-step"]
    assert shown[0] is gate.view and gate.capturing
    fig = plt.figure()
    ex.reveal("01-predict-kv-step", 3.0)
    assert shown[1] is fig and not plt.fignum_exists(fig.number)  # shown inside the held output, closed
    assert "01-predict-kv-step" not in views._HOLDING and gate.state == "hidden" and not gate.capturing
    assert gate.shows_result and len(shown) == 2  # the reveal used the hold's widget: no second one
    with pytest.raises(TypeError, match="숫자"):
        ex.reveal("01-predict-kv-step", "3.1")
    with pytest.raises(ValueError, match="선택지 id"):
        ex.RevealView("01-predict-curve").set_value("c")


def test_cells_between_the_prediction_and_the_reveal_are_held_together(quizzes, monkeypatch):
    shown = []
    monkeypatch.setattr(views, "_display", shown.append)
    v = ex.PredictView("01-predict-kv-step")
    ex.hold("01-predict-kv-step")      # cell A: the measurement (prints a table)
    views._end_of_cell()                  # IPython's post_run_cell: A's capture ends, its widget waits
    ex.hold("01-predict-kv-step")      # cell B: a plot of the same measurement
    views._end_of_cell()
    ex.reveal("01-predict-kv-step", 3.0)   # cell C: only the value
    gates = sorted(views._LIVE_GATES["01-predict-kv-step"], key=lambda g: shown.index(g.view) if g.view in shown else 99)
    a, b, c = gates[:3]
    assert [g.shows_result for g in (a, b, c)] == [False, False, True]
    assert all(g.state == "hidden" and g.held.layout.display == "none" for g in (a, b, c))
    assert AnswerStore("course").get("01-predict-kv-step") is None
    v.input.value = "2"
    v.button.click()  # one prediction opens all three
    assert all(g.state == "open" and g.held.layout.display is None for g in (a, b, c))
    assert a.result.value == b.result.value == "" and "실제 값: 3 ms" in c.result.value
    assert AnswerStore("course").get("01-predict-kv-step")["revealed"] == 3.0


def test_a_failing_held_cell_shows_its_output_and_the_error(quizzes, monkeypatch):
    monkeypatch.setattr(views, "_display", lambda _x: None)
    ex.hold("01-predict-kv-step")
    (gate,) = views._HOLDING["01-predict-kv-step"]

    class Failed:  # IPython's ExecutionResult of a cell that raised
        success = False

    views._end_of_cell(Failed())
    assert not gate.capturing and gate.held.layout.display is None and "오류" in gate.notice.value


def test_one_skip_opens_every_held_cell_of_the_exercise(quizzes, monkeypatch):
    monkeypatch.setattr(views, "_display", lambda _x: None)
    ex.hold("01-predict-curve")
    views._end_of_cell()
    ex.reveal("01-predict-curve", "b")
    here = AnswerStore("course").dir
    gates = [g for g in views._LIVE_GATES["01-predict-curve"] if g.store.dir == here]
    assert len(gates) == 2
    first = next(g for g in gates if not g.shows_result)
    first.skip_button.click()  # the skip pressed on the earlier cell's widget
    assert all(g.state == "open" for g in gates)
    rec = AnswerStore("course").get("01-predict-curve")
    assert rec["response"] is None and rec["revealed"] == "b"


def test_a_hold_until_another_prediction_opens_only_when_both_are_committed(quizzes, monkeypatch):
    """Two predictions on one measurement (each one division from the other): each output waits
    for both commits; a skip closes both."""
    monkeypatch.setattr(views, "_display", lambda _x: None)
    step, curve = ex.PredictView("01-predict-kv-step"), ex.PredictView("01-predict-curve")
    ex.hold("01-predict-kv-step", until=["01-predict-curve"])
    ex.reveal("01-predict-kv-step", 3.0)
    ex.hold("01-predict-curve", until="01-predict-kv-step")
    ex.reveal("01-predict-curve", "b")
    here = AnswerStore("course").dir
    a = next(g for g in views._LIVE_GATES["01-predict-kv-step"] if g.ex.id == "01-predict-kv-step" and g.store.dir == here)
    b = next(g for g in views._LIVE_GATES["01-predict-curve"] if g.ex.id == "01-predict-curve" and g.store.dir == here)
    assert "decodelab-until-01-predict-curve" in a.view._dom_classes
    step.input.value = "2"
    step.button.click()  # its own prediction alone does not open it
    assert a.state == "hidden" and a.held.layout.display == "none" and "'01-predict-curve'" in a.notice.value
    assert b.state == "hidden"
    curve.input.value = "a"
    curve.button.click()  # the second commit opens both
    assert a.state == "open" and b.state == "open" and "실제 값: 3 ms" in a.result.value
    assert AnswerStore("course").get("01-predict-curve")["revealed"] == "b"


def test_a_skip_of_a_hold_until_closes_both_predictions(quizzes, monkeypatch):
    monkeypatch.setattr(views, "_display", lambda _x: None)
    step, curve = ex.PredictView("01-predict-kv-step"), ex.PredictView("01-predict-curve")
    ex.hold("01-predict-kv-step", until=["01-predict-curve"])
    ex.reveal("01-predict-kv-step", 3.0)
    ex.hold("01-predict-curve", until=["01-predict-kv-step"])
    ex.reveal("01-predict-curve", "b")
    here = AnswerStore("course").dir
    a = next(g for g in views._LIVE_GATES["01-predict-kv-step"] if g.ex.id == "01-predict-kv-step" and g.store.dir == here)
    a.skip_button.click()
    assert step.input.disabled and curve.input.disabled  # the other answer is on screen now: both closed
    for pid, value in (("01-predict-kv-step", 3.0), ("01-predict-curve", "b")):
        rec = AnswerStore("course").get(pid)
        assert rec["response"] is None and rec["revealed"] == value


# --------------------------------------------------------------------------------------------
# A new process, the export, the gradebook
# --------------------------------------------------------------------------------------------

_CHILD_SAVE = """
from decodelab.assess import exercises as ex
v = ex.PredictView("01-predict-kv-step"); v.input.value = "12.5"; v.commit()
w = ex.WrittenView("01-written-decode-definition"); w.text.value = "토큰을 하나씩 이어서 만든다 =SUM(A1)"; w.submit()
ex.check_record("01-task-low-rate", 0.21)
"""

_CHILD_REVEAL = """
import json
from decodelab.assess import exercises as ex
from decodelab.assess.quiz import quiz_widget
rec, body = ex.reveal_record("01-predict-kv-step", 3.1)
assert "내 예측: <b>12.5 ms</b>" in body, body
w = quiz_widget("01")
w.views["01-greedy"].set_response(w.views["01-greedy"].order[0]); w.views["01-greedy"].submit()
print(w.export("2026-00001"))
"""


def _child(code: str, env: dict, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_exercises_survive_a_new_process_and_appear_in_the_export_and_gradebook(quizzes, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    _child(_CHILD_SAVE, env, tmp_path)  # one process saves ...
    path = Path(_child(_CHILD_REVEAL, env, tmp_path).strip().splitlines()[-1])  # ... a new one reveals and exports
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["exercises"] == {
        "01-predict-kv-step": {"kind": "prediction", "response": 12.5, "revealed": 3.1},
        "01-written-decode-definition": {"kind": "written", "response": "토큰을 하나씩 이어서 만든다 =SUM(A1)"},
        "01-task-low-rate": {"kind": "task", "response": 0.21, "passed": True},
    }
    assert set(data["answers"]) == {"01-greedy"}  # exercises never mixed into the quiz answers
    sub = read_submission(path)
    assert sub.exercises["01-task-low-rate"].passed is True

    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(path, subs / path.name)
    book = grade_folder(subs)
    (row,) = book.rows
    assert row.exercises["01-predict-kv-step"] == {"kind": "prediction", "response": 12.5, "revealed": 3.1}
    rows = list(csv.reader(io.StringIO(report_csv(book))))
    head, cells = rows[0], dict(zip(rows[0], rows[1]))
    # predictions next to the revealed value, written text as text (never a score), task results
    i = head.index("01-predict-kv-step [예측]")
    assert head[i + 1] == "01-predict-kv-step [실제]" and (cells[head[i]], cells[head[i + 1]]) == ("12.5", "3.1")
    assert cells["01-predict-curve [예측]"] == "" and cells["01-predict-curve [실제]"] == ""
    assert cells["01-written-decode-definition [서술]"] == "토큰을 하나씩 이어서 만든다 =SUM(A1)"
    assert cells["01-task-low-rate [실습]"] == "통과" and cells["01-task-low-rate [값]"] == "0.21"
    assert cells["01-task-band [실습]"] == ""  # not attempted: blank
    # the exercises add nothing to the quiz score
    assert cells["01 점수"] == cells["total"] and cells["max"] == f"{sum(q.points for q in book.questions):g}"
    md = rubrics_markdown(book)
    assert "## 01-written-decode-definition" in md and "방금 만든 토큰을 다음 입력으로 쓴다" in md and "모범 답안" in md


def test_grade_cli_writes_the_rubric_next_to_the_report(quizzes, tmp_path, capsys):
    from decodelab.assess.report import main as grade_main
    from decodelab.assess.quiz.submission import make_submission

    subs = tmp_path / "subs"
    subs.mkdir()
    sub = make_submission("s1", {}, exercises={"01-written-decode-definition": {"kind": "written", "response": "하나씩"}})
    (subs / "s1.json").write_text(json.dumps(sub, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "gb.csv"
    assert grade_main([str(subs), "-o", str(out)]) == 0
    assert "연습 6개" in capsys.readouterr().out
    rubric = (tmp_path / "gb-rubric.md").read_text(encoding="utf-8")
    assert rubric.startswith("# 서술형 답 채점 기준") and "토큰을 하나씩 만든다" in rubric
    cells = dict(zip(*list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"))))))
    assert cells["01-written-decode-definition [서술]"] == "하나씩" and cells["total"] == "0"


def test_prediction_summary_shows_how_far_the_class_was_off(quizzes, tmp_path):
    from decodelab.assess.report import predictions_markdown
    from decodelab.assess.quiz.submission import make_submission

    subs = tmp_path / "subs"
    subs.mkdir()
    for sid, pred, curve in [("s1", 12.0, "a"), ("s2", 6.0, "b"), ("s3", None, "b")]:
        entries = {"01-predict-curve": {"kind": "prediction", "response": curve, "revealed": "b"}}
        if pred is not None:
            entries["01-predict-kv-step"] = {"kind": "prediction", "response": pred, "revealed": 3.0}
        (subs / f"{sid}.json").write_text(json.dumps(make_submission(sid, {}, exercises=entries)), encoding="utf-8")
    book = grade_folder(subs)
    md = predictions_markdown(book)
    kv = md.split("## 01-predict-kv-step")[1].split("## ")[0]
    assert "예측한 학생: 2명 / 제출 3명" in kv and "예측의 중앙값: 9 ms" in kv and "실제 값의 중앙값: 3 ms" in kv
    assert "중앙값 3배 (최소 2배, 최대 4배)" in kv  # 12/3 = 4, 6/3 = 2
    curve = md.split("## 01-predict-curve")[1]
    assert "a. 평평하다: 1명" in curve and "b. 위치에 따라 늘어난다: 2명" in curve and "실제와 같은 예측: 2명" in curve


def test_a_hold_after_the_reveal_waits_for_the_same_commit_or_skip(quizzes, monkeypatch):
    """A cell after the reveal that shows the same result again (a figure of it) runs before the
    commit in a Run All: hidden with the notice, opened by the commit; after a commit it shows at once."""
    monkeypatch.setattr(views, "_display", lambda _x: None)
    v = ex.PredictView("01-predict-kv-step")
    ex.hold("01-predict-kv-step")
    ex.reveal("01-predict-kv-step", 3.0)
    ex.hold("01-predict-kv-step")          # the figure cell below the reveal
    views._end_of_cell()
    here = AnswerStore("course").dir
    after = next(g for g in views._LIVE_GATES["01-predict-kv-step"] if not g.shows_result and g.store.dir == here)
    assert after.state == "hidden" and after.held.layout.display == "none" and "예측 확정" in after.notice.value
    v.input.value = "2"
    v.button.click()
    assert after.state == "open" and after.held.layout.display is None
    ex.hold("01-predict-kv-step")          # run again after the commit: shown at once
    views._end_of_cell()
    again = [g for g in views._LIVE_GATES["01-predict-kv-step"] if not g.shows_result and g.store.dir == here]
    assert all(g.state == "open" and g.held.layout.display is None for g in again) and len(again) == 2


def test_a_skip_on_the_reveal_opens_a_hold_below_it(quizzes, monkeypatch):
    monkeypatch.setattr(views, "_display", lambda _x: None)
    ex.hold("01-predict-curve")
    ex.reveal("01-predict-curve", "b")
    ex.hold("01-predict-curve")
    views._end_of_cell()
    here = AnswerStore("course").dir
    gates = [g for g in views._LIVE_GATES["01-predict-curve"] if g.store.dir == here]
    result = next(g for g in gates if g.shows_result)
    result.skip_button.click()
    assert all(g.state == "open" for g in gates) and len(gates) == 2
