"""Graded assignments on nbgrader, end to end in a temporary course directory.

nbgrader really runs: generate + release exam-02, two students (different ids) fetch it, answer in
the answer cells (alice right, bob wrong and with alice's numbers copied), submit; a third (mallory)
knows nothing and attacks: asks the course's modules for the keys, probes what her code can read at
autograde, tampers in her edit-the-code answer. The lecturer collects, autogrades (as root here: the
students' kernels run in bubblewrap as the grader account, the scores are set by decodelab's step in
nbgrader's process), grades by hand through nbgrader's API, autogrades again and generates the
feedback; then the LMS export. One course directory for the module (kernels are slow on 2 cores).
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest

nbgrader = pytest.importorskip("nbgrader")
from nbclient import NotebookClient  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.apps import NbGraderAPI  # noqa: E402
from nbgrader.utils import parse_utc  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from decodelab.classroom import hub  # noqa: E402
from decodelab.classroom.assignments import ANSWER_STUB, write_course  # noqa: E402
from decodelab.classroom.cli import autograde_command as autograde_main  # noqa: E402
from decodelab.classroom.cli import variant_command as variant_main  # noqa: E402
from decodelab.classroom.bank import Parametric, Task, Written, load_bank, variant  # noqa: E402
from decodelab.classroom.lms import export  # noqa: E402
from decodelab.classroom.homes import write_home  # noqa: E402
from decodelab.classroom.student import draw  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.classroom, pytest.mark.xdist_group("classroom_nbgrader")]

ROOT = Path(__file__).resolve().parents[1]
A = "exam-02"
ALL = ("exam-02", "exam-03", "exam-04", "exam-05")  # generated; exam-02 goes through the whole lifecycle
STUDENTS = ("alice", "bob")
CHEAT = "mallory"  # knows no answer: asks the course's modules for the keys and tampers (CHEAT_* below)
BOB_SHORT = "프롬프트를 읽는 데 드는 시간"  # neither accepted nor a listed misconception: review

# mallory knows no answer. Her first cell asks the course's own modules for every key, in each way
# a student could: the grading module's course lookup, the course's exam/ bank above the folder the
# notebook runs in, the repository's bank beside the installed package. Whatever key she gets
# becomes her answer (답[...] of each item, the answer cells left as released).
CHEAT_KEYS = """\
import os
from pathlib import Path
import decodelab
from decodelab.classroom import bank as B
from decodelab.classroom.student import student_id
here = Path(os.getcwd())
keys, banks = {}, []
try:
    banks.append(B.course_context().bank)
except Exception:
    pass
for folder in (here.parents[2] / "exam", Path(decodelab.__file__).resolve().parents[1] / "classroom" / "exam"):
    try:
        banks.append(B.load_bank(folder))
    except Exception:
        pass
for bk in banks:
    for item in [*bk.questions.values(), *bk.parametric.values()]:
        q = item.question(student_id()) if hasattr(item, "question") else item
        keys.setdefault(item.id, f"{q.answer:.6g} {q.unit}" if hasattr(q, "unit") else q.answer)
답.update(keys)
print("KEYS", len(keys))
"""
# her second cell reports what her code can reach while autograde runs it
CHEAT_PROBE = """\
import json, os
from pathlib import Path
course = Path(os.getcwd()).parents[2]
def readable(p):
    try:
        with open(p, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False
print("PROBE " + json.dumps({
    "uid": os.getuid(), "euid": os.geteuid(),
    "gradebook": readable(course / "gradebook.db"),
    "bank": readable(course / "exam" / "items.yaml"),
    "source": readable(course / "source" / "exam-02" / "exam-02.ipynb"),
    "classmate": readable(course / "submitted" / "alice" / "exam-02" / "exam-02.ipynb"),
    "repo_bank": readable(Path(decodelab.__file__).resolve().parents[1] / "classroom" / "exam" / "items.yaml"),
}))
"""
# her edit-the-code answer tampers instead of computing: it replaces today's and tomorrow's checkers,
# looks for the expected values in the bank, and ends the process before a wrong case is counted
CHEAT_TASK = """\
import os
try:
    import decodelab.classroom.bank as _b
    _b.grade_code = lambda *a, **k: 3.0
    _b.decide_task = lambda bank, task_id, *a, **k: _b.Verdict(3.0, 3.0, [])
except Exception:
    pass
def decode_step_ms(weight_gb, kv_gb, bandwidth_tbs):
    try:
        from decodelab.classroom.bank import course_context
        task = course_context().bank.tasks["02-c-step-time"]
        return task.reference(weight_gb, kv_gb, bandwidth_tbs)
    except Exception:
        os._exit(0)
"""


def _nbgrader(args, cwd, env):
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _cells(nb, suffix):
    return {c.metadata["nbgrader"]["grade_id"][: -len(suffix)]: c for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith(suffix)}


def _answer(bank, item, student, right):
    """The response a student types: alice right, bob wrong (bob copies alice's numeric answers)."""
    if isinstance(item, Parametric):
        q = variant(bank, item.id, "alice")[1]  # alice's key: right for alice, a copied answer for bob
        return json.dumps(f"{q.answer:.6g} {q.unit}", ensure_ascii=False)
    if item.kind == "short":
        return json.dumps("TTFT" if right else BOB_SHORT, ensure_ascii=False)
    if item.kind == "multiple":
        return json.dumps(list(item.answer) if right else [item.answer[0]])  # bob: half of the right ones
    wrong = next(c.id for c in item.choices if c.id != item.answer)
    return json.dumps(item.answer if right else wrong)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from test_classroom_sandbox import sandbox_or_skip

    sandbox_or_skip()  # autograde runs the students' notebooks in bubblewrap (skips outside CI without it)
    base = tmp_path_factory.mktemp("classroom")
    course, exchange = base / "course", base / "exchange"
    exchange.mkdir()
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # nbgrader runs alembic
    mp.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")  # kernels import this decodelab
    mp.setenv("HOME", str(base / "home"))
    mp.setenv("DECODELAB_ANSWERS_DIR", str(base / "answers"))
    mp.setenv("NBGRADER_EXCHANGE_ROOT", str(exchange))
    mp.delenv("JUPYTERHUB_USER", raising=False)
    state = {"base": base, "dir": course}
    try:
        write_course(course)
        bank = state["bank"] = load_bank(course / "exam")
        (base / "home").mkdir()
        cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()  # the course's own config
        assert cfg.Exchange.root == str(exchange) and cfg.CourseDirectory.root == str(course)
        api = NbGraderAPI(config=cfg)
        for step in (*(api.generate_assignment(a) for a in ALL), api.release_assignment(A)):
            assert step["success"], step["log"] + str(step.get("error"))
        flags = ["--course", "decodelab", f"--Exchange.root={exchange}"]
        for sid in STUDENTS:
            home = base / sid
            home.mkdir()
            # the student's server as the hub prepares it: ~/.jupyter/nbgrader_config.py (hub login = student id)
            write_home(home, None, files={".jupyter/nbgrader_config.py": hub._student_nbgrader_text("decodelab")})
            env = {**os.environ, "JUPYTERHUB_USER": sid, "HOME": str(home)}
            _nbgrader(["fetch_assignment", A, *flags], home, env)
            path = home / A / f"{A}.ipynb"
            nb = nbformat.read(path, as_version=4)
            state[f"fetched-{sid}"] = path.read_text(encoding="utf-8")
            # the student runs the notebook (the parametric cells print this student's numbers) and
            # answers one item in its widget: the cell below does what a click does, in the same kernel
            widget_id = "02-e-what-is-read" if sid == "alice" else "02-e-bandwidth-chip"
            q = bank.questions[widget_id]
            value = tuple(q.answer) if sid == "alice" else next(c.id for c in q.choices if c.id != q.answer)
            nb.cells.append(nbformat.v4.new_code_cell(
                f"from decodelab.classroom.student import BOXES\nBOXES[{widget_id!r}].value = {value!r}"))
            mp.setenv("JUPYTERHUB_USER", sid)
            NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(home / A)}}).execute()
            mp.delenv("JUPYTERHUB_USER")
            nb.cells.pop()
            state[f"widget-{sid}"] = json.loads((home / A / "answers.json").read_text(encoding="utf-8"))
            state[f"shown-{sid}"] = {gid[: -len("-show")]: "".join(o.get("text", "") for o in c.outputs)
                                     for gid, c in ((c.metadata["nbgrader"]["grade_id"], c) for c in nb.cells
                                                    if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("-show"))}
            answers = _cells(nb, "-answer")
            for item in bank.items("02"):
                if item.id == widget_id:
                    continue  # answered in the widget; the answer cell stays as released
                cell = answers.get(item.id)
                if isinstance(item, Written):
                    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == item.id)
                    cell.source = "가중치를 배치 전체가 함께 읽으므로 처리량이 늘어납니다."
                elif isinstance(item, Task):
                    body = item.solution if sid == "alice" else "    return weight_gb + kv_gb\n"
                    cell.source = cell.source.replace(f"    {ANSWER_STUB}", body.rstrip("\n"))
                else:
                    assert ANSWER_STUB in cell.source
                    cell.source = cell.source.replace(ANSWER_STUB, _answer(bank, item, sid, sid == "alice"))
            nbformat.write(nb, path)
            _nbgrader(["submit", A, *flags], home, env)  # no --student: the config takes the hub login
        home = base / CHEAT
        home.mkdir()
        env = {**os.environ, "JUPYTERHUB_USER": CHEAT}
        _nbgrader(["fetch_assignment", A, *flags], home, env)
        path = home / A / f"{A}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(2, nbformat.v4.new_code_cell(CHEAT_KEYS))  # after the setup cell that makes 답
        nb.cells.insert(3, nbformat.v4.new_code_cell(CHEAT_PROBE))
        cell = _cells(nb, "-answer")["02-c-step-time"]
        cell.source = CHEAT_TASK
        nbformat.write(nb, path)
        _nbgrader(["submit", A, *flags, f"--student={CHEAT}"], home, env)
        assert api.collect(A)["success"]
        # mallory through decodelab's command (python -m nbgrader in the course folder), the others below through
        # nbgrader's API: her probe sees what each way leaves visible
        assert autograde_main([str(course), A, f"--student={CHEAT}"]) == 0
        state["cheat"] = _grades(course, (CHEAT,))[CHEAT]
        for sid in STUDENTS:
            r = api.autograde(A, sid)
            assert r["success"], r["log"]
        state["first"] = _grades(course)
        state["report_before"] = export(course, "canvas", base / "before.csv")
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            g = gb.find_grade("02-w-batching", A, A, "alice")
            g.manual_score, g.needs_manual_grade = 2.5, False
            g = gb.find_grade("02-e-ttft-tpot", A, A, "bob")
            g.manual_score, g.needs_manual_grade = 1.0, False
            g = gb.find_grade("02-w-batching", A, A, "bob")
            g.manual_score, g.needs_manual_grade = 0.0, False
            gb.update_or_create_student("alice", lms_user_id="lti-1001")
            gb.db.commit()
        for sid in STUDENTS:  # again, as the guide says: decodelab's command (nbgrader autograde, sandbox checked first)
            assert autograde_main([str(course), A, f"--student={sid}", "--force"]) == 0
        state["second"] = _grades(course)
        r = api.generate_feedback(A)
        assert r["success"], r["log"]
        # nbgrader's own CSV export, run as a lecturer does: `nbgrader export` in the course folder
        _nbgrader(["export", f"--to={base / 'nbgrader.csv'}"], course, dict(os.environ))
        state["nbgrader-csv"] = list(csv.DictReader((base / "nbgrader.csv").open(encoding="utf-8")))
        yield state
    finally:
        mp.undo()


def _grades(course, students=STUDENTS):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        out = {}
        for sid in students:
            sub = gb.find_submission(A, sid)
            out[sid] = {"score": sub.score, "max": sub.max_score,
                        "grades": {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade, g.max_score)
                                   for nb in sub.notebooks for g in nb.grades}}
        return out


def test_autograde_scores_each_student_against_own_numbers(course):
    bank, first = course["bank"], course["first"]
    items = bank.items("02")
    assert sum(isinstance(i, Parametric) for i in items) >= 5
    alice, bob = first["alice"]["grades"], first["bob"]["grades"]
    for item in items:
        auto_a, _, review_a, pts = alice[item.id]
        auto_b, _, review_b, _ = bob[item.id]
        if isinstance(item, Written):  # written answers: formgrader, no automatic score
            assert auto_a is None and review_a and auto_b is None and review_b
        elif getattr(item, "kind", None) == "multiple":
            assert (auto_a, auto_b) == (pts, pts / 2)  # nbgrader's partial credit
        elif getattr(item, "kind", None) == "short":
            assert auto_a == pts and not review_a
            assert auto_b is None and review_b  # undecidable: sent to formgrader, not 0
        else:  # choice, task, and parametric: bob's copy of alice's numbers is wrong for his own
            assert (auto_a, auto_b) == (pts, 0.0), item.id
    auto_total = sum(bank.points(i) for i in items if not isinstance(i, Written))
    assert first["alice"]["score"] == pytest.approx(auto_total)
    assert first["alice"]["max"] == pytest.approx(sum(bank.points(i) for i in items))


def test_widget_answers_are_submitted_and_graded(course):
    assert course["widget-alice"] == {"02-e-what-is-read": list(course["bank"].questions["02-e-what-is-read"].answer)}
    assert list(course["widget-bob"]) == ["02-e-bandwidth-chip"]
    for sid in STUDENTS:
        assert (course["dir"] / "submitted" / sid / A / "answers.json").is_file()
    # graded as if typed (see the scores test): alice's full set, bob's wrong choice; no review flag
    assert course["first"]["alice"]["grades"]["02-e-what-is-read"][2] is False


def test_parametric_numbers_differ_and_are_the_students_own(course):
    bank = course["bank"]
    shown_a, shown_b = course["shown-alice"], course["shown-bob"]
    ids = [i.id for i in bank.items("02") if isinstance(i, Parametric)]
    assert sorted(shown_a) == sorted(ids)
    for item_id in ids:
        a, b = draw(item_id, bank.parametric[item_id].params, "alice"), draw(item_id, bank.parametric[item_id].params, "bob")
        assert a != b, item_id
        assert shown_a[item_id].startswith("[alice] ") and shown_b[item_id].startswith("[bob] ")
        assert shown_a[item_id] != shown_b[item_id].replace("[bob]", "[alice]")
        assert variant(bank, item_id, "alice")[1].answer != variant(bank, item_id, "bob")[1].answer
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert variant_main([str(course["dir"]), "02-x-step-time", "alice"]) == 0
    values = draw("02-x-step-time", bank.parametric["02-x-step-time"].params, "alice")
    assert f"context = {values['context']}" in buf.getvalue()
    assert f"{variant(bank, '02-x-step-time', 'alice')[1].answer:.6g}" in buf.getvalue()
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert variant_main([str(course["dir"]), "--list"]) == 0
    listed = buf.getvalue().split()
    assert len(listed) >= 20 and {i[:2] for i in listed} == {"02", "03", "04", "05"}


@pytest.mark.parametrize("assignment", ALL)
def test_release_holds_no_hidden_test_or_key(course, assignment):
    bank, release = course["bank"], course["dir"] / "release" / assignment
    assert sorted(p.name for p in release.rglob("*") if p.is_file()) == [f"{assignment}.ipynb"]
    texts = [(release / f"{assignment}.ipynb").read_text(encoding="utf-8")]
    if assignment == A:
        texts.append(course["fetched-alice"])
    for text in texts:
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text and "grade_cell" not in text
        for item in bank.items(assignment[-2:]):
            if isinstance(item, Written):
                assert item.rubric.splitlines()[0][:30] not in text
            elif isinstance(item, Task):
                assert item.solution.strip() not in text
            else:
                assert item.explanation[:30] not in text
        nb = nbformat.reads(text, as_version=4)
        for item_id, cell in _cells(nb, "-answer").items():
            if item_id in bank.questions:
                assert ANSWER_STUB in cell.source
                assert json.dumps(bank.questions[item_id].answer, ensure_ascii=False) not in cell.source
    # the package students install carries no exam bank, and its grader refuses outside a course
    pkg = ROOT / "decodelab"
    assert not [p for p in pkg.rglob("*") if p.name in ("items.yaml", "parametric.py")]
    pkg_text = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in pkg.rglob("*.py"))
    for item in bank.parametric.values():
        assert item.explanation[:25] not in pkg_text
    # nor any grading code that works without the bank: the notebook's hidden cells only record values
    import decodelab.classroom.bank as bank_module

    assert not hasattr(bank_module, "grade_cell") and not hasattr(bank_module, "course_context")


def test_manual_grades_survive_autograde_again(course):
    second = course["second"]
    a, b = second["alice"]["grades"], second["bob"]["grades"]
    assert a["02-w-batching"][1] == 2.5 and b["02-e-ttft-tpot"][1] == 1.0 and b["02-w-batching"][1] == 0.0
    pts_multiple = b["02-e-what-is-read"][3]
    assert second["bob"]["score"] == pytest.approx(1.0 + pts_multiple / 2)
    assert second["alice"]["score"] == pytest.approx(course["first"]["alice"]["score"] + 2.5)


def test_nbgrader_export_reads_the_same_gradebook(course):
    rows = {(r["assignment"], r["student_id"]): r for r in course["nbgrader-csv"]}
    for sid in STUDENTS:
        assert float(rows[(A, sid)]["raw_score"]) == pytest.approx(course["second"][sid]["score"])


def test_feedback_in_korean_with_explanations(course):
    bank = course["bank"]
    page = (course["dir"] / "feedback" / "alice" / A / f"{A}.html").read_text(encoding="utf-8")
    assert "정답입니다" in page and "채점 기준" in page
    for item in bank.items("02"):  # every item's explanation; a parametric one with alice's numbers
        text = item.question("alice").explanation if isinstance(item, Parametric) else item.explanation
        assert html.escape(text[:20], quote=False) in page, item.id
    assert "[alice]" in page  # the student's own numbers, shown again
    assert (course["dir"] / "feedback" / "bob" / A / f"{A}.html").is_file()


def _columns(assignments=ALL):
    """The grade columns of the LMS file: each assignment, then its late penalty (or why it is empty)."""
    return [x for a in assignments for x in (a, f"{a} 늦은 제출 감점")]


def test_lms_export_reports_pending_and_unknown(course, tmp_path):
    bank, before = course["bank"], course["report_before"]
    # before the lecturer's decisions: bob's short answer and both written answers await review
    assert before.pending == {("alice", A): 1, ("bob", A): 2}  # mallory: nothing to review, all 0
    assert set(before.missing) == {(s, a) for s in (*STUDENTS, CHEAT) for a in ALL[1:]}  # not submitted: reported
    rows = list(csv.reader((course["base"] / "before.csv").open(encoding="utf-8")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *_columns()]  # no total column
    bob = next(r for r in rows if r[3] == "bob")
    # pending (exam-02) and not submitted: left empty, not 0, and the reason beside it
    assert bob[5:] == ["", "검토 대기", "", "제출 없음", "", "제출 없음", "", "제출 없음"]
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\nAlice Kim,lti-1001,,,A\n",
                      encoding="utf-8")
    out = tmp_path / "canvas.csv"
    report = export(course["dir"], "canvas", out, roster=roster)
    assert report.unknown == ["bob", CHEAT] and report.written == ["alice"] and not report.pending
    rows = list(csv.reader(out.open(encoding="utf-8")))
    total = course["second"]["alice"]["score"]
    assert rows[1][0].strip() == "Points Possible" and float(rows[1][5]) == pytest.approx(course["second"]["alice"]["max"])
    assert [float(x) for x in rows[1][5::2]] == pytest.approx([sum(bank.points(i) for i in bank.items(a[-2:])) for a in ALL])
    assert rows[1][6::2] == ["(read only)"] * len(ALL)  # the penalty columns are no grade items
    assert rows[2][:2] == ["Alice Kim", "lti-1001"] and float(rows[2][5]) == pytest.approx(total) and rows[2][6] == "0"
    out = tmp_path / "moodle.csv"
    report = export(course["dir"], "moodle", out)
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["username", "idnumber", *_columns()]
    assert {r[0]: float(r[2]) for r in rows[1:] if r[0] != CHEAT} == pytest.approx(
        {s: course["second"][s]["score"] for s in STUDENTS})
    assert [float(r[2]) for r in rows if r[0] == CHEAT] == [0.0]


def test_lms_roster_matches_without_regard_to_case_or_unicode_form(course, tmp_path):
    """``MinJi`` in the roster is the hub's ``minji``; a Korean name in NFD is the same name in NFC;
    a full-width ``ＢＯＢ`` is ``bob`` (NFKC), an LTI id in another case is the same id."""
    import shutil
    import unicodedata

    copy = tmp_path / "course"
    shutil.copytree(course["dir"], copy, ignore=shutil.ignore_patterns("release", "source", "feedback"))
    minji, hangul = "MinJi", unicodedata.normalize("NFC", "김민지")
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        gb.update_or_create_student("minji")
        gb.update_or_create_student(hangul)
    roster = tmp_path / "roster.csv"
    nfd = unicodedata.normalize("NFD", hangul)
    assert nfd != hangul
    roster.write_text(f"username,idnumber\n{minji},\n{nfd},\nＢＯＢ,\n,LTI-1001\n", encoding="utf-8")
    out = tmp_path / "moodle.csv"
    report = export(copy, "moodle", out, roster=roster)
    assert sorted(report.written) == sorted(["alice", "bob", "minji", hangul]) and report.unknown == [CHEAT]
    rows = {r[0]: r for r in csv.reader(out.open(encoding="utf-8"))}
    assert rows[minji][2:4] == ["", "제출 없음"] and rows["ＢＯＢ"][2] != ""  # the roster's own spelling is written back


def _late_course(course, tmp_path, percent: float, late_s: float):
    """A copy of the course whose exam-02 was due ``late_s`` seconds before alice's submission, under
    decodelab's late policy at ``percent`` per started day."""
    import shutil
    from datetime import timedelta

    import importlib.util

    if importlib.util.find_spec("ngshare_exchange") is None:  # LatePenalty lives beside the exchange adapters
        pytest.skip("ngshare-exchange is not installed (bash scripts/install_hub.sh)")
    copy = tmp_path / "course"
    shutil.copytree(course["dir"], copy, ignore=shutil.ignore_patterns("release", "source", "feedback"))
    with open(copy / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write('\nc.AssignLatePenalties.plugin_class = "decodelab.classroom.exchange_plugin.LatePenalty"\n'
                 f"c.LatePenalty.percent_per_day = {percent!r}\n")
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        sub = gb.find_submission(A, "alice")
        gb.update_or_create_assignment(A, duedate=sub.timestamp - timedelta(seconds=late_s))
        assert gb.find_submission(A, "alice").late_submission_penalty in (None, 0.0)  # autograde saw no lateness
    return copy


def test_lms_export_writes_the_final_grade_under_the_late_policy(course, tmp_path):
    """362 s late at 10 % per started day: one day, 10 % of the points; nbgrader's own export (the
    penalty autograde stored) would give the raw score. The lecturer then lowers a written answer's
    grade in formgrader: the next export penalises the new points (recomputed, not stored)."""
    copy = _late_course(course, tmp_path, 10.0, 362)
    raw = course["second"]["alice"]["score"]
    out = tmp_path / "moodle.csv"
    # as a lecturer runs it: nbgrader's own export command in the course folder, with this plugin
    r = subprocess.run([sys.executable, "-m", "nbgrader", "export", "--exporter=decodelab.classroom.lms.LmsExport",
                        f"--to={out}", "--LmsExport.lms=moodle"], cwd=copy, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "늦은 제출 감점: alice exam-02" in r.stdout + r.stderr
    rows = {row[0]: row for row in csv.reader(out.open(encoding="utf-8"))}
    assert float(rows["alice"][2]) == pytest.approx(raw * 0.9) and float(rows["alice"][3]) == pytest.approx(raw * 0.1)
    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
        g = gb.find_grade("02-w-batching", A, A, "alice")
        g.manual_score = 0.5  # graded again after autograde (was 2.5)
        gb.db.commit()
    report = export(copy, "moodle", out)
    rows = {row[0]: row for row in csv.reader(out.open(encoding="utf-8"))}
    assert float(rows["alice"][2]) == pytest.approx((raw - 2.0) * 0.9)
    assert report.penalties[("alice", A)] == pytest.approx((raw - 2.0) * 0.1)


def test_lms_export_of_points_given_after_autograde_years_late_is_zero(course, tmp_path):
    """Issue 44: a written answer graded after autograde, submission years late, 100 % per day:
    autograde's stored penalty covers only the automatic points; the export writes 0, never below."""
    copy = _late_course(course, tmp_path, 100.0, 3 * 365 * 86400)
    out = tmp_path / "canvas.csv"
    report = export(copy, "canvas", out)
    rows = {row[3]: row for row in csv.reader(out.open(encoding="utf-8"))}
    assert rows["alice"][5:7] == ["0", f"{course['second']['alice']['score']:g}"]
    assert report.penalties[("alice", A)] == pytest.approx(course["second"]["alice"]["score"])


@pytest.fixture(scope="module")
def regraded(course, tmp_path_factory):
    """A copy of the course after two more submissions and autogrades: bob's resubmission is not
    valid JSON (autograde fails; the gradebook keeps his old score), alice's deletes the graded cell
    of an item she now answers wrong (nbgrader alone would keep her old full marks)."""
    import shutil
    from datetime import timedelta

    base = tmp_path_factory.mktemp("regraded")
    copy = base / "course"
    shutil.copytree(course["dir"], copy, ignore=shutil.ignore_patterns("feedback"))
    bank = course["bank"]
    item = bank.questions["02-e-bandwidth-chip"]
    wrong = next(c.id for c in item.choices if c.id != item.answer)
    later = {}
    for sid in STUDENTS:
        folder = copy / "submitted" / sid / A
        stamp = parse_utc((folder / "timestamp.txt").read_text().strip()) + timedelta(minutes=5)
        later[sid] = stamp
        (folder / "timestamp.txt").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    (copy / "submitted" / "bob" / A / f"{A}.ipynb").write_text('{"cells": [', encoding="utf-8")
    path = copy / "submitted" / "alice" / A / f"{A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != item.id]
    answer = _cells(nb, "-answer")[item.id]
    answer.source = answer.source.replace(json.dumps(item.answer), json.dumps(wrong))
    nbformat.write(nb, path)
    before = _grades(copy)
    codes = {sid: autograde_main([str(copy), A, f"--student={sid}", "--force"]) for sid in STUDENTS}
    return {"dir": copy, "before": before, "after": _grades(copy), "codes": codes, "item": item.id}


def test_a_deleted_grade_cell_scores_zero_with_a_warning(regraded, tmp_path):
    item, before, after = regraded["item"], regraded["before"]["alice"], regraded["after"]["alice"]
    assert regraded["codes"]["alice"] == 0
    assert before["grades"][item][0] == before["grades"][item][3] > 0  # full marks before
    assert after["grades"][item][:3] == (0.0, None, False)  # not the old score, not left for review
    assert after["score"] == pytest.approx(before["score"] - before["grades"][item][3])
    text = (regraded["dir"] / "autograded" / "alice" / A / f"{A}.ipynb").read_text(encoding="utf-8")
    assert "채점 칸이 없습니다" in text and item in text
    report = export(regraded["dir"], "moodle", tmp_path / "m.csv")
    assert report.missing_cells[("alice", A)] == [item]
    assert any("채점 칸이 없어" in line and item in line for line in report.lines())


def test_a_failed_autograde_is_exported_as_needing_review_not_the_old_score(regraded, tmp_path):
    assert regraded["codes"]["bob"] != 0  # not valid JSON: nbgrader's autograde fails
    assert regraded["after"]["bob"]["score"] == regraded["before"]["bob"]["score"]  # the gradebook keeps it
    out = tmp_path / "canvas.csv"
    report = export(regraded["dir"], "canvas", out)
    assert ("bob", A) in report.failed and any(line.startswith("자동 채점 실패: bob exam-02") for line in report.lines())
    rows = {row[3]: row for row in csv.reader(out.open(encoding="utf-8"))}
    assert rows["bob"][5:7] == ["", "자동 채점 실패"]
    assert rows["alice"][5] != ""  # her autograde succeeded


def _outputs(course, student, prefix):
    nb = nbformat.read(course["dir"] / "autograded" / student / A / f"{A}.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return [line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)]


def test_keys_asked_of_the_course_modules_score_nothing(course):
    """mallory's answers are whatever key her kernel can get from decodelab and the course: at
    autograde it gets none (no bank in the sandbox, no grading function in the package), so every
    quiz and per-student item scores 0 and nothing is left for review."""
    bank, grades = course["bank"], course["cheat"]["grades"]
    assert _outputs(course, CHEAT, "KEYS ") == ["0"]
    for item in bank.items("02"):
        if not isinstance(item, (Written, Task)):
            auto, manual, review, _ = grades[item.id]
            assert (auto, manual, review) == (0.0, None, False), item.id
    assert course["cheat"]["score"] == 0.0


def test_autograde_runs_students_code_unprivileged_without_the_course(course):
    """What mallory's own cell could reach while nbgrader autograded her notebook (as root here)."""
    import pwd

    (line,) = _outputs(course, CHEAT, "PROBE ")
    seen = json.loads(line)
    assert seen["uid"] != 0 and seen["euid"] != 0
    assert seen["uid"] == pwd.getpwnam("decodelab-grader").pw_uid
    assert not any(seen[k] for k in ("gradebook", "bank", "source", "classmate", "repo_bank")), seen


def test_code_task_that_tampers_gets_no_credit(course):
    """mallory's function replaces the checkers in her kernel, looks for the expected values and ends
    its process: it runs alone in a fresh interpreter, where none of that reaches the score."""
    grades = course["cheat"]["grades"]
    auto, manual, review, _ = grades["02-c-step-time"]
    assert (auto, manual, review) == (0.0, None, False)
    text = (course["dir"] / "autograded" / CHEAT / A / f"{A}.ipynb").read_text(encoding="utf-8")
    assert "0/3 사례 통과" in text
