"""Autograde warns only for read-only cells a student really changed (issue 31, Deliver 5).

Real nbgrader in a temporary course: an assignment with the cell kinds the exam notebooks have
(read-only markdown and code, an answer cell, autograded test cells with hidden tests, a manually
graded answer), released; alice runs her copy as it is (outputs, execution counts, the metadata
JupyterLab adds), bob also edits a read-only cell; the course's default ``sanitize_preprocessors``
(from :data:`decodelab.classroom.assignments.NBGRADER_CONFIG`) autograde both. nbgrader's own
``OverwriteCells`` warned "checksum ... has changed" for every hidden-test cell of both
(nbgrader issue #1961).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")
from nbclient import NotebookClient  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from decodelab.classroom.assignments import ANSWER_STUB, NBGRADER_CONFIG, TEXT_STUB  # noqa: E402
from decodelab.classroom.checksums import ReleaseAwareOverwriteCells, released_source  # noqa: E402

pytestmark = pytest.mark.slow

A = "ps1"
CHECKSUM = re.compile(r"Attribute 'checksum' for cell (\S+) has changed")


def _meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
    m = {"grade": grade, "solution": solution, "locked": locked, "grade_id": grade_id, "schema_version": 3}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _source_notebook():
    c, md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    test = "# 채점 칸 (고치지 마세요)\n### BEGIN HIDDEN TESTS\nassert 답 is not None\nprint('recorded')\n### END HIDDEN TESTS"
    return nbformat.v4.new_notebook(cells=[
        md("# 평가\n\n위에서부터 차례로 실행하세요.", metadata=_meta("header", locked=True)),
        c("답 = {}\nprint('문항: 7 × 6은?')", metadata=_meta("q1-show", locked=True)),
        c("답 = (\n    ### BEGIN SOLUTION\n    42\n    ### END SOLUTION\n)", metadata=_meta("q1-answer", solution=True)),
        c(test, metadata=_meta("q1", grade=True, locked=True, points=1)),
        c(test.replace("recorded", "recorded again"), metadata=_meta("q2", grade=True, locked=True, points=2)),
        md("### BEGIN SOLUTION\n채점 기준\n### END SOLUTION", metadata=_meta("w1", grade=True, solution=True, points=3)),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def _default_sanitize(tmp: Path) -> list:
    """``Autograde.sanitize_preprocessors`` as the course's nbgrader_config.py sets it."""
    (tmp / "nbgrader_config.py").write_text(
        NBGRADER_CONFIG.format(course_id="decodelab", code_stub=ANSWER_STUB, text_stub=TEXT_STUB), encoding="utf-8")
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(tmp)).load_config()
    return list(cfg.Autograde.sanitize_preprocessors)


def _run(args, cwd, env):
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


@pytest.fixture(scope="module")
def autograded(tmp_path_factory):
    base = tmp_path_factory.mktemp("checksums")
    sanitize = _default_sanitize(tmp_path_factory.mktemp("default-config"))
    course = base / "course"
    (course / "source" / A).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\nc.CourseDirectory.course_id = 'decodelab'\n"
        f"c.Exchange.root = {str(base / 'exchange')!r}\n"
        f"c.ClearSolutions.code_stub = {{'python': {ANSWER_STUB!r}}}\n"
        f"c.Autograde.sanitize_preprocessors = {[s if isinstance(s, str) else f'{s.__module__}.{s.__name__}' for s in sanitize]!r}\n",
        encoding="utf-8")
    nbformat.write(_source_notebook(), course / "source" / A / f"{A}.ipynb")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(base / "home")}
    (base / "home").mkdir()
    _run(["generate_assignment", A, "--force"], course, env)
    released = nbformat.read(course / "release" / A / f"{A}.ipynb", as_version=4)
    logs = {}
    for sid in ("alice", "bob"):
        nb = nbformat.read(course / "release" / A / f"{A}.ipynb", as_version=4)
        for cell in nb.cells:  # what JupyterLab adds to a cell the student only runs
            cell.metadata.setdefault("tags", [])
            cell.metadata["trusted"] = True
        answer = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "q1-answer")
        answer.source = answer.source.replace(ANSWER_STUB, "42")
        if sid == "bob":  # a real edit of a read-only cell
            show = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "q1-show")
            show.source = show.source.replace("7 × 6", "1 + 1")
        NotebookClient(nb, timeout=60, kernel_name="python3").execute()
        out = course / "submitted" / sid / A
        out.mkdir(parents=True)
        nbformat.write(nb, out / f"{A}.ipynb")
        logs[sid] = _run(["autograde", A, "--student", sid, "--force"], course, env)
    return {"course": course, "logs": logs, "released": released, "sanitize": sanitize}


def test_the_course_config_uses_the_release_aware_check(autograded):
    names = [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}" for s in autograded["sanitize"]]
    assert "decodelab.classroom.checksums.ReleaseAwareOverwriteCells" in names
    assert not any(n.endswith(".OverwriteCells") for n in names)


def test_untouched_cells_give_no_checksum_warning(autograded):
    log = autograded["logs"]["alice"]
    assert "Sanitizing" in log  # the run really autograded
    assert CHECKSUM.findall(log) == [], log


def test_a_really_edited_read_only_cell_still_warns_and_is_restored(autograded):
    assert CHECKSUM.findall(autograded["logs"]["bob"]) == ["q1-show"], autograded["logs"]["bob"]
    graded = nbformat.read(autograded["course"] / "autograded" / "bob" / A / f"{A}.ipynb", as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in graded.cells if "nbgrader" in c.metadata}
    assert "7 × 6" in cells["q1-show"].source  # nbgrader put the lecturer's cell back
    assert "BEGIN HIDDEN TESTS" in cells["q1"].source  # and the hidden tests, for both students


def test_hidden_tests_ran_for_the_untouched_submission(autograded):
    graded = nbformat.read(autograded["course"] / "autograded" / "alice" / A / f"{A}.ipynb", as_version=4)
    q1 = next(c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "q1")
    assert "BEGIN HIDDEN TESTS" in q1.source
    assert any("recorded" in o.get("text", "") for o in q1.outputs)


def test_released_source_is_what_generate_assignment_released(autograded):
    from nbgrader.api import Gradebook

    released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in autograded["released"].cells}
    with Gradebook(f"sqlite:///{autograded['course'] / 'gradebook.db'}") as gb:
        for cell in gb.find_notebook(A, A).source_cells:
            assert released_source(cell.source, cell.cell_type) == released[cell.name], cell.name
    assert issubclass(ReleaseAwareOverwriteCells, __import__("nbgrader.preprocessors", fromlist=["x"]).OverwriteCells)
