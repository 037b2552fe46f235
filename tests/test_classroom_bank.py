"""The exam bank on its own (no nbgrader run): parametric items, their keys, grading one cell."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from decodelab.classroom.assignments import write_course
from decodelab.classroom.bank import decide, decide_task, load_bank, variant
from decodelab.classroom.student import draw, student_id

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    d = tmp_path_factory.mktemp("course")
    write_course(d, bank_dir=ROOT / "classroom" / "exam")
    (d / "autograded" / "alice" / "exam-02").mkdir(parents=True)
    (d / "autograded" / "bob" / "exam-02").mkdir(parents=True)
    return d


@pytest.fixture(scope="module")
def bank(course):
    return load_bank(course / "exam")


def test_twenty_parametric_items_across_02_to_05(bank):
    per_nb = {nb: [i for i in bank.parametric.values() if i.notebook == nb] for nb in ("02", "03", "04", "05")}
    assert len(bank.parametric) >= 20 and all(len(v) >= 5 for v in per_nb.values())
    assert not set(bank.parametric) & {q["id"] for q in _practice_ids()}


def _practice_ids():
    import yaml

    for p in sorted((ROOT / "quizzes").glob("[0-9][0-9]*.yaml")):
        yield from yaml.safe_load(p.read_text(encoding="utf-8"))["questions"]


@pytest.mark.parametrize("item_id", ["02-x-step-time", "03-x-loop-total", "04-x-tokens-per-call", "05-x-kv-transfer"])
def test_keys_are_decodelab_formulas(bank, item_id):
    """Hand-checked figures (facts/hardware.md worked examples, Leviathan et al. Eq. 1)."""
    item = bank.parametric[item_id]
    p, want = {
        "02-x-step-time": ({"model": "Llama-3-70B", "dtype": "fp8", "hardware": "H100", "batch": 1, "context": 8192},
                           21.86),
        "03-x-loop-total": ({"depth": 50, "tokens": 300, "tool_ms": 2000, "tpot_ms": 20}, 399.0),  # 50 x (299 x 20 + 2000) ms
        "04-x-tokens-per-call": ({"alpha": 0.75, "gamma": 7}, (1 - 0.75 ** 8) / 0.25),
        "05-x-kv-transfer": ({"model": "Llama-3-70B", "tokens": 8192, "link": "NVLink"}, 5.97),
    }[item_id]
    assert item.answer(p) == pytest.approx(want, rel=2e-3)


def test_numbers_differ_per_student_and_answers_are_finite(bank):
    students = [f"s{n:03d}" for n in range(30)]
    for item in bank.parametric.values():
        answers = [variant(bank, item.id, s)[1].answer for s in students]
        assert all(math.isfinite(a) for a in answers), item.id
        assert len({round(a, 9) for a in answers}) >= 8, item.id  # a leaked key fits few classmates
        assert draw(item.id, item.params, "s001") == draw(item.id, item.params, "s001")  # reproducible
        q = item.question("s001")
        assert "{" not in q.prompt and "{" not in q.explanation


def test_decide_uses_the_named_student_not_the_notebook(bank):
    q = variant(bank, "04-x-speedup", "alice")[1]
    v = decide(bank, "04-x-speedup", "alice", f"{q.answer:.6g}배")
    assert v.points == v.max_points == q.points and "해설" in v.text
    assert decide(bank, "04-x-speedup", "bob", f"{q.answer:.6g}").points == 0.0  # alice's number, bob's grade
    assert decide(bank, "04-x-speedup", "alice", None).points == 0.0
    choice = bank.questions["02-e-bandwidth-chip"]
    assert decide(bank, choice.id, "alice", choice.answer).points == bank.points(choice)
    assert decide(bank, "02-e-ttft-tpot", "alice", "TPOT").points == 0.0  # a listed misconception
    v = decide(bank, "02-e-ttft-tpot", "alice", "프롬프트를 읽는 데 드는 시간")
    assert v.points is None and v.text.startswith("[검토 필요]")  # undecidable: the lecturer grades it


def _run_here(source, function, cases):
    """decide_task's runner without the sandbox (the sandboxed one: tests/test_classroom_sandbox.py)."""
    ns: dict = {}
    exec(source, ns)
    out = []
    for args in cases:
        try:
            out.append({"value": float(ns[function](*args))})
        except Exception as e:
            out.append({"error": str(e)})
    return out


def test_decide_task_partial_credit_per_case_with_expected_values_computed_here(bank):
    t = bank.tasks["04-c-tokens-per-call"]
    seen = []

    def run(source, function, cases):
        seen.append(cases)
        return _run_here(source, function, cases)

    full = "def tokens_per_call(alpha, gamma):\n    if alpha == 1:\n        return gamma + 1\n" \
           "    return (1 - alpha ** (gamma + 1)) / (1 - alpha)\n"
    assert decide_task(bank, t.id, full, run=run).points == t.points
    assert decide_task(bank, t.id, "def tokens_per_call(a, g):\n    return (1 - a ** (g + 1)) / (1 - a)\n",
                       run=run).points == pytest.approx(t.points * 3 / 4)  # alpha = 1 divides by zero
    assert decide_task(bank, t.id, None, run=run).points == 0.0
    assert all(c == t.cases for c in seen)  # only the inputs go to the runner


def test_task_feedback_never_shows_the_expected_values(bank):
    """Issue 44: the verdict becomes the feedback, and the cases are the same for every student: a
    wrong case printed with its expected value (6 digits) let a hard-coded table score 2/3."""
    for t in bank.tasks.values():
        lines = decide_task(bank, t.id, f"def {t.function}(*a):\n    return -1.0\n", run=_run_here).lines
        assert lines[:len(t.cases)] == [f"{t.function}{tuple(args)} = -1.0 (틀림)" for args in t.cases]


def test_each_task_stub_is_its_solutions_def_line_and_the_solution_scores_full(bank):
    assert len(bank.tasks) == 4
    for t in bank.tasks.values():
        assert t.notebook == t.id[:2] and t.points == 3
        head, mark = t.stub.splitlines()
        assert head.startswith(f"def {t.function}(") and head.endswith("):") and mark == "    ### SOLUTION", t.stub
        solved = t.stub.replace("    ### SOLUTION\n", t.solution)  # as the lecturer's copy (assignments.py) has it
        assert decide_task(bank, t.id, solved, run=_run_here).points == t.points, t.id
        stub = t.stub.replace("### SOLUTION", "pass")  # the student's stub, untouched
        assert decide_task(bank, t.id, stub, run=_run_here).points == 0.0, t.id


def test_student_side_holds_no_key(tmp_path, monkeypatch):
    import decodelab.classroom.bank as bank_module

    assert not any(hasattr(bank_module, n) for n in ("grade_cell", "grade_code", "course_context"))
    monkeypatch.setenv("JUPYTERHUB_USER", "hub-user")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert student_id() == "hub-user"
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert student_id(tmp_path / "autograded" / "carol" / "exam-02") == "carol"


def test_lms_export_rejects_unknown_system(course, tmp_path):
    from decodelab.classroom.lms import export

    with pytest.raises(ValueError, match="canvas"):
        export(course, "blackboard", tmp_path / "x.csv")


def test_lms_export_roster_in_cp949_and_unreadable_rosters(course, tmp_path, capsys):
    from decodelab.classroom.cli import export_command as export_main
    from decodelab.classroom.lms import _roster

    cp949 = tmp_path / "moodle.csv"
    cp949.write_bytes("username,이름\nalice,김앨리스\n".encode("cp949"))
    assert _roster(cp949) == [{"username": "alice", "이름": "김앨리스"}]
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b"username\n\xff\xfe\xff\n")
    for path, message in [(broken, "'CSV UTF-8(쉼표로 분리)'로 다시 저장하세요"),
                          (tmp_path / "none.csv", "없는 경로입니다"), (tmp_path, "파일이 아니라 폴더입니다")]:
        assert export_main([str(course), "--lms", "moodle", "-o", str(tmp_path / "o.csv"), "--roster", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and "LMS 명단(--roster)" in err and "Errno" not in err


def _visible(item) -> str:
    """What a student sees of an item before grading (prompt, choices, items)."""
    from decodelab.classroom.bank import Parametric, Task, Written

    if isinstance(item, (Parametric, Task, Written)):
        return item.prompt
    return " ".join([item.prompt, *(c.text for c in getattr(item, "choices", []) or []),
                     *(i.text for i in getattr(item, "items", []) or [])])


def test_no_accepted_answer_is_printed_in_another_item(bank):
    from decodelab.assess.quiz.normalize import normalize_text

    items = [i for nb in bank.notebooks for i in bank.items(nb)]
    shorts = [q for q in bank.questions.values() if q.kind == "short"]
    assert shorts
    for q in shorts:
        for form in (q.answer, *q.accepted):
            for other in items:
                if other.id != q.id:
                    assert normalize_text(form) not in normalize_text(_visible(other)), (q.id, form, other.id)
