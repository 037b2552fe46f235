"""``decodelab classroom``: set up and run the course for a class.

Subcommands, each owned by the module that does the work:

- ``init DIR``: writes the course directory (hub files by :mod:`.hub`, nbgrader files by
  :mod:`.assignments`).
- ``hub DIR --port P``: a thin wrapper over ``jupyterhub -f DIR/jupyterhub_config.py`` (:mod:`.hub`).
- ``variant DIR ITEM STUDENT`` / ``variant DIR --list``: a student's numbers and answer of a
  parametric exam item (:mod:`.assignments`).
- ``autograde DIR ASSIGNMENT``: nbgrader's autograde with students' code in the sandbox of
  :mod:`.sandbox` (refused, in Korean, where it would run as root unsandboxed).
- ``export DIR --lms canvas|moodle -o FILE``: LMS grade file from nbgrader's gradebook
  (:mod:`.lms`).

The course folder's basics they share (config name, user-name rule, CSV and roster reading) are in
the leaf :mod:`.course`, so no two of these modules import each other both ways.
"""

from __future__ import annotations

import sys

from ..cli import dispatch

#: subcommand -> (module:function taking argv and returning an exit code, Korean help)
SUBCOMMANDS = {
    "init": ("decodelab.classroom.hub:init_main", "강좌 폴더를 만듭니다 (jupyterhub_config.py, nbgrader_config.py, 과제)"),
    "hub": ("decodelab.classroom.hub:hub_main", "JupyterHub를 띄웁니다: jupyterhub -f DIR/jupyterhub_config.py"),
    "variant": ("decodelab.classroom.assignments:variant_main", "학생별 문항의 수치와 정답을 봅니다 (강의자용)"),
    "autograde": ("decodelab.classroom.sandbox:autograde_main",
                  "제출물을 채점합니다: 학생 코드는 격리된 권한 없는 계정으로, 점수는 강의자 쪽에서 (root로 격리 없이는 거부)"),
    "export": ("decodelab.classroom.lms:export_main", "nbgrader 성적을 LMS(Canvas/Moodle) 파일로 내보냅니다"),
}


def main(argv: list[str] | None = None) -> int:
    """Run one ``decodelab classroom`` subcommand; returns its exit code (2 for an unknown one)."""
    return dispatch("decodelab classroom", SUBCOMMANDS, list(sys.argv[1:] if argv is None else argv))
