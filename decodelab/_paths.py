"""Where the package's bundled files live: the one definition every module imports.

``ASSETS`` is ``decodelab/assets``; ``MODELS_DIR`` holds the bundled model pair (``target/``,
``draft/``, ``MODEL_CARD.md``, ``train_log.json``); ``FONTS_DIR`` the bundled Hangul font.
"""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
MODELS_DIR = ASSETS / "models"
FONTS_DIR = ASSETS / "fonts"

__all__ = ["ASSETS", "FONTS_DIR", "MODELS_DIR"]
