"""Quiz files, schema errors, normalization and grading (decodelab.assess.quiz)."""

from __future__ import annotations

import shutil
import textwrap
import unicodedata
from pathlib import Path

import pytest

from decodelab.assess.quiz import (
    QuizError,
    ResponseError,
    check,
    grade,
    load_quiz_file,
    load_quizzes,
    normalize_text,
    parse_quantity,
    parse_response,
)
from decodelab.assess.quiz.loading import load_public, quizzes_dir, select_notebook
from decodelab.assess.quiz.schema import NumericQuestion

REPO = Path(__file__).resolve().parents[1]
QUIZ_DIR = REPO / "quizzes"


# ------------------------------------------------------------------------------------------------
# The shipped quiz files
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("nb", ["01", "02", "03", "04", "05"])
def test_every_quiz_file_validates(nb):
    f = load_quiz_file(QUIZ_DIR / f"{nb}.yaml")
    assert f.notebook == nb
    assert len(f.questions) >= 10
    assert all(q.id.startswith(nb + "-") for q in f.questions)


def test_load_quizzes_entry_point():
    qs = load_quizzes()
    ids = [q.id for q in qs]
    assert len(ids) == len(set(ids)) == 102
    assert ids[0].startswith("01-") and ids[-1].startswith("07-")
    assert {q.kind for q in qs} == {"single", "multiple", "short", "numeric", "ordering"}
    for q in qs:
        assert q.id and q.prompt and q.explanation and q.answer is not None and q.source
    assert [q.id for q in load_quizzes(notebook="03")] == [i for i in ids if i.startswith("03-")]
    assert len(load_quizzes(notebook="all")) == len(load_quizzes(notebook="06")) == 102


def test_each_key_grades_itself_right_and_every_wrong_choice_wrong():
    for q in load_quizzes():
        assert check(q, q.answer).score == 1.0, q.id
        if q.kind == "single":
            for c in q.choices:
                if c.id != q.answer:
                    assert check(q, c.id).score == 0.0, (q.id, c.id)
                    assert c.explanation, (q.id, c.id)
        if q.kind == "multiple":
            for c in q.choices:
                if c.id not in q.answer:
                    assert check(q, [*q.answer, c.id]).score < 1.0, (q.id, c.id)
        if q.kind == "ordering":
            swapped = list(q.answer)
            swapped[0], swapped[1] = swapped[1], swapped[0]
            assert check(q, swapped).score == 0.0, q.id
        if q.kind == "numeric":
            off = q.answer + q.tolerance + max(1e-6, 0.01 * abs(q.answer))
            assert check(q, off).score == 0.0, q.id


def test_short_answers_are_not_given_away_in_their_own_prompt():
    for q in load_quizzes():
        if q.kind == "short":
            for form in [q.answer, *q.accepted]:
                assert normalize_text(form) not in normalize_text(q.prompt), (q.id, form)


def test_public_view_orders_ordering_items_per_student():
    # the practice view keeps the file's items; the widget shows them in a per-student order, so the
    # answer order is shown to about 1 in n! students, never to all of them
    from decodelab.assess.quiz.shuffle import choice_order

    view = load_public()
    assert view.quiz_set == "course"
    for pq in view.questions:
        if pq.kind == "ordering":
            key = view.keys[pq.id]
            assert sorted(i.id for i in pq.items) == sorted(key.answer)
            shown = [choice_order(pq.id, f"s{k}", [i.id for i in pq.items]) for k in range(400)]
            assert len({tuple(s) for s in shown}) > 10, pq.id
            assert sum(s == list(key.answer) for s in shown) < 40, pq.id


def test_quizzes_dir_env_override(tmp_path, monkeypatch):
    for p in QUIZ_DIR.glob("0*.yaml"):
        shutil.copy(p, tmp_path / p.name)
    monkeypatch.setenv("DECODELAB_QUIZZES", str(tmp_path))
    assert quizzes_dir() == tmp_path
    assert len(load_quizzes()) == 102
    monkeypatch.setenv("DECODELAB_QUIZZES", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="DECODELAB_QUIZZES"):
        load_quizzes()


def test_select_notebook():
    assert select_notebook(1) == "01" and select_notebook("05") == "05"
    assert select_notebook("all") is None and select_notebook("06") is None
    assert select_notebook("07") == "07" and select_notebook(7) == "07"  # the real-server notebook
    with pytest.raises(ValueError, match="'01'~'07'"):
        select_notebook("08")


# ------------------------------------------------------------------------------------------------
# Broken files: every error names file, question and field
# ------------------------------------------------------------------------------------------------

BROKEN = textwrap.dedent(
    """\
    notebook: "02"
    title: 고장 난 파일
    questions:
      - id: 02-ok
        kind: short
        prompt: 멀쩡한 문항입니다.
        answer: 토큰
        explanation: 이 문항은 맞습니다.
        source: {notebook: "02", passage: 테스트}
      - id: 02-numeric-bad
        kind: numeric
        prompt: 허용 오차가 글자인 문항입니다.
        answer: 3
        tolerance: 많이
        unit: ms
        explanation: 고장 난 문항입니다.
        source: {notebook: "02", passage: 테스트}
      - id: 02-choice-bad
        kind: single
        prompt: 오답 설명이 빠진 문항입니다.
        choices:
          - {id: a, text: 맞는 것}
          - {id: b, text: 틀린 것}
        answer: a
        explanation: 고장 난 문항입니다.
        source: {seed: "000", passage: 테스트}
      - id: 02-typo
        kind: single
        prompt: 필드 이름에 오타가 있는 문항입니다.
        choices:
          - {id: a, text: 하나, explanation: 틀림}
          - {id: b, text: 둘}
        answer: c
        explantion: 오타
        source: {seed: "000", passage: 테스트}
      - id: 02-kind-bad
        kind: essay
        prompt: 모르는 종류의 문항입니다.
        answer: x
        explanation: 고장 난 문항입니다.
        source: {seed: "000", passage: 테스트}
      - kind: short
        prompt: id가 없는 문항입니다.
        answer: x
        explanation: 고장 난 문항입니다.
        source: {seed: "009", passage: 테스트}
    """
)


def test_broken_file_errors_name_file_question_and_field(tmp_path):
    path = tmp_path / "02.yaml"
    path.write_text(BROKEN, encoding="utf-8")
    with pytest.raises(QuizError) as ei:
        load_quiz_file(path)
    found = {(p.file, p.question, p.field) for p in ei.value.problems}
    assert ("02.yaml", "02-numeric-bad", "tolerance") in found
    assert ("02.yaml", "02-choice-bad", "choices.b.explanation") in found
    assert ("02.yaml", "02-typo", "explantion") in found  # unknown field (typo)
    assert ("02.yaml", "02-typo", "explanation") in found  # the real field is then missing
    assert ("02.yaml", "02-kind-bad", "kind") in found
    assert ("02.yaml", "#6 (id 없음)", "id") in found
    assert ("02.yaml", "#6 (id 없음)", "source.0.seed") in found
    assert not any(p.question == "02-ok" for p in ei.value.problems)
    text = str(ei.value)
    assert "02.yaml: 문항 02-numeric-bad: 필드 tolerance: 숫자여야 합니다" in text
    assert "02.yaml: 문항 02-typo: 필드 explantion: 알 수 없는 필드입니다" in text


def test_wrong_answer_id_is_reported_on_answer_field(tmp_path):
    path = tmp_path / "01.yaml"
    path.write_text(textwrap.dedent(
        """\
        notebook: "01"
        title: t
        questions:
          - id: 01-q
            kind: ordering
            prompt: 순서를 정하세요.
            items: [{id: A, text: a}, {id: B, text: b}, {id: C, text: c}]
            answer: [A, B, B]
            explanation: 고장 난 문항입니다.
            source: {notebook: "01", passage: 테스트}
          - id: 03-wrong-prefix
            kind: short
            prompt: 다른 노트북 번호입니다.
            answer: "5"
            explanation: 고장 난 문항입니다.
            source: {notebook: "01", passage: 테스트}
        """), encoding="utf-8")
    with pytest.raises(QuizError) as ei:
        load_quiz_file(path)
    found = {(p.question, p.field) for p in ei.value.problems}
    assert ("01-q", "answer") in found
    assert ("03-wrong-prefix", "id") in found


def test_yaml_syntax_error_and_duplicate_key_give_file_and_line(tmp_path):
    bad = tmp_path / "03.yaml"
    bad.write_text('notebook: "03"\ntitle: t\nquestions:\n  - id: 03-a\n    prompt: [unclosed\n', encoding="utf-8")
    with pytest.raises(QuizError, match=r"03\.yaml: YAML 문법 오류 \(\d+행"):
        load_quiz_file(bad)
    dup = tmp_path / "04.yaml"
    dup.write_text('notebook: "04"\ntitle: t\ntitle: u\nquestions: []\n', encoding="utf-8")
    with pytest.raises(QuizError, match=r"04\.yaml: YAML 문법 오류 \(3행.*'title'가 두 번"):
        load_quiz_file(dup)


def test_duplicate_id_across_files(tmp_path):
    for p in QUIZ_DIR.glob("0*.yaml"):
        shutil.copy(p, tmp_path / p.name)
    text = (tmp_path / "02.yaml").read_text(encoding="utf-8")
    (tmp_path / "02.yaml").write_text(text.replace("id: 02-ttft-def", "id: 02-bound"), encoding="utf-8")
    with pytest.raises(QuizError) as ei:
        load_quizzes(tmp_path)
    assert any(p.question == "02-bound" and p.field == "id" for p in ei.value.problems)


# ------------------------------------------------------------------------------------------------
# Normalization
# ------------------------------------------------------------------------------------------------


def test_normalize_text_folds_nfd_spaces_punctuation_fullwidth():
    nfc = "한 번에 한 토큰씩"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc and len(nfd) > len(nfc)
    assert normalize_text(nfc) == normalize_text(nfd) == "한번에한토큰씩"
    assert normalize_text("  한 번에,  한 토큰씩!\n") == "한번에한토큰씩"
    assert normalize_text("\ufeff한\u200b번에 한 토큰씩。") == "한번에한토큰씩"
    assert normalize_text("ＧＰＵ") == normalize_text("gpu") == "gpu"


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("150", "s", 150.0),
        ("150 s", "s", 150.0),
        ("150초", "s", 150.0),
        ("2.5분", "s", 150.0),
        ("150000 ms", "s", 150.0),
        ("약 150s", "s", 150.0),
        ("１５０", "s", 150.0),
        ("1,000 tokens/s", "tokens/s", 1000.0),
        ("1.5e3", "ms", 1500.0),
        ("75%", "", 0.75),
        ("2.8배", "배", 2.8),
        ("327680 B", "MB", 0.32768),
        ("3333", "µs", 3333.0),
        ("3.33 us", "µs", 3.33),
        ("−2", "", -2.0),
        (42, "개", 42.0),
        ("2/7", "", 2 / 7),
        (" 2 / 7 ", "", 2 / 7),
        ("-3/4", "", -0.75),
        ("3/4 s", "ms", 750.0),
        ("1/3분", "s", 20.0),
        ("1,000/4 tokens/s", "tokens/s", 250.0),
        ("1/0.5", "", 2.0),
        # issue 17: trailing Korean words, a trailing dot, ns and MiB
        ("21.9ms입니다", "ms", 21.9),
        ("22 ms 정도", "ms", 22.0),
        ("22.", "ms", 22.0),
        ("3333 ns", "µs", 3.333),
        ("약 22ms쯤", "ms", 22.0),
        ("150초 걸립니다", "s", 150.0),
        ("103개입니다", "개", 103.0),
        ("0.75입니다", "", 0.75),
        ("512 MiB", "MB", 536.870912),
        ("1 GiB", "GB", 1.073741824),
        ("2 KiB", "B", 2048.0),
    ],
)
def test_parse_quantity(text, unit, value):
    assert parse_quantity(text, unit) == pytest.approx(value)


@pytest.mark.parametrize(("text", "unit", "msg"), [
    ("abc", "s", "숫자로 읽을 수 없습니다"),
    ("150 kg", "s", "알 수 없습니다"),
    ("150 GB", "s", "맞지 않습니다"),
    ("1,5", "s", "알 수 없습니다"),
    (True, "s", "숫자를 입력하세요"),
    (float("nan"), "s", "유한한"),
    ("1e999", "s", "너무 큽니다"),
    (10**400, "s", "너무 큽니다"),  # float(int) would raise OverflowError, not ResponseError
    (-(10**400), "", "너무 큽니다"),
    ("22 ms보다 작다", "ms", "알 수 없습니다"),  # a comparison is not a value
    ("22 ms 이상", "ms", "알 수 없습니다"),
    ("1/0", "", "분모가 0"),
    ("2/0.0 s", "s", "분모가 0"),
    ("1/2/3", "", "알 수 없습니다"),
    ("2/ s", "s", "알 수 없습니다"),
])
def test_parse_quantity_rejects_with_korean_message(text, unit, msg):
    with pytest.raises(ResponseError, match=msg):
        parse_quantity(text, unit)


# ------------------------------------------------------------------------------------------------
# Grading
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", [
    "한 번에 한 토큰씩",
    unicodedata.normalize("NFD", "한 번에 한 토큰씩"),
    "  한 번에 한 토큰씩  ",
    "한 번에 한 토큰씩\n",
    unicodedata.normalize("NFD", " 한번에 한토큰씩.\n"),
    "토큰을 하나씩 순서대로 만듭니다",
    unicodedata.normalize("NFD", "토큰 하나씩 차례로 만들어집니다"),
])
def test_short_answer_forms_grade_the_same(form):
    assert grade("01-check-1", form) == 1.0


@pytest.mark.parametrize("form", [
    "여러 토큰을 한꺼번에",
    "병렬로 한 번에 토큰 여러 개씩",
    "문장 전체를 한 번에",
    "모르겠어요",
    "토큰",
])
def test_short_answer_wrong_forms(form):
    assert grade("01-check-1", form) in (0.0, None)  # never credited; undecidable ones go to review


def test_short_answer_keywords_and_forbidden():
    assert grade("03-check-2", unicodedata.normalize("NFD", "작은 지연이 계속 쌓이기 때문 ")) == 1.0
    assert grade("03-check-2", "에이전트가 도구를 여러 번 부르면 지연이 누적돼서") == 1.0
    assert grade("03-check-2", "지연이 누적되지 않으니 괜찮다") == 0.0
    assert grade("03-check-2", "모델이 틀려서") == 0.0
    assert grade("02-decode-bottleneck-term", "메모리 대역폭입니다") == 1.0
    assert grade("02-decode-bottleneck-term", "Memory Bandwidth") == 1.0
    assert grade("02-decode-bottleneck-term", "FLOP/s") == 0.0
    assert grade("02-decode-bottleneck-term", "DRAM 대역폭") == 1.0
    assert grade("01-prereq-processor", "c") == 1.0 and grade("01-prereq-processor", "a") == 0.0


# Keyword grading must not accept a negated statement or the right word in the wrong domain.
WRONG_SHORT = [
    ("03-check-2", "지연이 늘어나지 않기 때문"),
    ("03-check-2", "커지지 않으니까"),
    ("03-check-2", "지연이늘어나지않기때문"),
    ("03-check-2", "지연이 쌓이지 않기 때문입니다"),
    ("03-check-2", "안 쌓이니까"),
    ("03-check-2", "누적 안 되니까"),
    ("03-check-2", "지연이 늘어날 수 없어서"),
    ("03-check-2", "지연이 커지지는 않아서"),
    ("03-check-2", "지연이 모이지 않으니까"),
    ("03-check-2", "누적돼서 그런 건 아니다"),
    ("03-check-2", "쌓이는 건 아니고 모델이 느려서"),
    ("03-check-2", "모델이 커지기 때문"),
    ("03-check-2", "KV 캐시가 쌓여서"),
    ("03-check-2", "비용이 늘어나서"),
    ("02-decode-bottleneck-term", "네트워크 대역폭"),
    ("02-decode-bottleneck-term", "PCIe 대역폭"),
    ("02-decode-bottleneck-term", "NVLink 대역폭"),
    ("02-decode-bottleneck-term", "대역폭이 아니다"),
    ("02-decode-bottleneck-term", "메모리 대역폭이 아니다"),
    ("02-decode-bottleneck-term", "메모리 대역폭은 아님"),
    ("02-decode-bottleneck-term", "대역폭"),
    ("02-decode-bottleneck-term", "메모리 용량"),
    ("02-decode-bottleneck-term", "연산 대역폭"),
    ("01-check-1", "토큰이 하나씩 아닌"),
    ("01-check-1", "토큰을 하나씩 만들지 않는다"),
    ("01-check-1", "토큰 하나씩 만들지 않고 문장 전체를 만든다"),
    ("01-check-1", "토큰을 하나씩이 아니라"),
    ("01-check-1", "토큰을 역순으로 하나씩"),
    ("05-low-latency-def", "응답이 없는 시간"),
    ("05-low-latency-def", "요청 간격 시간"),
    ("05-low-latency-def", "답을 학습하는 시간"),
    ("05-low-latency-def", "응답 길이"),
]

# Natural right answers that are not accepted forms, some with a negation word outside the keyword's scope.
RIGHT_SHORT = [
    ("03-check-2", "사라지지 않고 계속 쌓이기 때문"),
    ("03-check-2", "끝없이 쌓여서"),
    ("03-check-2", "무시할 수 없을 만큼 쌓여서"),
    ("03-check-2", "작은 지연도 쌓이면 무시할 수 없다"),
    ("03-check-2", "지연이 합쳐져서 커지니까"),
    ("03-check-2", "토큰마다 지연이 더해지기 때문입니다"),
    ("03-check-2", "지연이 커져서"),  # conjugated stems: 커져/커질, 늘어날, 불어날
    ("03-check-2", "지연이 늘어날 수 있어서"),
    ("03-check-2", "지연이 불어날 수 있으니까"),
    ("03-check-2", "작은 지연이 모여서 커짐"),
    ("02-decode-bottleneck-term", "GPU 메모리 대역폭"),
    ("02-decode-bottleneck-term", "메모리(HBM) 대역폭이요"),
    ("02-decode-bottleneck-term", "메모리 읽기 대역폭"),
    ("01-check-1", "한 번에 토큰 하나씩 내놓는다"),
    ("01-check-1", "토큰을 하나씩 차례로 만듭니다"),
    ("01-check-1", "토큰을 차례차례"),
    ("05-low-latency-def", "요청을 보내고 응답이 올 때까지 기다리는 시간"),
    ("05-low-latency-def", "답을 기다리는 시간"),
]


@pytest.mark.parametrize(("qid", "form"), WRONG_SHORT)
def test_short_answer_negated_or_wrong_domain_scores_zero(qid, form):
    assert grade(qid, form) in (0.0, None)  # never credited (a misconception is 0, the rest is reviewed)
    assert grade(qid, unicodedata.normalize("NFD", form)) == grade(qid, form)


@pytest.mark.parametrize(("qid", "form"), RIGHT_SHORT)
def test_short_answer_right_forms_survive_the_negation_guard(qid, form):
    assert grade(qid, form) == (None if qid == "03-check-2" and "지연" not in form else 1.0)


def test_accepted_short_forms_pass_with_a_polite_ending():
    shorts = [q for q in load_quizzes() if q.kind == "short"]
    assert len(shorts) == 4
    for q in shorts:
        for form in [q.answer, *q.accepted]:
            assert check(q, form).score == 1.0, (q.id, form)
            assert check(q, unicodedata.normalize("NFD", f" {form}입니다.")).score == 1.0, (q.id, form)


def _numeric(answer: float, tolerance: float, unit: str = "s") -> NumericQuestion:
    return NumericQuestion(id="03-t", kind="numeric", prompt="몇 초인가요?", answer=answer, tolerance=tolerance,
                           unit=unit, explanation="테스트입니다.", source={"notebook": "03", "passage": "tt"})


def test_numeric_tolerance_boundaries():
    q = _numeric(150, 0.5)
    for inside in (150, 150.5, 149.5, "150.5 s", "149.5초", "2.5분", "150000 ms", "0.0416667 h"):
        assert check(q, inside).score == 1.0, inside
    for outside in (150.51, 149.49, "151", "150.6 s", "2.6분", "-150"):
        assert check(q, outside).score == 0.0, outside
    exact = _numeric(3, 0, "개")
    assert check(exact, "3").score == 1.0 and check(exact, "3개").score == 1.0
    assert check(exact, 3.0000001).score == 0.0
    # the shipped questions
    assert grade("03-added-latency", "43.2 s") == grade("03-added-latency", "0.72 min") == 1.0
    assert grade("03-added-latency", "6") == 0.0
    assert grade("04-acceptance-rate", "62%") == grade("04-acceptance-rate", 0.62) == 1.0
    assert grade("02-kv-bytes-per-token", "262144 B") == 1.0
    assert grade("02-kv-bytes-per-token", "0.26 MB") == 1.0  # within 0.005 MB
    assert grade("02-kv-bytes-per-token", "0.27") == 0.0
    assert grade("04-speedup", "1.96배") == 1.0
    # what students type (issue 17): trailing Korean words, a trailing dot, ns and MiB
    assert grade("02-decode-step-time", "3.46ms입니다") == grade("02-decode-step-time", "3.5 ms 정도") == 1.0
    assert grade("02-decode-step-time", "3.46.") == grade("02-decode-step-time", "3458 us") == 1.0
    assert grade("05-sram-read-time", "2000 ns") == grade("05-sram-read-time", "2 µs쯤") == 1.0
    assert grade("02-kv-bytes-context", "2048 MiB") == 1.0  # 2.147e9 bytes
    assert grade("02-decode-step-time", "3.46 ms보다 작다") == 0.0


def test_numeric_fraction_answers():
    # 01-topk-prob: 4/17 = 0.2353 (tolerance 0.005); a student may well type the fraction
    assert grade("01-topk-prob", "4/17") == grade("01-topk-prob", "0.2353") == 1.0
    assert grade("01-topk-prob", "2/5") == 0.0
    assert grade("01-topk-prob", "2/0") == 0.0
    assert grade("04-residual", "5/6") == 1.0
    assert grade("03-added-latency", 10**400) == 0.0  # scores 0, never raises


def test_numeric_bad_input_scores_zero_and_parse_explains():
    assert grade("03-added-latency", "백오십 초") == 0.0
    assert grade("03-added-latency", None) == 0.0
    assert grade("03-added-latency", ["43.2"]) == 0.0
    q = next(q for q in load_quizzes() if q.id == "03-added-latency")
    with pytest.raises(ResponseError, match="숫자"):
        parse_response(q, "백오십 초")


def test_single_choice_forms():
    assert grade("01-decode-definition", "c") == 1.0
    assert grade("01-decode-definition", " C ") == 1.0
    assert grade("01-decode-definition", "a") == 0.0
    assert grade("01-decode-definition", "z") == 0.0
    assert grade("01-decode-definition", 2) == 0.0


def test_multiple_choice_partial_credit():
    qid = "04-when-not"  # right: b, c, d
    assert grade(qid, ["b", "c", "d"]) == 1.0
    assert grade(qid, "d, c, b") == 1.0
    assert grade(qid, "bcd") == 1.0
    assert grade(qid, ["b", "c"]) == pytest.approx(2 / 3)
    assert grade(qid, ["a", "b", "c", "d"]) == pytest.approx(2 / 3)
    assert grade(qid, ["b", "a"]) == 0.0
    assert grade(qid, ["a"]) == 0.0
    assert grade(qid, ["b", "x"]) == 0.0  # unknown option: unreadable, not graded
    res = check(next(q for q in load_quizzes() if q.id == qid), ["b", "a"])
    assert any(line.startswith("a (고르지 말아야 할 것)") for line in res.feedback)
    assert "빠뜨린 정답: c, d" in res.feedback


def test_ordering_forms():
    qid = "04-round-order"  # E C A D B
    assert grade(qid, ["E", "C", "A", "D", "B"]) == 1.0
    assert grade(qid, "e c a d b") == 1.0
    assert grade(qid, "E → C → A → D → B") == 1.0
    assert grade(qid, "ECADB") == 1.0
    assert grade(qid, "E C A B D") == 0.0
    assert grade(qid, "E C A D") == 0.0  # an item missing
    assert grade(qid, "E E C A D") == 0.0


def test_grade_unknown_question():
    with pytest.raises(KeyError, match="찾을 수 없습니다"):
        grade("01-no-such-question", "a")


def test_check_explains_wrong_choice():
    q = next(q for q in load_quizzes() if q.id == "01-decode-definition")
    res = check(q, "a")
    assert res.score == 0.0 and not res.correct
    assert res.feedback == ["a: " + q.choices[0].explanation]
    assert res.answer.startswith("c. ")
    assert check(q, "c").explanation == q.explanation


def test_id_and_quiz_set_patterns_are_defined_once():
    from decodelab.assess.quiz import schema, store, submission

    assert store.QUESTION_ID is submission.QUESTION_ID is schema.QUESTION_ID
    assert store.QUIZ_SET is submission.QUIZ_SET is schema.QUIZ_SET
    for mod in (store, submission):
        assert not hasattr(mod, "_QID") and not hasattr(mod, "_SET") and not hasattr(mod, "_QUIZ_SET")


def test_every_public_function_of_the_quiz_package_has_a_docstring():
    import ast

    missing = []
    for path in [*sorted((REPO / "decodelab" / "assess" / "quiz").glob("*.py")), REPO / "decodelab" / "assess" / "report.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def walk(node, prefix=""):
            for n in ast.iter_child_nodes(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_"):
                    if ast.get_docstring(n) is None:
                        missing.append(f"{path.name}:{n.lineno} {prefix}{n.name}")
                    if isinstance(n, ast.ClassDef):
                        walk(n, f"{prefix}{n.name}.")

        walk(tree)
    assert missing == []


def test_notebook_07_quiz_file_loads_and_shows(tmp_path):
    import shutil

    from decodelab.assess.quiz import quiz_widget

    q = tmp_path / "q"
    shutil.copytree(QUIZ_DIR, q, ignore=shutil.ignore_patterns("exercises"))
    (q / "07.yaml").write_text(textwrap.dedent(
        """\
        notebook: "07"
        title: 실제 서버 측정
        questions:
          - id: 07-server-ttft
            kind: single
            prompt: 서버에서 잰 TTFT에 들어가는 것은 무엇인가요?
            choices:
              - {id: a, text: 프리필과 대기열 시간}
              - {id: b, text: 마지막 토큰이 나온 시각, explanation: 그것은 전체 지연의 끝입니다.}
            answer: a
            explanation: TTFT는 요청부터 첫 토큰까지의 시간입니다.
            source: {notebook: "07", passage: 서버 측정}
        """), encoding="utf-8")
    qs = load_quizzes(q, notebook="07")
    assert [x.id for x in qs] == ["07-server-ttft"]
    w = quiz_widget("07", quizzes_dir=q, answers_dir=tmp_path / "answers")
    assert list(w.views) == ["07-server-ttft"]
    # the written 07.yaml replaces the shipped one (notebook 07's own quiz)
    assert len(load_quizzes(q)) == len(load_quizzes()) - len(load_quizzes(notebook="07")) + 1
