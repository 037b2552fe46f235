"""Autograde warns only for read-only cells a student really changed (issue 31, Deliver 5).

Real nbgrader in a temporary course: an assignment with the cell kinds the exam notebooks have
(read-only markdown and code, an answer cell, autograded test cells with hidden tests, a manually
graded answer), released; alice submits her copy as she ran it (outputs, execution counts, the
metadata JupyterLab adds), bob also edits a read-only cell; ``nbgrader autograde`` with the course's
default ``sanitize_preprocessors`` (from :data:`decodelab.classroom.assignments.NBGRADER_CONFIG`).
nbgrader's own ``OverwriteCells`` warned "checksum ... has changed" for every hidden-test cell of
both (nbgrader issue #1961). The checksum check is in the sanitizing step, before execution: the
notebooks are not executed here (no kernel: the suite stays fast).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")
from nbgrader.apps import NbGraderAPI  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from decodelab.classroom.assignments import ANSWER_STUB, NBGRADER_CONFIG, TEXT_STUB  # noqa: E402
from decodelab.classroom.checksums import ReleaseAwareOverwriteCells, released_source  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("classroom_checksums"),
              pytest.mark.filterwarnings("ignore:Object of type:Warning")]  # nbgrader's own session

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
        f"c.Autograde.sanitize_preprocessors = {[s if isinstance(s, str) else f'{s.__module__}.{s.__name__}' for s in sanitize]!r}\n"
        "from nbgrader.converters.autograde import Autograde\n"  # the checks are in sanitizing; no kernel
        "c.Autograde.autograde_preprocessors = [p for p in Autograde.class_traits()['autograde_preprocessors']"
        ".default() if p.__name__ != 'Execute']\n",
        encoding="utf-8")
    nbformat.write(_source_notebook(), course / "source" / A / f"{A}.ipynb")
    (base / "exchange").mkdir()
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # nbgrader runs alembic
    mp.setenv("HOME", str(base))
    try:
        yield {**_course(course), "sanitize": sanitize}
    finally:
        mp.undo()


def _course(course: Path) -> dict:
    """Generate, submit as alice and bob, autograde each (nbgrader's API, in this process)."""
    api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    done = api.generate_assignment(A)
    assert done["success"], done
    released = nbformat.read(course / "release" / A / f"{A}.ipynb", as_version=4)
    logs = {}
    for sid in ("alice", "bob"):
        nb = nbformat.read(course / "release" / A / f"{A}.ipynb", as_version=4)
        for n, cell in enumerate(nb.cells, 1):  # what running a cell in JupyterLab adds to it
            cell.metadata.setdefault("tags", [])
            cell.metadata["trusted"] = True
            if cell.cell_type == "code":
                cell.execution_count = n
                cell.metadata["execution"] = {"iopub.execute_input": "2026-12-06T08:00:00.000Z"}
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="문항: 7 × 6은?\n")]
        answer = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "q1-answer")
        answer.source = answer.source.replace(ANSWER_STUB, "42")
        if sid == "bob":  # a real edit of a read-only cell
            show = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "q1-show")
            show.source = show.source.replace("7 × 6", "1 + 1")
        out = course / "submitted" / sid / A
        out.mkdir(parents=True)
        nbformat.write(nb, out / f"{A}.ipynb")
        done = api.autograde(A, sid)
        assert done["success"], done
        logs[sid] = done["log"]
    return {"course": course, "logs": logs, "released": released}


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


def test_hidden_tests_are_back_in_the_untouched_submission(autograded):
    graded = nbformat.read(autograded["course"] / "autograded" / "alice" / A / f"{A}.ipynb", as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in graded.cells if "nbgrader" in c.metadata}
    assert "assert 답 is not None" in cells["q1"].source and "recorded again" in cells["q2"].source


def test_released_source_is_what_generate_assignment_released(autograded):
    from nbgrader.api import Gradebook

    released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in autograded["released"].cells}
    with Gradebook(f"sqlite:///{autograded['course'] / 'gradebook.db'}") as gb:
        for cell in gb.find_notebook(A, A).source_cells:
            assert released_source(cell.source, cell.cell_type) == released[cell.name], cell.name
    assert issubclass(ReleaseAwareOverwriteCells, __import__("nbgrader.preprocessors", fromlist=["x"]).OverwriteCells)
