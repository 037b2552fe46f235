"""The gradebook a lecturer can trust: blank / wrong / review / written cells, per-notebook maxima,
duplicates by content, every skipped file counted, input hygiene, and no LMS file from the practice report."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from decodelab.assess.report import DUPLICATE_RULE, grade_folder, report_csv
from decodelab.assess.report import main as grade_main
from decodelab.assess.quiz import REVIEW, AnswerStore, grade, load_quizzes, read_submission
from decodelab.assess.quiz import grading
from decodelab.assess.quiz.submission import SubmissionError, make_submission

QUESTIONS = load_quizzes(notebook="03")
BY_ID = {q.id: q for q in QUESTIONS}
SHORT = next(q for q in QUESTIONS if q.kind == "short")
SINGLE = next(q for q in QUESTIONS if q.kind == "single")
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def _wrong_choice(q) -> str:
    return next(c.id for c in q.choices if c.id != q.answer)


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _rows(text: str) -> list[dict]:
    rows = list(csv.reader(io.StringIO(text)))
    return [dict(zip(rows[0], r)) for r in rows[1:]]


@pytest.fixture()
def undecided(monkeypatch):
    """A short-answer rule that cannot decide one answer (the contract of grade_short: None)."""
    real = grading.grade_short

    def fake(question, text):
        return None if "애매" in text else real(question, text)

    monkeypatch.setattr(grading, "grade_short", fake)
    return fake


def test_grade_returns_none_for_review_and_a_float_otherwise(undecided):
    assert grade(SHORT, "애매한 답") is None  # goes to the lecturer's review
    assert grade(SHORT.id, SHORT.answer) == 1.0
    assert grade(SINGLE.id, _wrong_choice(SINGLE)) == 0.0
    assert grade(SINGLE, SINGLE.answer) == 1.0
    assert grade(SHORT, "   ") == 0.0  # unreadable input is wrong, not review
    r = grading.check(SHORT, "애매한 답")
    assert r.score is None and r.review and not r.correct


def test_blank_wrong_review_and_text_cells(tmp_path, undecided):
    d = tmp_path / "s"
    d.mkdir()
    _write(d / "a.json", make_submission("alice", {SINGLE.id: _wrong_choice(SINGLE), SHORT.id: "애매한 답"}))
    _write(d / "b.json", make_submission("bob", {SINGLE.id: SINGLE.answer}))
    book = grade_folder(d, QUESTIONS, exercises={}, now=NOW)
    alice, bob = _rows(report_csv(book))
    assert alice[SINGLE.id] == "0"  # answered wrong
    assert alice[SHORT.id] == REVIEW == "검토 필요"  # awaiting review, not 0
    assert alice[f"{SHORT.id} [답]"] == "애매한 답"  # the text, for the review
    assert alice["검토 필요"] == "1"
    assert bob[SHORT.id] == "" and bob[f"{SHORT.id} [답]"] == ""  # never answered: blank
    assert bob[SINGLE.id] == f"{SINGLE.points:g}"
    others = [q.id for q in QUESTIONS if q.id not in (SINGLE.id, SHORT.id)]
    assert all(alice[q] == "" and bob[q] == "" for q in others)
    # the question awaiting review counts in no total and no maximum until reviewed
    full = sum(q.points for q in QUESTIONS)
    assert (alice["total"], alice["max"]) == ("0", f"{full - SHORT.points:g}")
    assert (bob["total"], bob["max"]) == (f"{SINGLE.points:g}", f"{full:g}")
    assert alice["03 만점"] == f"{full - SHORT.points:g}" and bob["03 만점"] == f"{full:g}"
    assert "검토 필요 1건" in book.summary()


def test_the_widget_shows_an_undecided_answer_for_a_self_check_and_keeps_it_for_the_lecturer(tmp_path, undecided):
    from decodelab.assess.quiz import quiz_widget

    w = quiz_widget("03", answers_dir=tmp_path / "answers")
    v = w.views[SHORT.id]
    v.set_response("애매한 답")
    v.submit()
    assert "맞았는지 스스로 확인" in v.feedback.value and v.review and v.score is None
    assert "규칙으로 채점하지 못한 문항 1개" in w.score_label.value
    full = sum(q.points for q in QUESTIONS)
    assert w.score() == (0.0, full - SHORT.points)
    rec = AnswerStore("course", tmp_path / "answers").get(SHORT.id)
    assert rec["response"] == "애매한 답" and rec["score"] is None  # saved, and exported like any answer
    w2 = quiz_widget("03", answers_dir=tmp_path / "answers")  # reopened: still awaiting
    assert "맞았는지 스스로 확인" in w2.views[SHORT.id].feedback.value and w2.views[SHORT.id].review


def test_per_notebook_max_comes_from_that_notebooks_questions(tmp_path):
    every = load_quizzes()
    d = tmp_path / "s"
    d.mkdir()
    q1 = next(q for q in every if q.notebook == "01" and q.kind == "single")
    _write(d / "a.json", make_submission("alice", {q1.id: q1.answer}))
    book = grade_folder(d, every, exercises={}, now=NOW)
    (row,) = _rows(report_csv(book))
    for nb in sorted({q.notebook for q in every}):
        assert row[f"{nb} 만점"] == f"{sum(q.points for q in every if q.notebook == nb):g}"
    assert row["01 점수"] == f"{q1.points:g}" and row["02 점수"] == "0"


# --------------------------------------------------------------------------------------------
# Duplicates
# --------------------------------------------------------------------------------------------


def test_a_future_exported_at_does_not_win_by_itself(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    honest = make_submission("alice", {SINGLE.id: SINGLE.answer})
    honest["exported_at"] = "2026-11-30T09:00:00+00:00"
    cheat = make_submission("alice", {SINGLE.id: _wrong_choice(SINGLE)})
    cheat["exported_at"] = "2099-01-01T00:00:00+00:00"  # far in the future of the grading run
    _write(d / "a.json", honest)
    _write(d / "z.json", cheat)
    book = grade_folder(d, QUESTIONS, exercises={}, now=NOW)
    (row,) = book.rows
    assert row.file == "a.json" and row.total == SINGLE.points
    msgs = [str(p) for p in book.warnings]
    assert any("z.json" in m and "미래" in m for m in msgs), msgs
    assert any("z.json" in m and "a.json" in m and DUPLICATE_RULE in m for m in msgs), msgs


def test_more_answers_beats_a_later_timestamp_and_same_content_is_one_submission(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    full = make_submission("bob", {SINGLE.id: SINGLE.answer, SHORT.id: SHORT.answer})
    full["exported_at"] = "2026-11-30T09:00:00+00:00"
    partial = make_submission("BOB", {SINGLE.id: SINGLE.answer})
    partial["exported_at"] = "2026-11-30T10:00:00+00:00"
    _write(d / "1.json", full)
    _write(d / "2.json", partial)
    copy = dict(full)
    copy["exported_at"] = "2026-11-30T08:00:00+00:00"
    _write(d / "3.json", copy)
    book = grade_folder(d, QUESTIONS, exercises={}, now=NOW)
    (row,) = book.rows
    assert row.file == "1.json" and book.duplicates == 2
    msgs = {p.file: p.message for p in book.warnings}
    assert "내용이 같은 중복 파일" in msgs["3.json"] and "답이 다른 제출" in msgs["2.json"]
    assert "중복 제출 2건" in book.summary()


# --------------------------------------------------------------------------------------------
# Input hygiene: each case with its input
# --------------------------------------------------------------------------------------------


def test_a_quiz_set_with_a_final_newline_is_rejected(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    good = make_submission("alice", {SINGLE.id: SINGLE.answer})
    _write(d / "a.json", good)
    _write(d / "b.json", {**good, "quiz_set": "course\n"})  # Python's $ would match before the \n
    book = grade_folder(d, QUESTIONS, exercises={}, now=NOW)
    assert [r.quiz_set for r in book.rows] == ["course"]  # no second row for the same student
    (skip,) = book.skipped
    assert skip.file == "b.json" and "quiz_set" in skip.message
    with pytest.raises(ValueError):
        AnswerStore("course\n", tmp_path / "answers")
    with pytest.raises(ValueError):
        AnswerStore("exam-0123456789ab\n", tmp_path / "answers")


@pytest.mark.parametrize("bad", ["01-greedy\n", "01-greedy\n\n", "09-greedy", "01-Greedy"])
def test_question_ids_are_matched_whole(tmp_path, bad):
    good = make_submission("alice", {})
    with pytest.raises(SubmissionError, match="문항 id"):
        read_submission(_write(tmp_path / "x.json", {**good, "answers": {bad: "a"}}))
    with pytest.raises(ValueError, match="문항 id"):
        AnswerStore("course", tmp_path / "answers").save(bad, "a")


@pytest.mark.parametrize("sid", ["alice\n", "alice\nbob", "\nalice2"])
def test_student_ids_are_matched_whole(sid):
    from decodelab.assess.quiz.submission import validate_student_id

    if sid.strip() != sid and "\n" not in sid.strip():
        assert validate_student_id(sid) == sid.strip()  # surrounding whitespace is stripped, then matched whole
    else:
        with pytest.raises(ValueError, match="학번"):
            validate_student_id(sid)


def test_a_1001_answer_file_gets_a_korean_message(tmp_path):
    sub = make_submission("alice", {})
    sub["answers"] = {f"01-q{i}": "a" for i in range(1001)}
    p = _write(tmp_path / "big.json", sub)
    with pytest.raises(SubmissionError) as info:
        read_submission(p)
    msg = str(info.value)
    assert "답이 너무 많습니다 (1,001개, 한도 1,000개)" in msg and "should" not in msg


def test_a_truncated_saved_answer_is_reported_naming_the_question(tmp_path):
    store = AnswerStore("course", tmp_path / "answers")
    store.save("03-agent-def", "a")
    store.save("03-levers", ["a", "b"])
    p = store.dir / "03-agent-def.json"
    p.write_text(p.read_text(encoding="utf-8")[:20], encoding="utf-8")  # cut off mid-write
    saved = store.load()
    assert list(saved) == ["03-levers"]
    (msg,) = store.problems
    assert msg.startswith("문항 03-agent-def: 저장된 답을 읽을 수 없습니다") and "잘렸거나 손상" in msg
    assert "Expecting" not in msg and "line 1" not in msg  # not Python's raw JSON error
    assert store.problem_ids == ["03-agent-def"] and p.exists()  # left on disk


def test_every_skipped_file_is_reported_and_counted(tmp_path, capsys):
    d = tmp_path / "s"
    d.mkdir()
    _write(d / "a.json", make_submission("alice", {SINGLE.id: SINGLE.answer}))
    _write(d / ".b.json", make_submission("bob", {SINGLE.id: SINGLE.answer}))
    (d / ".DS_Store").write_bytes(b"\x00")
    (d / "notes.txt").write_text("x", encoding="utf-8")
    (d / "old.csv").write_text("x", encoding="utf-8")
    book = grade_folder(d, QUESTIONS, exercises={}, now=NOW)
    assert {p.file for p in book.skipped} == {".b.json", ".DS_Store", "notes.txt"}
    assert all(p.message for p in book.skipped)
    assert [p.file for p in book.ignored] == ["old.csv"]
    assert "건너뛴 파일 3개" in book.summary() and "읽지 않은 파일 1개" in book.summary()
    assert grade_main([str(d), "-o", str(tmp_path / "gb.csv"), "--notebook", "03"]) == 1
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and "건너뛴 파일 3개" in out
    assert "건너뜀: .b.json: 숨김 파일" in err and "건너뜀: .DS_Store" in err and "건너뜀: notes.txt" in err


# --------------------------------------------------------------------------------------------
# the practice report writes no LMS file (the graded path's export is the one LMS writer)
# --------------------------------------------------------------------------------------------


def test_the_practice_report_writes_no_lms_file(tmp_path, capsys):
    d = tmp_path / "s"
    d.mkdir()
    _write(d / "a.json", make_submission("alice", {SINGLE.id: SINGLE.answer}))
    out = tmp_path / "gb.csv"
    assert grade_main([str(d), "-o", str(out)]) == 0
    written = {p.name for p in tmp_path.iterdir()} - {"s"}
    assert "gb.csv" in written and written <= {"gb.csv", "gb-rubric.md", "gb-predictions.md"}, written
    capsys.readouterr()
    with pytest.raises(SystemExit):  # the option is gone: argparse refuses it
        grade_main([str(d), "-o", str(out), "--lms", "moodle"])
    assert "--lms" in capsys.readouterr().err
    # grading the same folder with outputs inside it never reads them as submissions
    assert grade_main([str(d), "-o", str(d / "gb.csv")]) == 0
    assert grade_main([str(d), "-o", str(d / "gb.csv")]) == 0
