"""The lecturer's grader: good, malformed, truncated, oversized and hostile submissions."""

from __future__ import annotations

import csv
import io
import json
import os
import unicodedata
from pathlib import Path

import pytest

from decodelab.assess.report import grade_folder, report_csv, write_report
from decodelab.assess.report import main as grade_main
from decodelab.assess.quiz import load_quizzes, read_submission
from decodelab.assess.quiz.submission import MAX_BYTES, SubmissionError, make_submission

QUESTIONS = load_quizzes(notebook="03")  # 15 questions: enough, and fast
IDS = [q.id for q in QUESTIONS]


def _key_answers() -> dict:
    return {q.id: q.answer for q in QUESTIONS}


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "subs"
    d.mkdir()
    # 1. everything right
    _write(d / "alice.json", make_submission("alice", _key_answers()))
    # 2. mixed, typed on a Mac (NFD), with units: hand-computed score below
    bob = {
        "03-check-2": unicodedata.normalize("NFD", " 작은 지연이 계속 쌓이기 때문\n"),  # right
        "03-added-latency": "0.72분",  # right (43.2 s)
        "03-loop-total-slow": "398.5 s",  # wrong (396 s, tolerance 2 s)
        "03-cnbc-coding": ["c"],  # partial: 1 of 2 right, no wrong -> 0.5
        "03-example-order": "A B C E D",  # wrong
        "03-agent-def": "a",  # wrong
        "03-levers": ["a", "b", "c"],  # (2 - 1) / 2 = 0.5
        "05-groq-focus": "b",  # a question outside this grading run: ignored with a warning
    }
    _write(d / "bob.json", make_submission("박보검 B", bob))
    # 3. a BOM (Windows Notepad) is fine
    (d / "carol.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(make_submission("carol", {"03-agent-def": "b"})).encode())
    # bad files
    (d / "malformed.json").write_text("{not json at all", encoding="utf-8")
    good = json.dumps(make_submission("dave", _key_answers()), ensure_ascii=False)
    (d / "truncated.json").write_text(good[: len(good) // 2], encoding="utf-8")
    big = make_submission("erin", {"03-agent-def": "a"})
    big["padding"] = "x" * (MAX_BYTES + 10)
    _write(d / "oversized.json", big)
    (d / "empty.json").write_bytes(b"")
    (d / "binary.json").write_bytes(os.urandom(512) + b"\xff\xfe")
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (d / "nan.json").write_text(json.dumps(make_submission("frank", {})).replace('"answers": {}', '"answers": {"03-added-latency": NaN}'), encoding="utf-8")
    (d / "bigint.json").write_text(json.dumps(make_submission("gina", {})).replace('"answers": {}', '"answers": {"03-added-latency": ' + "9" * 5000 + "}"), encoding="utf-8")
    # 401 digits: a valid JSON int under Python's digit limit, but float() of it overflows
    (d / "hugeint.json").write_text(json.dumps(make_submission("hank", {})).replace('"answers": {}', '"answers": {"03-added-latency": ' + "9" * 401 + "}"), encoding="utf-8")
    (d / "dupkey.json").write_text('{"format": "decodelab-quiz-submission", "version": 1, "student_id": "h", "student_id": "alice", "answers": {}}', encoding="utf-8")
    _write(d / "formula.json", {**make_submission("ivan", {}), "student_id": "=HYPERLINK(\"http://x\")"})
    _write(d / "wrongformat.json", {"hello": "world"})
    _write(d / "list.json", [1, 2, 3])
    _write(d / "future.json", {**make_submission("jay", {}), "version": 99})
    _write(d / "badanswer.json", {**make_submission("kim", {}), "answers": {"03-agent-def": {"$ne": 1}}})
    _write(d / "hugeanswer.json", {**make_submission("lee", {}), "answers": {"03-check-2": "누적" * 1500}})
    canary = d.parent / "PWNED"
    _write(d / "evil.json", make_submission("mallory", {"03-check-2": f"__import__('pathlib').Path({str(canary)!r}).touch()",
                                                         "03-added-latency": "__import__('os').system('touch PWNED')"}))
    (d / "notes.txt").write_text("not a submission", encoding="utf-8")
    (d / ".DS_Store").write_bytes(b"\x00\x01")  # dot files are reported and counted, never dropped silently
    _write(d / ".hidden.json", make_submission("nina", {"03-agent-def": "a"}))
    (d / "sub").mkdir()
    os.symlink(d / "alice.json", d / "link.json")
    if hasattr(os, "mkfifo"):
        os.mkfifo(d / "fifo.json")  # would block a naive open()
    return d


EXPECTED_BAD = {
    "malformed.json": "JSON 형식이 아닙니다",
    "truncated.json": "JSON 형식이 아닙니다",
    "oversized.json": "너무 큽니다",
    "empty.json": "빈 파일",
    "binary.json": "UTF-8",
    "deep.json": "중첩",
    "nan.json": "NaN",
    "bigint.json": "자릿수가 너무 많습니다",
    "hugeint.json": "숫자가 너무 큽니다",
    "dupkey.json": "두 번",
    "formula.json": "학번",
    "wrongformat.json": "decodelab 제출 파일이 아닙니다",
    "list.json": "객체",
    "future.json": "버전",
    "badanswer.json": "문항 03-agent-def: 답은",
    ".DS_Store": "숨김 파일",
    ".hidden.json": "숨김 파일",
    "hugeanswer.json": "문항 03-check-2: 답은 2000자 이내",
    "notes.txt": ".json 파일이 아닙니다",
    "sub": "폴더",
    "link.json": "심볼릭 링크",
    "fifo.json": "일반 파일이 아닙니다",
}


def test_grade_folder_keeps_good_rows_and_reports_bad_files(folder):
    book = grade_folder(folder, QUESTIONS)
    rows = {r.student_id: r for r in book.rows}
    assert set(rows) == {"alice", "박보검 B", "carol", "mallory"}
    assert book.question_ids == IDS
    assert rows["alice"].total == rows["alice"].max == len(IDS)
    bob = rows["박보검 B"]
    assert bob.scores["03-check-2"] == 1.0
    assert bob.scores["03-added-latency"] == 1.0
    assert bob.scores["03-loop-total-slow"] == 0.0
    assert bob.scores["03-cnbc-coding"] == 0.5
    assert bob.scores["03-example-order"] == 0.0
    assert bob.scores["03-agent-def"] == 0.0
    assert bob.scores["03-levers"] == 0.5
    assert bob.total == 3.0
    assert rows["carol"].total == 1.0
    assert rows["mallory"].total == 0.0
    assert not (folder.parent / "PWNED").exists() and not Path("PWNED").exists()
    skipped = {p.file: p.message for p in book.skipped}
    expected = dict(EXPECTED_BAD)
    if not hasattr(os, "mkfifo"):
        expected.pop("fifo.json")
    assert set(skipped) == set(expected)
    for name, fragment in expected.items():
        assert fragment in skipped[name], (name, skipped[name])
    # an id outside this grading run: counted once for the summary line, no notice per file
    assert book.warnings == [] and dict(book.unknown_ids) == {"05-groq-focus": 1}
    assert f"건너뛴 파일 {len(expected)}개" in book.summary() and "05-groq-focus" in book.summary()


def test_numbers_in_answers_are_bounded(tmp_path):
    from decodelab.assess.quiz.submission import MAX_NUMBER

    assert read_submission(_write(tmp_path / "ok.json", make_submission("a", {"03-added-latency": -(10**15)}))).answers
    for bad in (10**15 + 1, -(10**400), 1e16, -1e300):
        with pytest.raises(ValueError, match="숫자가 너무 큽니다"):
            make_submission("a", {"03-added-latency": bad})
        raw = json.dumps(make_submission("a", {})).replace('"answers": {}', f'"answers": {{"03-added-latency": {bad!r}}}')
        (tmp_path / "bad.json").write_text(raw, encoding="utf-8")
        with pytest.raises(SubmissionError, match="숫자가 너무 큽니다"):
            read_submission(tmp_path / "bad.json")
    assert MAX_NUMBER == 1e15


def test_an_error_while_grading_one_file_skips_only_that_file(tmp_path, monkeypatch):
    import decodelab.assess.report as gb

    d = tmp_path / "s"
    d.mkdir()
    _write(d / "a.json", make_submission("alice", {"03-agent-def": "b"}))
    _write(d / "b.json", make_submission("bob", {"03-agent-def": "boom"}))
    _write(d / "c.json", make_submission("carol", {"03-agent-def": "b", "03-added-latency": "43.2 s"}))
    real = gb.score_response

    def fragile(q, response):  # stands in for any bug a hostile answer might still hit
        if response == "boom":
            raise OverflowError("int too large to convert to float")
        return real(q, response)

    monkeypatch.setattr(gb, "score_response", fragile)
    book = grade_folder(d, QUESTIONS)
    assert [(r.student_id, r.total) for r in book.rows] == [("alice", 1.0), ("carol", 2.0)]
    assert [(p.file, p.skipped) for p in book.problems] == [("b.json", True)]
    assert "OverflowError" in book.problems[0].message
    out = write_report(book, tmp_path / "gb.csv")
    assert len(list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"))))) == 3


def test_atomic_write_keeps_the_mode_of_an_existing_file(tmp_path):
    from decodelab._atomic import atomic_write_bytes

    book = grade_folder(tmp_path, QUESTIONS)  # empty folder: header only
    new = write_report(book, tmp_path / "new.csv")
    assert new.stat().st_mode & 0o777 == 0o600  # a new file is private
    shared = tmp_path / "shared.csv"
    shared.write_text("old", encoding="utf-8")
    os.chmod(shared, 0o640)
    write_report(book, shared)
    assert shared.stat().st_mode & 0o777 == 0o640
    assert shared.read_text(encoding="utf-8-sig").startswith("student_id,")
    os.chmod(shared, 0o444)  # read-only is kept too; the folder is writable, so the replace works
    atomic_write_bytes(shared, b"x")
    assert shared.stat().st_mode & 0o777 == 0o444 and shared.read_bytes() == b"x"


def test_report_csv_columns_and_atomic_write(folder, tmp_path, monkeypatch):
    book = grade_folder(folder, QUESTIONS, exercises={})  # question columns only (exercise columns: test_exercises)
    out = tmp_path / "gradebook.csv"
    out.write_text("old gradebook", encoding="utf-8")
    write_report(book, out)
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    shorts = [q.id for q in QUESTIONS if q.kind == "short"]
    assert rows[0] == ["student_id", "quiz_set", "file", "shuffle_key", *IDS, *(f"{q} [답]" for q in shorts),
                       "03 점수", "03 만점", "검토 필요", "total", "max", "percent"]
    by_id = {r[0]: r for r in rows[1:]}
    assert len(rows) == 1 + 4
    assert by_id["박보검 B"][-6:] == ["3", "15", "0", "3", "15", "20.0"]
    assert by_id["alice"][-3:] == ["15", "15", "100.0"]
    assert by_id["박보검 B"][4 + IDS.index("03-cnbc-coding")] == "0.5"
    # blank = not answered, 0 = wrong
    assert by_id["박보검 B"][4 + IDS.index("03-agent-def")] == "0"
    unanswered = [q for q in IDS if q not in ("03-check-2", "03-added-latency", "03-loop-total-slow", "03-cnbc-coding",
                                              "03-example-order", "03-agent-def", "03-levers")]
    assert unanswered and all(by_id["박보검 B"][4 + IDS.index(q)] == "" for q in unanswered)
    assert by_id["박보검 B"][rows[0].index("03-check-2 [답]")].strip() == "작은 지연이 계속 쌓이기 때문"

    # a failing write leaves the previous gradebook intact and no temporary file behind
    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_report(book, out)
    monkeypatch.undo()
    assert out.read_bytes() == raw
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_csv_cells_cannot_be_formulas(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    _write(d / "=cmd.json", make_submission("x1", {}))
    book = grade_folder(d, QUESTIONS)
    text = report_csv(book)
    assert "'=cmd.json" in text
    with pytest.raises(ValueError, match="학번"):
        make_submission("=1+1", {})
    with pytest.raises(ValueError, match="학번"):
        make_submission("-2", {})


def test_duplicate_student_keeps_latest_export(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    old = make_submission("alice", {"03-agent-def": "a"})
    old["exported_at"] = "2026-03-01T09:00:00+00:00"
    new = make_submission("ALICE", {"03-agent-def": "b"})
    new["exported_at"] = "2026-03-02T09:00:00+09:00"
    _write(d / "b_new.json", new)
    _write(d / "a_old.json", old)
    book = grade_folder(d, QUESTIONS)
    assert [(r.student_id, r.total) for r in book.rows] == [("ALICE", 1.0)]
    assert book.skipped == [] and book.duplicates == 1
    (dup,) = book.warnings
    assert dup.file == "a_old.json" and "b_new.json" in dup.message and "규칙" in dup.message


def test_read_submission_roundtrip(tmp_path):
    p = _write(tmp_path / "s.json", make_submission(" 홍길동 ", {"03-agent-def": "a", "03-added-latency": 150}))
    sub = read_submission(p)
    assert sub.student_id == "홍길동"
    assert sub.answers == {"03-agent-def": "a", "03-added-latency": 150}
    with pytest.raises(SubmissionError, match="너무 큽니다"):
        read_submission(p, max_bytes=10)


def test_cli_grade(folder, tmp_path, capsys):
    out = tmp_path / "gb.csv"
    rc = grade_main([str(folder), "-o", str(out), "--notebook", "03"])
    assert rc == 1  # written, but some files were skipped
    captured = capsys.readouterr()
    from decodelab.assess.exercises import Written, load_exercises

    ex03 = [d for k, d in load_exercises().items() if k.startswith("03-")]  # the repo's exercises of notebook 03
    summary = "학생 4명 채점 · 문항 15개 · " + (f"연습 {len(ex03)}개 · " if ex03 else "") + "검토 필요 "
    assert captured.out.startswith(summary)
    assert captured.out.count("\n") == 1  # one summary line
    assert "건너뜀: truncated.json: JSON 형식이 아닙니다" in captured.err
    assert "05-groq-focus" not in captured.err  # an answer to another notebook is no notice with --notebook
    n_short = sum(q.kind == "short" for q in QUESTIONS)
    n_ex = sum(1 if isinstance(d, Written) else 2 for d in ex03)  # [예측]+[실제], [서술], [실습]+[값]
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert len(rows) == 5 and len(rows[0]) == 4 + 15 + n_short + 2 + n_ex + 1 + 3

    clean = tmp_path / "clean"
    clean.mkdir()
    _write(clean / "a.json", make_submission("alice", _key_answers()))
    assert grade_main([str(clean), "-o", str(tmp_path / "c.csv")]) == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "c.csv").read_text(encoding="utf-8-sig"))))
    every = load_quizzes()
    n_nb = len({q.notebook for q in every})
    n_short = sum(q.kind == "short" for q in every)
    from decodelab.assess.exercises import Written, load_exercises

    n_ex = sum(1 if isinstance(d, Written) else 2 for d in load_exercises().values())  # [예측]+[실제], [서술], [실습]+[값]
    assert len(rows[0]) == 4 + len(every) + n_short + 2 * n_nb + n_ex + 1 + 3
    assert rows[1][-3:] == ["15", f"{sum(q.points for q in every):g}", f"{100 * 15 / len(every):.1f}"]
    assert rows[1][rows[0].index("03 점수")] == "15" and rows[1][rows[0].index("01 점수")] == "0"
    assert rows[1][rows[0].index("01 만점")] == f"{sum(q.points for q in every if q.notebook == '01'):g}"

    assert grade_main([str(tmp_path / "missing"), "-o", str(tmp_path / "x.csv")]) == 2
    assert "제출 폴더가 없습니다" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    assert grade_main([str(clean), "-o", str(tmp_path / "no" / "dir.csv")]) == 2


def test_a_file_instead_of_a_folder_is_named_as_such(tmp_path, capsys):
    junk = tmp_path / "junk"
    junk.mkdir()
    f = _write(junk / "a.json", make_submission("alice", _key_answers()))
    with pytest.raises(NotADirectoryError, match="폴더가 아니라 파일입니다"):
        grade_folder(f, QUESTIONS)
    assert grade_main([str(f), "-o", str(tmp_path / "g.csv")]) == 2
    err = capsys.readouterr().err
    assert "폴더가 아니라 파일입니다" in err and "제출 폴더가 없습니다" not in err
    assert f"decodelab grade {junk}" in err  # what to pass instead: the folder that holds it
    assert not (tmp_path / "g.csv").exists()


def test_grading_the_current_folder_twice_ignores_its_own_report(tmp_path, monkeypatch, capsys):
    d = tmp_path / "제출폴더"
    d.mkdir()
    _write(d / "alice.json", make_submission("alice", _key_answers()))
    monkeypatch.chdir(d)
    assert grade_main([".", "--notebook", "03"]) == 0
    first = (d / "report.csv").read_text(encoding="utf-8-sig")
    (d / "성적-지난주.csv").write_text("student_id\n", encoding="utf-8")  # any other CSV is not a submission
    (d / ".report.csv.x1y2.tmp").write_bytes(b"half a gradebook")  # left by an interrupted write
    assert grade_main([".", "--notebook", "03"]) == 0
    assert (d / "report.csv").read_text(encoding="utf-8-sig") == first
    # an output with another name inside the folder is excluded too
    assert grade_main([".", "--notebook", "03", "-o", "results.csv"]) == 0
    assert grade_main([".", "--notebook", "03", "-o", "results.csv"]) == 0
    err = capsys.readouterr().err
    assert "건너뜀" not in err and "주의" not in err
    (d / "results.txt").write_text("x", encoding="utf-8")  # an excluded path of any name is not read either
    book = grade_folder(d, QUESTIONS, exclude=[d / "results.txt"])
    assert [r.student_id for r in book.rows] == ["alice"] and book.skipped == [] and book.submission_files == 1
    side = sorted(p.name for p in d.glob("*-*.md"))  # report-rubric.md etc., written when exercises exist
    assert sorted(p.file for p in book.ignored) == sorted([".report.csv.x1y2.tmp", "report.csv", "results.csv",
                                                           "results.txt", "성적-지난주.csv", *side])  # each listed


def test_an_empty_folder_warns_and_writes_nothing(tmp_path, capsys):
    from decodelab.assess.report import _grade_parser

    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "gb.csv"
    out.write_text("previous gradebook", encoding="utf-8")
    assert grade_main([str(empty), "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert "제출 파일이 없습니다" in captured.err and str(empty) in captured.err
    assert out.read_text(encoding="utf-8") == "previous gradebook"  # not replaced by an empty one
    (empty / "gradebook.csv").write_text("x", encoding="utf-8")
    (empty / "notes.txt").write_text("x", encoding="utf-8")
    assert grade_main([str(empty), "-o", str(out)]) == 2
    assert "제출 파일이 없습니다" in capsys.readouterr().err
    assert grade_folder(empty, QUESTIONS).submission_files == 0
    helptext = " ".join(_grade_parser().format_help().split())
    assert "종료 코드" in helptext and "2: 아무것도 쓰지 않음" in helptext and "제출 파일이 없을 때" in helptext


def test_the_output_is_never_a_submission_and_an_existing_gradebook_survives_a_bad_folder(tmp_path, capsys):
    """Regressions: ``-o`` naming a student's .json submission overwrote it; a folder of only broken
    files replaced an existing gradebook with an empty one."""
    d = tmp_path / "subs"
    d.mkdir()
    sub = _write(d / "decodelab-course-20240002.json", make_submission("20240002", _key_answers()))
    before = sub.read_bytes()
    assert grade_main([str(d), "-o", str(sub)]) == 2
    assert sub.read_bytes() == before  # the student's submission is untouched
    assert ".csv" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.json").write_text("{not json", encoding="utf-8")
    (bad / "package.json").write_text('{"name": "x"}', encoding="utf-8")
    gb = tmp_path / "good.csv"
    gb.write_text("student_id,total\nalice,15\nbob,12\n", encoding="utf-8")
    assert grade_main([str(bad), "-o", str(gb)]) == 2
    assert gb.read_text(encoding="utf-8") == "student_id,total\nalice,15\nbob,12\n"
    err = capsys.readouterr().err
    assert "그대로 두었습니다" in err and "broken.json" in err
    # with no gradebook yet, a folder of broken files still writes a (header-only) gradebook and says so
    fresh = tmp_path / "fresh.csv"
    assert grade_main([str(bad), "-o", str(fresh)]) == 1 and fresh.exists()


def test_quiz_main_dispatch_and_decodelab_command(tmp_path, capsys):
    from decodelab.tools.cli import main  # the lead's dispatcher: `decodelab quiz view`, `decodelab grade`
    from decodelab.assess.quiz import quiz_widget
    from decodelab.assess.quiz.cli import quiz_main

    assert quiz_main([]) == 2 and quiz_main(["nope"]) == 2 and quiz_main(["release", str(tmp_path / "r")]) == 2
    assert "알 수 없는 하위 명령" in capsys.readouterr().err and not (tmp_path / "r").exists()
    # the lecturer reproduces the order and labels a student saw
    w = quiz_widget("01", answers_dir=tmp_path / "answers", export_dir=tmp_path, student_id="s-9")
    v = w.views["01-greedy"]
    assert main(["quiz", "view", "01-greedy", "s-9"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [ln.split("]")[0].strip() for ln in lines] == [f"{v.labels[o]}. [{o}" for o in v.order]
    subs = tmp_path / "subs"
    subs.mkdir()
    assert main(["grade", str(subs), "-o", str(tmp_path / "gb.csv")]) == 2  # no submission files: nothing written
    assert "제출 파일이 없습니다" in capsys.readouterr().err and not (tmp_path / "gb.csv").exists()
    (subs / "a.json").write_text(json.dumps(make_submission("alice", {"01-greedy": "a"})), encoding="utf-8")
    assert main(["grade", str(subs), "-o", str(tmp_path / "gb.csv")]) == 0
    assert (tmp_path / "gb.csv").read_text(encoding="utf-8-sig").startswith("student_id,quiz_set,file,shuffle_key,01-")
