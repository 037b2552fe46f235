"""Practice answers handed in through nbgrader's exchange, and the lecturer's practice report of them.

The practice quizzes, predictions, written answers and tasks of notebooks 01-07 are saved in each
student's own home (``~/.decodelab/answers``); a student exports them as one submission file
(:mod:`decodelab.assess.quiz.submission`, ``decodelab-course-<login>.json``). On one server the
lecturer may gather those files from the homes (lecturer/classroom.md §3); on Zero to JupyterHub each
home is a volume of its own, mounted only in that student's pod, so the files travel the way graded
work does (lecturer/classroom.md §7.5): an nbgrader assignment ``practice`` whose single notebook
writes the file into the assignment's folder, submitted from the Assignments tab (ngshare takes
the submitter's name from the pod's hub token) and collected with ``nbgrader collect practice``.
Nothing here is graded by nbgrader (no grade cells); the files are data for
:func:`decodelab.assess.report.grade_folder`, the practice report, never for the gradebook.

:func:`gather` keeps, for each collected student folder, only the file named after that folder's
student whose ``student_id`` is that name (the same rule as the one-server loop over the homes), so
a file written under another name never enters the report. :func:`gather_homes` applies the same
rule to the homes on one server (``~<u>/decodelab-course-<u>.json``, lecturer/classroom.md §3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

__all__ = ["PRACTICE", "Gathered", "gather", "gather_homes", "practice_notebook", "write_practice"]

#: the nbgrader assignment (and its one notebook's stem) that carries the practice answers
PRACTICE = "practice"

INTRO = """\
# 연습 답 내기

노트북 01–07에서 저장한 연습 답(퀴즈 답, 예측, 서술 답, 실습 결과)을 제출 파일 하나로 모아 강사에게 냅니다.
이 점수는 성적에 들어가지 않습니다: 강사가 반 전체의 이해를 살피는 연습 보고서에만 쓰입니다.

1. 아래 셀을 실행합니다. 이 폴더에 `decodelab-course-<로그인 이름>.json` 이 생깁니다.
2. 위 메뉴 **Nbgrader → Assignment List** 로 여는 **Assignments** 화면에서 `practice` 의 **Submit** 을 누릅니다.

답을 더 하거나 고쳤으면 셀을 다시 실행하고 다시 냅니다(마지막에 낸 것을 걷습니다).
"""

EXPORT = """\
from decodelab.assess.quiz import AnswerStore

path = AnswerStore().export("", ".")  # JupyterHub에서는 로그인한 이름으로만 냅니다
print(f"만든 제출 파일: {path.name}")
"""


def practice_notebook() -> nbformat.NotebookNode:
    """The notebook of assignment :data:`PRACTICE`: a Korean how-to cell and the export cell
    (:meth:`decodelab.assess.quiz.AnswerStore.export` into the notebook's folder)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(INTRO), nbformat.v4.new_code_cell(EXPORT)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_practice(course_dir: str | os.PathLike) -> Path:
    """Write ``source/practice/practice.ipynb`` into the course folder (rewritten when there);
    returns its path. ``nbgrader generate_assignment practice`` then ``release_assignment practice``
    hand it out."""
    out = Path(course_dir) / "source" / PRACTICE
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{PRACTICE}.ipynb"
    nbformat.write(practice_notebook(), path)
    return path


@dataclass
class Gathered:
    """What :func:`gather` copied and what it left out.

    Attributes:
        copied: student -> the copied file in ``dest``.
        refused: (collected path, Korean reason) for each file or folder left out.
    """

    copied: dict[str, Path] = field(default_factory=dict)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def gather(course_dir: str | os.PathLike, dest: str | os.PathLike) -> Gathered:
    """Copy each student's collected practice file into ``dest`` for the practice report.

    Reads ``<course_dir>/submitted/<student>/practice/`` (``nbgrader collect practice`` writes it;
    the folder's name is the submitter that ngshare took from the hub token). Of each, only
    ``decodelab-course-<student>.json`` is taken, and only when it is a regular file (no link) that
    :func:`decodelab.assess.quiz.read_submission` accepts with ``student_id == <student>``; every
    other ``*.json`` there is listed in :attr:`Gathered.refused` with the reason.

    Args:
        course_dir: the course folder (``decodelab classroom init``).
        dest: the folder to fill (created). Its ``decodelab-course-*.json`` files from an earlier run
            are removed first, so that a file refused now never stays in the report.

    Raises:
        NotADirectoryError: (Korean) nothing collected yet (no ``submitted/`` folder).
    """
    submitted = Path(course_dir) / "submitted"
    if not submitted.is_dir():
        raise NotADirectoryError(f"{submitted}이(가) 없습니다: 먼저 강좌 폴더에서 nbgrader collect {PRACTICE} 를 실행하세요.")
    dest = _emptied(dest)
    out = Gathered()
    for student_dir in sorted(submitted.iterdir()):
        folder = student_dir / PRACTICE
        if not folder.is_dir() or folder.is_symlink() or student_dir.is_symlink():
            continue
        student = student_dir.name
        want = f"decodelab-course-{student}.json"
        for path in sorted(folder.glob("*.json")):
            if path.name != want:
                out.refused.append((path, f"{student}의 제출물에 든 다른 이름의 파일입니다 ({want}만 받습니다)"))
                continue
            _take(path, student, dest, out)
        if student not in out.copied and not any(p.parent == folder for p, _ in out.refused):
            out.refused.append((folder, f"{student}의 제출물에 제출 파일({want})이 없습니다"))
    return out


def gather_homes(homes: str | os.PathLike, dest: str | os.PathLike) -> Gathered:
    """Copy each home owner's own submission file into ``dest`` (one server, lecturer/classroom.md §3).

    For every folder ``<homes>/<u>/`` (not a link), ``decodelab-course-<u>.json`` is taken when it is
    a regular file whose ``student_id`` is ``u``, the same rule as :func:`gather`. Root reads here
    from folders the students own, so the file is read once (never through a link, never blocking
    on a FIFO, at most :data:`decodelab.assess.quiz.submission.MAX_BYTES`) and the copy in ``dest``
    is what is checked: a file swapped while it is read cannot enter. A home without the file (the
    lecturer's, a student who exported nothing) is passed over in silence.

    Raises:
        NotADirectoryError: (Korean) ``homes`` is not a folder.
    """
    homes = Path(homes)
    if not homes.is_dir():
        raise NotADirectoryError(f"{homes}이(가) 폴더가 아닙니다: 학생 홈들이 든 폴더(보통 /home)를 지정하세요.")
    dest = _emptied(dest)
    out = Gathered()
    for home in sorted(homes.iterdir()):
        path = home / f"decodelab-course-{home.name}.json"
        if home.is_symlink() or not home.is_dir() or not os.path.lexists(path):
            continue
        _take(path, home.name, dest, out)
    return out


def _emptied(dest: str | os.PathLike) -> Path:
    """``dest`` created (0700: the students' answers are private), without the
    ``decodelab-course-*.json`` files of an earlier run."""
    dest = Path(dest)
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    for old in dest.glob("decodelab-course-*.json"):
        if old.is_symlink() or old.is_file():
            old.unlink()
    return dest


def _take(path: Path, student: str, dest: Path, out: Gathered) -> None:
    """Copy ``path`` to ``dest/decodelab-course-<student>.json`` if it is ``student``'s own submission
    file; else record in ``out.refused`` why not. The bytes are read once
    (:func:`~decodelab.assess.quiz.submission.read_submission_bytes`: no link, no FIFO, size-capped),
    checked, and those same bytes are written (a new file, mode 0600), so what is checked is what the
    report reads."""
    from .._atomic import atomic_write_bytes, os_reason
    from ..assess.quiz.submission import SubmissionError, parse_submission, read_submission_bytes

    try:
        data = read_submission_bytes(path)
        sub = parse_submission(data)
    except SubmissionError as e:
        out.refused.append((path, str(e)))
        return
    if sub.student_id != student:
        out.refused.append((path, f"파일 안의 학생 id {sub.student_id!r}가 낸 사람 {student}와 다릅니다"))
        return
    target = dest / f"decodelab-course-{student}.json"
    try:
        atomic_write_bytes(target, data)
    except OSError as e:
        out.refused.append((path, f"사본을 쓰지 못했습니다: {os_reason(e, path=True)}"))
        return
    out.copied[student] = target
