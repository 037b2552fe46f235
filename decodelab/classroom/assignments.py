"""nbgrader assignments built from the exam bank, the per-student (parametric) items, the LMS export.

Lecturer's side only. :func:`write_course` turns the exam bank (``classroom/exam/`` of the
repository, see :mod:`decodelab.classroom.bank`) into a course directory that nbgrader 0.9 runs as
it is (``generate_assignment`` -> ``release_assignment`` -> students ``fetch_assignment`` /
``submit`` -> ``collect`` -> ``autograde`` -> formgrader -> ``generate_feedback``):

- ``nbgrader_config.py`` (course id, Korean stubs, the sandboxed execution of :mod:`.sandbox` and
  the grading step of :mod:`.review`);
- ``exam/``: a copy of the bank, read by the grading step at autograde time (never released, never
  visible to the student's kernel);
- ``source/exam-NN/exam-NN.ipynb`` for each notebook NN of the bank:

  * quiz items and parametric numeric items: an answer cell (``답["id"] = ...``) and an
    autograded test cell whose hidden part only records the answer's value
    (:func:`decodelab.classroom.student.record`); nbgrader's process grades it afterwards with the
    bank (:class:`decodelab.classroom.review.GradeAnswers`: decodelab's rules, partial credit for
    multiple choice; an undecidable short answer goes to formgrader);
  * edit-the-code tasks: the answer cell (the function to complete), run by the grader alone in a
    fresh sandboxed interpreter (:func:`decodelab.classroom.bank.decide_task`), and an autograded
    cell that holds the score;
  * written answers: manually graded cells; formgrader shows the rubric beside them.

A parametric item's cell prints the student's own numbers (:func:`decodelab.classroom.student.show`,
seeded by nbgrader's student id); the key is computed only in the lecturer's process, from the bank.
At autograde the notebook's kernel runs in :mod:`decodelab.classroom.sandbox` (not as root, without
the course folder).

Commands: ``decodelab classroom variant DIR ITEM STUDENT`` / ``--list`` (:func:`decodelab.classroom.cli.variant_command`) and
``decodelab classroom export DIR --lms canvas|moodle -o FILE`` (:func:`decodelab.classroom.cli.export_command`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nbformat

from .bank import ExamError, Parametric, Task, Written, load_bank
from .practice import write_practice

__all__ = ["ExamError", "assignment_name", "default_bank", "write_course", "write_notebook"]

BANK_FILES = ("items.yaml", "parametric.py")
ANSWER_STUB = "None  # 여기에 답을 적으세요"
TEXT_STUB = "여기에 답을 쓰세요."
TASK_NOTE = ("채점할 때는 이 칸만 표준 라이브러리만 있는 새 파이썬에서 따로 실행해 함수를 부릅니다: "
             "필요한 import(math 등)는 이 칸 안에 쓰고, decodelab이나 다른 칸의 변수는 쓰지 마세요.")

NBGRADER_CONFIG = '''\
# nbgrader 설정: decodelab classroom init이 만든 파일입니다 (강의자용). lecturer/grading.md를 보세요.
import os

from nbgrader.converters.autograde import Autograde
from nbgrader.preprocessors import Execute, SaveAutoGrades

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
# 학생 폴더를 나눠 쓰는 교환 폴더 (JupyterHub에서는 모든 사용자가 읽고 쓸 수 있는 공유 폴더)
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE_ROOT", "/srv/nbgrader/exchange")
# 배포본에서 지워진 정답 자리에 들어가는 말
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
c.ClearSolutions.text_stub = {text_stub!r}
# 채점: 학생 노트북은 bubblewrap 안에서 권한 없는 채점 계정으로 다시 실행하고(답의 값만 기록),
# 점수는 그 뒤 이 프로세스에서 문항 은행(exam/)으로 매깁니다. 판단할 수 없는 답은 검토 대기열로 (lecturer/grading.md)
# (시간·메모리·프로세스 한도는 init이 이 파일 끝에 적습니다: "채점 한도")
c.GradeAnswers.bank_dir = os.path.join(c.CourseDirectory.root, "exam")
_steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
_steps[_steps.index(Execute)] = "decodelab.classroom.sandbox.SandboxedExecute"
# 학생이 쓴 마크다운과 학생 코드의 출력은 강의자의 formgrader 화면에 글자로만 (스크립트가 돌지 않게: decodelab.classroom.markup)
_steps.insert(_steps.index("decodelab.classroom.sandbox.SandboxedExecute") + 1, "decodelab.classroom.markup.NeutralizeMarkup")
_steps.insert(_steps.index(SaveAutoGrades) + 1, "decodelab.classroom.review.GradeAnswers")
c.Autograde.autograde_preprocessors = _steps
# 읽기 전용 칸은 배포본(숨은 테스트를 지운 칸)과 비교: 학생이 정말 고친 칸만 경고합니다 (decodelab.classroom.checksums)
c.Autograde.sanitize_preprocessors = [
    "decodelab.classroom.checksums.ReleaseAwareOverwriteCells" if getattr(s, "__name__", s) == "OverwriteCells" else s
    for s in Autograde.class_traits()["sanitize_preprocessors"].default()]
'''




def assignment_name(notebook: str) -> str:
    """nbgrader's assignment (and notebook) name of notebook ``NN``'s exam: ``exam-NN``."""
    return f"exam-{notebook}"


def default_bank() -> Path:
    """The exam bank folder: ``$DECODELAB_EXAM_BANK``, else ``classroom/exam`` of the repository
    checkout decodelab runs from (an installed wheel carries no bank, by design)."""
    env = os.environ.get("DECODELAB_EXAM_BANK")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "classroom" / "exam"


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict:
    m = {"grade": grade, "solution": solution, "locked": locked, "grade_id": grade_id, "schema_version": 3}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _md(source: str, grade_id: str, **kw):
    return nbformat.v4.new_markdown_cell(source, metadata=_meta(grade_id, **kw))


def _code(source: str, grade_id: str, **kw):
    return nbformat.v4.new_code_cell(source, metadata=_meta(grade_id, **kw))


HOW = {
    "single": '고른 기호 하나를 따옴표 안에 (예: 기호가 x라면 "x")',
    "multiple": '맞는 기호를 모두 목록으로 (예: 기호가 x와 y라면 ["x", "y"])',
    "short": '짧은 한국어 답을 따옴표 안에 (예: "답을 여기에")',
    "numeric": '수 또는 단위를 붙인 글자 (예: 21.9 또는 "21.9 ms")',
    "ordering": '항목 기호를 순서대로 목록으로 (예: ["X", "Y", "Z"])',
}


def _answer_cell(item_id: str, solution: str, how: str):
    src = (f"# 위 칸에서 답하거나 여기에 적으세요 (여기 적은 답이 우선): {how}\n"
           f"답[{item_id!r}] = (\n    ### BEGIN SOLUTION\n    {solution}\n    ### END SOLUTION\n)")
    return _code(src, f"{item_id}-answer", solution=True)


def _test_cell(item_id: str, points: float, body: str):
    """An autograded cell whose hidden part only records data (no key, no grading in the kernel)."""
    src = ("# 채점 칸: 제출한 뒤 강의자 쪽에서 채점합니다 (고치지 마세요)\n"
           f"### BEGIN HIDDEN TESTS\n{body}\n### END HIDDEN TESTS")
    return _code(src, item_id, grade=True, locked=True, points=points)


def _record(item_id: str) -> str:
    return f"from decodelab.classroom.student import record\nrecord({item_id!r}, 답.get({item_id!r}))"


def _question_text(q) -> str:
    lines = [q.prompt]
    for c in getattr(q, "choices", []) or []:
        lines.append(f"- **{c.id}**. {c.text}")
    for it in getattr(q, "items", []) or []:
        lines.append(f"- **{it.id}**. {it.text}")
    return "\n".join(lines)


def write_notebook(bank, notebook: str):
    """The nbgrader source notebook of notebook ``notebook``'s exam (an ``nbformat`` node)."""
    cells = [
        _md(f"# {bank.titles[notebook]}\n\n"
            "평가 노트북입니다. 문항마다 `답[...] = ...` 칸에 답을 적고, 코드 과제는 함수를 완성하고, 서술형은 글로 쓰세요. "
            "위에서부터 차례로 실행한 뒤 제출(Submit)하세요. 이름이나 학번은 적지 않습니다: 제출한 계정이 곧 학생입니다. "
            "수치 문항의 숫자는 학생마다 다릅니다. 채점과 해설은 제출 뒤 강의자가 돌려줍니다(피드백).",
            "header", locked=True),
        _code("from decodelab.classroom.student import answer_box, show\n\n답 = {}", "setup", locked=True),
    ]
    for n, item in enumerate(bank.items(notebook), 1):
        pts = bank.points(item)
        head = f"### 문항 {n} ({pts:g}점)"
        if isinstance(item, Parametric):
            pub = json.dumps(item.public(), ensure_ascii=False, indent=1)
            cells.append(_md(f"{head}\n\n아래 칸을 실행하면 나만의 수치로 문항이 나옵니다. "
                             "decodelab의 함수(decodelab.latency)를 써서 계산해도 됩니다.", f"{item.id}-prompt", locked=True))
            cells.append(_code(f"show({pub})", f"{item.id}-show", locked=True))
            cells.append(_code(f"answer_box({item.id!r}, 'numeric')", f"{item.id}-box", locked=True))
            q = item.question("source")  # the source notebook's own run (nbgrader validate) grades as "source"
            cells.append(_answer_cell(item.id, json.dumps(f"{q.answer:.6g} {q.unit}".strip(), ensure_ascii=False),
                                      HOW["numeric"] + (f", 단위 {item.unit}" if item.unit else "")))
            cells.append(_test_cell(item.id, pts, _record(item.id)))
        elif isinstance(item, Task):
            cells.append(_md(f"{head}\n\n{item.prompt}\n\n{TASK_NOTE}", f"{item.id}-prompt", locked=True))
            src = item.stub.replace("### SOLUTION\n", "### BEGIN SOLUTION\n" + item.solution + "    ### END SOLUTION\n")
            cells.append(_code(src.rstrip("\n"), f"{item.id}-answer", solution=True))
            cells.append(_test_cell(item.id, pts, "# 코드 과제: 강의자 쪽에서 이 함수만 새 파이썬에서 따로 실행해 채점합니다\n0"))
        elif isinstance(item, Written):
            cells.append(_md(f"{head} 서술형\n\n{item.prompt}", f"{item.id}-prompt", locked=True))
            cells.append(_md(f"### BEGIN SOLUTION\n{item.rubric}\n### END SOLUTION", item.id, grade=True,
                             solution=True, points=pts))
        else:  # a keyed quiz question (decodelab.assess.quiz.schema)
            cells.append(_md(f"{head}\n\n{_question_text(item)}", f"{item.id}-prompt", locked=True))
            ids = [c.id for c in getattr(item, "choices", []) or []] or None
            cells.append(_code(f"answer_box({item.id!r}, {item.kind!r}" + (f", {ids!r})" if ids else ")"),
                               f"{item.id}-box", locked=True))
            key = item.answer
            cells.append(_answer_cell(item.id, json.dumps(key, ensure_ascii=False), HOW[item.kind]))
            cells.append(_test_cell(item.id, pts, _record(item.id)))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_course(course_dir: Path, *, bank_dir: Path | None = None, course_id: str = "decodelab") -> None:
    """Write the nbgrader part of a course directory: ``nbgrader_config.py``, ``exam/`` (the bank),
    ``source/exam-NN/exam-NN.ipynb`` and ``source/practice/practice.ipynb`` (:mod:`.practice`). (The students' side of nbgrader is written into each
    student's home by the hub: :func:`decodelab.classroom.hub.pre_spawn_hook`.) Safe to run again (files are rewritten; the gradebook
    and students' work are left alone).

    Raises:
        ExamError: (Korean) no exam bank at ``bank_dir`` (default :func:`default_bank`).
    """
    course_dir = Path(course_dir)
    src = Path(bank_dir) if bank_dir else default_bank()
    if not all((src / f).is_file() for f in BANK_FILES):
        raise ExamError(f"{src}: 시험 문항 은행(items.yaml, parametric.py)이 없습니다 "
                        "(저장소의 classroom/exam 폴더를 DECODELAB_EXAM_BANK로 알려 주세요)")
    (course_dir / "exam").mkdir(parents=True, exist_ok=True)
    for f in BANK_FILES:
        shutil.copyfile(src / f, course_dir / "exam" / f)
    (course_dir / "nbgrader_config.py").write_text(
        NBGRADER_CONFIG.format(course_id=course_id, code_stub=ANSWER_STUB, text_stub=TEXT_STUB), encoding="utf-8")
    bank = load_bank(course_dir / "exam")
    for nb in bank.notebooks:
        name = assignment_name(nb)
        out = course_dir / "source" / name
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(write_notebook(bank, nb), out / f"{name}.ipynb")
    write_practice(course_dir)  # the practice answers' way to the lecturer (no grade: .practice)
