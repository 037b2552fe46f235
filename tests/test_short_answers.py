"""Short answers graded honestly: right -> 1.0, wrong -> 0.0, undecidable -> None (lecturer's review).

The fixture ``tests/fixtures/short_answers.yaml`` holds, per short question, answers judged by hand:
no wrong answer may get credit, at least 80% of the right ones must get 1.0 and none of them 0.0.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from decodelab.quiz import load_quizzes
from decodelab.quiz.grading import grade_short, misconception_of
from decodelab.quiz.matching import states
from decodelab.quiz.schema import ShortAnswer

FIXTURE = Path(__file__).parent / "fixtures" / "short_answers.yaml"
CASES = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
SHORT = {q.id: q for q in load_quizzes() if q.kind == "short"}


def test_every_short_question_has_its_fixture():
    assert set(CASES) == set(SHORT)
    for qid, case in CASES.items():
        assert len(case["right"]) >= 8 and len(case["wrong"]) >= 8, qid
        assert len(set(case["right"])) == len(case["right"]) and len(set(case["wrong"])) == len(case["wrong"])


@pytest.mark.parametrize("qid", sorted(CASES))
def test_no_wrong_answer_gets_credit(qid):
    q = SHORT[qid]
    credited = [a for a in CASES[qid]["wrong"] if grade_short(q, a) not in (0.0, None)]
    assert credited == []
    decided = sum(1 for a in CASES[qid]["wrong"] if grade_short(q, a) == 0.0)
    assert decided >= len(CASES[qid]["wrong"]) // 2, "오개념 규칙이 오답을 거의 잡지 못합니다"


@pytest.mark.parametrize("qid", sorted(CASES))
def test_right_answers_get_credit_and_are_never_marked_wrong(qid):
    q = SHORT[qid]
    scores = {a: grade_short(q, a) for a in CASES[qid]["right"]}
    assert [a for a, s in scores.items() if s == 0.0] == []
    full = sum(1 for s in scores.values() if s == 1.0)
    assert full >= 0.8 * len(scores), {a: s for a, s in scores.items() if s != 1.0}


@pytest.mark.parametrize("qid", sorted(CASES))
def test_spacing_and_nfd_do_not_change_the_grade(qid):
    q = SHORT[qid]
    for a in CASES[qid]["right"] + CASES[qid]["wrong"]:
        want = grade_short(q, a)
        assert grade_short(q, unicodedata.normalize("NFD", a)) == want, a
        assert grade_short(q, f"  {a}\n") == want, a
        squeezed = a.replace(" ", "")
        if squeezed != a and "않" not in a and "안 " not in a:  # negation scope may depend on spacing
            assert grade_short(q, squeezed) == want, a


@pytest.mark.parametrize(("qid", "text", "score"), [
    ("01-check-1", "하나씩 순차적으로 만든다", 1.0),
    ("01-check-1", "토큰을 하나씩 지운다", 0.0),
    ("03-check-2", "지연이 곱해져서", 1.0),
    ("03-check-2", "GPU가 커져서", 0.0),
    ("02-decode-bottleneck-term", "DRAM 대역폭", 1.0),
    ("02-decode-bottleneck-term", "dram대역폭이요", 1.0),
    # mixed: a right concept next to a misconception goes to the lecturer, never to 0
    ("01-prereq-processor", "CPU보다 병렬 연산이 강한 GPU", None),
    # a misconception denied by "아니라" / "않고" is not stated
    ("01-check-1", "병렬로 한꺼번에 만들지 않고 하나씩 차례로 만든다", 1.0),
    ("02-decode-bottleneck-term", "연산 성능이 아니라 메모리 대역폭", 1.0),
    # negated concept: not credited, not decided
    ("03-check-2", "지연이 쌓이지 않기 때문", None),
    # nothing the rules know: review
    ("05-low-latency-def", "잘 모르겠어요", None),
])
def test_issue_cases(qid, text, score):
    assert grade_short(SHORT[qid], text) == score


def test_misconception_feedback_names_the_wrong_idea():
    m = misconception_of(SHORT["01-check-1"], "토큰을 하나씩 지운다")
    assert m is not None and "지우" in m.explanation
    assert misconception_of(SHORT["01-check-1"], "토큰을 하나씩 만든다") is None


def test_states_span_and_negation():
    groups = [["gpu", "칩"], ["커져", "커지"]]
    assert states(groups, "GPU가 커져서", 6)
    assert not states(groups, "GPU를 여러 번 부르면 지연이 커져서", 6)
    assert states(groups, "GPU를 여러 번 부르면 지연이 커져서")  # no span: anywhere
    assert not states([["지우"]], "토큰을 지우는 게 아니라 만든다")
    assert states([["병렬"]], "병렬로 한꺼번에 만들지 않고 하나씩")  # outside the plain negation scope
    assert not states([["병렬"]], "병렬로 한꺼번에 만들지 않고 하나씩", contrast=True)


def test_grade_short_rejects_non_text():
    with pytest.raises(TypeError, match="str"):
        grade_short(SHORT["01-check-1"], 3)
    assert grade_short(SHORT["01-check-1"], " \u200b ") is None


# ------------------------------------------------------------------------------------------------
# The rule fields validate, and their errors name the field
# ------------------------------------------------------------------------------------------------

BASE = dict(id="01-t", kind="short", prompt="무엇인가요? 짧게", answer="한 토큰씩", explanation="테스트입니다.",
            source={"notebook": "01", "passage": "테스트"})


def _error_locs(**fields) -> str:
    with pytest.raises(ValidationError) as e:
        ShortAnswer(**{**BASE, **fields})
    return str(e.value)


def test_valid_rule_fields_and_flat_groups():
    q = ShortAnswer(**BASE, accepted=["토큰 하나씩"], concepts=["하나씩", "차례"],
                    misconceptions=[{"match": ["지우"], "explanation": "지우는 것이 아닙니다."}])
    assert q.concepts == [["하나씩", "차례"]]
    assert q.misconceptions[0].match == [["지우"]] and q.misconceptions[0].within == 10


@pytest.mark.parametrize(("fields", "where"), [
    ({"concepts": [[]]}, "concepts.0"),
    ({"concepts": [["하나씩", " !"]]}, "concepts.0.1"),
    ({"accepted": ["  "]}, "accepted.0"),
    ({"misconceptions": [{"match": [], "explanation": "틀린 생각입니다."}]}, "match"),
    ({"misconceptions": [{"match": [["지우", ""]], "explanation": "틀린 생각입니다."}]}, "match.0.1"),
    ({"misconceptions": [{"match": ["지우"]}]}, "explanation"),
    ({"misconceptions": [{"match": ["지우"], "explanation": "틀린 생각입니다.", "within": 0}]}, "within"),
    ({"misconceptions": [{"match": ["지우"], "explanation": "틀린 생각입니다.", "why": "x"}]}, "why"),
    ({"misconceptions": [{"match": ["토큰씩"], "explanation": "틀린 생각입니다."}]}, "misconceptions.0.match"),
    ({"keywords": [["하나씩"]]}, "concepts로"),
    ({"forbidden": ["여러"]}, "misconceptions로"),
])
def test_rule_field_errors_name_the_field(fields, where):
    assert where in _error_locs(**fields)


def test_accepted_form_that_states_a_misconception_is_an_authoring_error():
    msg = _error_locs(accepted=["토큰을 지워서"],
                      misconceptions=[{"match": ["지워"], "explanation": "지우는 것이 아닙니다."}])
    assert "misconceptions.0.match" in msg and "토큰을 지워서" in msg


def test_widget_and_gradebook_keep_a_review_answer_as_review(tmp_path):
    from decodelab.quiz import grade_folder, quiz_widget, write_gradebook

    w = quiz_widget("03", answers_dir=tmp_path / "answers", export_dir=tmp_path)
    v = w.views["03-check-2"]
    v.set_response("모르겠어요")
    v.submit()
    assert v.score is None and "강사" in v.feedback.value and "검토" in v.feedback.value
    w.student.value = "s1"
    w.export_button.click()
    book = grade_folder(tmp_path, load_quizzes(notebook="03"))
    (row,) = book.rows
    assert row.scores["03-check-2"] is None and row.total == 0.0
    text = write_gradebook(book, tmp_path / "gb.csv").read_text(encoding="utf-8-sig")
    assert "검토 필요" in text
