"""The prediction widgets already on screen and the result widgets below follow each other in the same
kernel (Run All order: the result stays hidden until a prediction or a skip)."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

from decodelab.assess import exercises as ex  # noqa: E402
from decodelab.assess.quiz.store import AnswerStore  # noqa: E402

PRED = "01-predict-cache-length"  # a number prediction of quizzes/exercises/01.yaml (unit 위치)


@pytest.fixture()
def answers(tmp_path, monkeypatch):
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))
    return tmp_path / "answers"


def test_a_reveal_locks_the_committed_widget_above_it(answers):
    view = ex.PredictView(PRED)
    view.input.value = "7"
    view.button.click()
    assert not view.input.disabled and "예측을 저장했습니다" in view.feedback.value
    ex.reveal(PRED, 8)
    assert view.input.disabled and view.button.disabled
    assert "7 위치" in view.feedback.value and "바꿀 수 없습니다" in view.feedback.value
    assert AnswerStore("course").get(PRED)["response"] == 7.0


def test_run_all_keeps_the_widget_open_and_a_late_prediction_opens_the_result(answers):
    view = ex.PredictView(PRED)  # shown, nothing typed: Run All reaches the reveal cell
    ex.reveal(PRED, 8)
    assert not view.input.disabled and view.feedback.value == ""  # nothing closed, nothing recorded
    assert AnswerStore("course").get(PRED) is None
    again = ex.PredictView(PRED)  # the predict cell run again, or after a kernel restart: still open
    assert not again.input.disabled
    view.input.value = "7"
    view.button.click()  # the result shown below opens now
    rec = AnswerStore("course").get(PRED)
    assert (rec["response"], rec["revealed"]) == (7.0, 8)
    assert view.input.disabled and "바꿀 수 없습니다" in view.feedback.value


def test_skipping_closes_the_widget_and_says_why(answers):
    view = ex.PredictView(PRED)
    gate = ex.RevealView(PRED)
    gate.set_value(8)
    gate.skip_button.click()
    assert view.input.disabled and view.button.disabled
    assert "예측 없이 결과를 보았으므로" in view.feedback.value
    again = ex.PredictView(PRED)
    assert again.input.disabled and "이 예측은 닫혔습니다" in again.feedback.value
    rec = AnswerStore("course").get(PRED)
    assert rec["response"] is None and rec["revealed"] == 8


def test_a_reveal_into_another_answers_folder_leaves_the_widget_alone(answers, tmp_path):
    view = ex.PredictView(PRED)
    ex.reveal(PRED, 8, answers_dir=tmp_path / "elsewhere")
    assert not view.input.disabled and view.feedback.value == ""


@pytest.mark.parametrize("pred, shown", [(7, "실제의 0.88배"), (16, "실제의 2배"), (0.4, "실제의 1/20")])
def test_the_reveal_says_how_far_the_prediction_was(answers, pred, shown):
    view = ex.PredictView(PRED)
    view.input.value = str(pred)
    view.commit()
    _, body = ex.reveal_record(PRED, 8)
    assert shown in body, body
