"""Short answers graded honestly: right -> 1.0, wrong -> 0.0, undecidable -> None (lecturer's review).

The fixture ``tests/fixtures/short_answers.yaml`` holds, per short question, answers judged by hand
(at least 10 right and 10 wrong: keyword lists, negations, wrong causes, the opposite meaning, a right
term inside a wrong claim): no wrong answer may get credit, at least 80% of the right ones must get
1.0 and none of them 0.0, and the ``zero`` ones (listed misconceptions, negated concepts) exactly 0.0.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from decodelab.assess.quiz import load_quizzes
from decodelab.assess.quiz.grading import SHORT_REASONS, check, grade_short, misconception_of, short_verdict
from decodelab.assess.quiz.matching import Folded, states
from decodelab.assess.quiz.schema import ShortAnswer

FIXTURE = Path(__file__).parent / "fixtures" / "short_answers.yaml"
CASES = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
SHORT = {q.id: q for q in load_quizzes() if q.kind == "short"}


def _wrong(qid):
    return list(dict.fromkeys(CASES[qid]["wrong"] + CASES[qid].get("zero", [])))


def test_every_short_question_has_its_fixture():
    assert set(CASES) == set(SHORT)
    for qid, case in CASES.items():
        assert len(case["right"]) >= 10 and len(_wrong(qid)) >= 10, qid
        assert len(set(case["right"])) == len(case["right"]) and len(set(case["wrong"])) == len(case["wrong"])
        assert not set(case["right"]) & set(_wrong(qid)), qid
        assert len(case.get("zero", [])) >= 5, qid


@pytest.mark.parametrize("qid", sorted(CASES))
def test_no_wrong_answer_gets_credit(qid):
    q = SHORT[qid]
    credited = [a for a in _wrong(qid) if grade_short(q, a) not in (0.0, None)]
    assert credited == []
    decided = sum(1 for a in _wrong(qid) if grade_short(q, a) == 0.0)
    assert decided >= len(_wrong(qid)) // 2, "오개념 규칙이 오답을 거의 잡지 못합니다"


@pytest.mark.parametrize("qid", sorted(CASES))
def test_listed_misconceptions_and_negations_score_zero(qid):
    q = SHORT[qid]
    assert {a: grade_short(q, a) for a in CASES[qid]["zero"] if grade_short(q, a) != 0.0} == {}


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
        if squeezed != a and not any(n in a for n in ("않", "안 ", "없", "아니")):  # negation scope may depend on spacing
            assert grade_short(q, squeezed) == want, a


@pytest.mark.parametrize(("qid", "text", "score"), [
    ("01-check-1", "하나씩 순차적으로 만든다", 1.0),
    ("01-check-1", "토큰을 하나씩 지운다", 0.0),
    ("03-check-2", "지연이 곱해져서", 1.0),
    ("03-check-2", "GPU가 커져서", 0.0),
    ("02-decode-bottleneck-term", "DRAM 대역폭", 1.0),
    ("02-decode-bottleneck-term", "dram대역폭이요", 1.0),
    # mixed: a right concept next to a misconception goes to the lecturer, never to 0
    ("02-decode-bottleneck-term", "연산 성능보다 메모리 대역폭", None),
    # a misconception denied by "아니라" / "않고" is not stated
    ("01-check-1", "병렬로 한꺼번에 만들지 않고 하나씩 차례로 만든다", 1.0),
    ("02-decode-bottleneck-term", "연산 성능이 아니라 메모리 대역폭", 1.0),
    # negated concept: 0
    ("03-check-2", "지연이 쌓이지 않기 때문", 0.0),
    ("02-decode-bottleneck-term", "메모리 대역폭 때문이 아니다", 0.0),
    # the particle does not hide the misconception
    ("01-check-1", "단어를 하나씩 생성한다", 0.0),
    ("01-check-1", "문장을 하나씩 만든다", 0.0),
    ("01-check-1", "단어 하나씩 생성한다", 0.0),
    # keyword lists: never credited
    ("03-check-2", "지연, 누적, 쌓임, 곱해짐, 합산, 시간", None),
    ("05-low-latency-def", "요청 응답 대기 시간 지연 기다림", None),
    # a right term in a wrong claim, a wrong cause, the opposite meaning: 0
    ("02-decode-bottleneck-term", "메모리 대역폭이 클수록 느려진다", 0.0),
    ("03-check-2", "메모리가 부족해서 시간이 늘어난다", 0.0),
    ("05-low-latency-def", "요청 후 응답까지 시간이 길다", 0.0),
    # words the rules cannot read go to review, never to 1
    ("03-check-2", "지연이 쌓여서 GPU가 고장 난다", None),
    # nothing the rules know: review
    ("05-low-latency-def", "잘 모르겠어요", None),
])
def test_issue_cases(qid, text, score):
    assert grade_short(SHORT[qid], text) == score


@pytest.mark.parametrize(("qid", "text", "reason"), [
    ("01-check-1", "한 토큰씩", "accepted"),
    ("01-check-1", "토큰을 하나씩 순서대로 만듭니다", "concepts"),
    ("01-check-1", "토큰을 하나씩 지운다", "misconception"),
    ("01-check-1", "토큰을 하나씩 만들지 않는다", "negation"),
    ("02-decode-bottleneck-term", "메모리 대역폭과 연산 성능", "mixed"),
    ("03-check-2", "지연 누적 쌓임 곱해짐 합산 시간", "list"),
    ("03-check-2", "지연이 쌓여서 GPU가 고장 난다", "unexplained"),
    ("05-low-latency-def", "잘 모르겠어요", "undecided"),
])
def test_verdict_reasons(qid, text, reason):
    score, why = short_verdict(SHORT[qid], text)
    assert why == reason and score == {"accepted": 1.0, "concepts": 1.0, "misconception": 0.0,
                                       "negation": 0.0}.get(reason)
    fb = check(SHORT[qid], text).feedback
    if score != 1.0 and reason != "misconception":
        assert fb == [SHORT_REASONS[reason]]


def test_unexplained_and_keyword_list_rules():
    f = Folded("작은 지연이 계속 쌓이기 때문")
    covered = [(f.text.index("지연"), f.text.index("지연") + 2), (f.text.index("쌓"), f.text.index("쌓") + 1)]
    assert f.unexplained(covered) == ["작은", "계속"]
    assert f.unexplained(covered + [(0, 2), (f.text.index("계속"), f.text.index("계속") + 2)]) == []
    assert Folded("지연이 쌓이지 않아").unexplained([(0, 2), (3, 4)]) == ["않아"]  # negation is never filler
    groups = [["지연", "시간"], ["누적", "쌓", "곱해"]]
    assert Folded("지연, 누적, 시간").is_keyword_list(groups)
    assert Folded("지연 누적 쌓임 곱해짐").is_keyword_list(groups)
    assert not Folded("지연 누적").is_keyword_list(groups)
    assert not Folded("작은 지연이 계속 쌓여 전체 시간이 곱해진다").is_keyword_list(groups)
    assert not Folded("메모리(HBM, DRAM) 대역폭").is_keyword_list([["메모리", "hbm", "dram"], ["대역폭"]])


def test_particles_do_not_widen_a_span():
    groups = [["단어", "문장"], ["하나씩"]]
    assert states(groups, "단어를 하나씩", 5) and states(groups, "문장을하나씩", 5) and states(groups, "단어 하나씩", 5)
    assert not states(groups, "단어의 조각인 토큰을 하나씩", 5)


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
    q = ShortAnswer(**BASE, accepted=["토큰 하나씩"], concepts=["하나씩", "차례"], neutral=["토큰"],
                    misconceptions=[{"match": ["지우"], "explanation": "지우는 것이 아닙니다."}])
    assert q.concepts == [["하나씩", "차례"]] and q.neutral == ["토큰"]
    assert q.misconceptions[0].match == [["지우"]] and q.misconceptions[0].within == 10
    assert q.misconceptions[0].decisive is False


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
    ({"neutral": ["토큰", " ."]}, "neutral.1"),
    ({"misconceptions": [{"match": ["지우"], "explanation": "틀린 생각입니다.", "decisive": "아마"}]}, "decisive"),
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
    from decodelab.assess.report import grade_folder, write_report
    from decodelab.assess.quiz import quiz_widget

    w = quiz_widget("03", answers_dir=tmp_path / "answers", export_dir=tmp_path)
    v = w.views["03-check-2"]
    v.set_response("모르겠어요")
    v.submit()
    assert v.score is None and "강사" in v.feedback.value and "맞았는지 스스로 확인" in v.feedback.value
    w.student.value = "s1"
    w.export_button.click()
    book = grade_folder(tmp_path, load_quizzes(notebook="03"))
    (row,) = book.rows
    assert row.scores["03-check-2"] is None and row.total == 0.0
    text = write_report(book, tmp_path / "gb.csv").read_text(encoding="utf-8-sig")
    assert "검토 필요" in text
