"""nbgrader assignments built from the course, the exam bank and the LMS export.

Placeholder: the graded-assignments work (nbgrader) replaces this module. Its public entry points
are fixed by :mod:`decodelab.classroom.cli` and :mod:`decodelab.classroom.hub`:

- ``write_course(course_dir: pathlib.Path) -> None``: ``nbgrader_config.py`` and ``source/``.
- ``variant_main(argv) -> int`` and ``export_main(argv) -> int``: the ``decodelab classroom`` subcommands.
"""

from __future__ import annotations

from pathlib import Path


def write_course(course_dir: Path) -> None:
    """Write the nbgrader part of a course directory (nothing yet)."""


def variant_main(argv: list[str]) -> int:
    raise SystemExit("decodelab classroom variant: 아직 준비되지 않았습니다")


def export_main(argv: list[str]) -> int:
    raise SystemExit("decodelab classroom export: 아직 준비되지 않았습니다")
