"""Where the package's bundled files live: the one definition every module imports.

Every path is found with :func:`importlib.resources.files` on the ``decodelab`` package, so a
source checkout, an editable install and an installed wheel resolve them the same way:

- ``ASSETS`` is ``decodelab/assets``: ``MODELS_DIR`` holds the bundled model pair (``target/``,
  ``draft/``, ``MODEL_CARD.md``, ``train_log.json``), ``FONTS_DIR`` the bundled Hangul font,
  ``PRESETS_CSV`` the hardware/model presets;
- ``COURSE_DIR`` is ``decodelab/_course``: ``QUIZZES_DIR`` the practice quiz bank (``NN.yaml``),
  ``EXERCISES_DIR`` the exercise definitions (``exercises/NN.yaml``), ``NOTEBOOKS_DIR`` the course
  notebooks (``NN_*.ipynb``) that ``decodelab lab`` copies for a student.

In the repository ``decodelab/_course/quizzes`` and ``decodelab/_course/notebooks`` are relative
symbolic links to the top-level ``quizzes/`` and ``notebooks/`` folders (where the course is
edited); building the wheel copies the files they point to into the wheel (``pyproject.toml``,
``[tool.setuptools.package-data]``), so an installed wheel holds real folders at the same place.
The lecturer-only exam bank (top-level ``classroom/exam/``) is outside the package and never
in the wheel.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _package_root() -> Path:
    """``decodelab/`` as a filesystem path (the package must be installed unzipped, as pip does).

    Raises:
        RuntimeError: the package is imported from a zip archive (Korean message).
    """
    root = files("decodelab")
    if not isinstance(root, Path):
        raise RuntimeError(
            f"decodelab이 압축 파일 안에서 불러와졌습니다({root}): 번들 파일을 읽으려면 "
            "`pip install decodelab`처럼 압축을 푼 설치가 필요합니다."
        )
    return root


PACKAGE = _package_root()
ASSETS = PACKAGE / "assets"
MODELS_DIR = ASSETS / "models"
FONTS_DIR = ASSETS / "fonts"
PRESETS_CSV = ASSETS / "presets.csv"
COURSE_DIR = PACKAGE / "_course"
QUIZZES_DIR = COURSE_DIR / "quizzes"
EXERCISES_DIR = QUIZZES_DIR / "exercises"
NOTEBOOKS_DIR = COURSE_DIR / "notebooks"

__all__ = [
    "ASSETS",
    "COURSE_DIR",
    "EXERCISES_DIR",
    "FONTS_DIR",
    "MODELS_DIR",
    "NOTEBOOKS_DIR",
    "PACKAGE",
    "PRESETS_CSV",
    "QUIZZES_DIR",
]
