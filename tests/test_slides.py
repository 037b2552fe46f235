"""Every notebook is also a slide deck (jupyterlab-rise reads each cell's ``slideshow`` metadata).

A deck has at least 15 slides (a "slide" or "subslide" cell starts one), starts with a slide, uses
only the slide types RISE knows, and never hides a live widget (quiz, exercise, explorer) with
"skip" or "notes", so the widgets work in the slideshow.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}
MIN_SLIDES = 15
#: calls that put a live widget on screen
WIDGET_CALL = re.compile(r"\b(quiz_widget|ex\.(predict|reveal|written|check)|\w+_explorer)\s*\(")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _slide_type(cell: dict) -> str | None:
    return (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type")


def count_slides(cells: list[dict]) -> int:
    """Screens of the deck: the first cell always opens one; each later "slide" or "subslide" another."""
    return sum(1 for i, c in enumerate(cells) if i == 0 or _slide_type(c) in ("slide", "subslide"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 6


def test_count_slides():
    def cell(t=None):
        return {"metadata": {"slideshow": {"slide_type": t}} if t else {}}

    assert count_slides([cell("slide"), cell(), cell("fragment"), cell("subslide"), cell("slide"), cell("skip")]) == 3
    assert count_slides([cell(), cell()]) == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_a_slide_deck(path):
    cells = _cells(path)
    marked = [c for c in cells if _slide_type(c) is not None]
    assert marked, f"{path.name}: 슬라이드 메타데이터(slideshow)가 없습니다"
    bad = sorted({_slide_type(c) for c in marked} - SLIDE_TYPES)
    assert bad == [], f"{path.name}: 알 수 없는 slide_type {bad} (허용: {sorted(SLIDE_TYPES)})"
    assert _slide_type(cells[0]) == "slide", f"{path.name}: 첫 셀은 slide여야 합니다"
    n = count_slides(cells)
    assert n >= MIN_SLIDES, f"{path.name}: 슬라이드 {n}장 (최소 {MIN_SLIDES}장)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_live_widgets_are_shown_in_the_slideshow(path):
    hidden = []
    for i, c in enumerate(_cells(path)):
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] == "code" and WIDGET_CALL.search(src) and _slide_type(c) in ("skip", "notes"):
            hidden.append(i)
    assert hidden == [], f"{path.name}: 위젯 셀 {hidden}이 슬라이드에서 숨겨져 있습니다"


def deck_unreachable(cells: list[dict]) -> list[int]:
    """Cells that jupyterlab-deck 0.2.0's on-screen buttons never show: a "subslide" whose previous
    shown cell (skip and notes do not count) is itself a "subslide". Its extents code links the
    next subslide to the SLIDE's last cell (``lib/notebook/presenter.js``, ``_getExtents``, case
    'subslide': it checks nulls, fragments, then the slide, never the previous subslide), so the
    earlier subslide drops out of the down-chain. A following "slide" or a cell in between avoids it."""
    out, prev, prev_i = [], None, -1
    for i, c in enumerate(cells):
        kind = _slide_type(c)
        if kind in ("skip", "notes"):
            continue
        if kind == "subslide" and prev == "subslide":
            out.append(prev_i)
        prev, prev_i = kind, i
    return out


def test_deck_unreachable_on_a_made_up_deck():
    def cell(t=None):
        return {"metadata": {"slideshow": {"slide_type": t}} if t else {}}

    # 04's histogram section as it was: slide, subslide, subslide, subslide, cell -> two never shown
    assert deck_unreachable([cell("slide"), cell("subslide"), cell("subslide"), cell("subslide"), cell()]) == [1, 2]
    assert deck_unreachable([cell("slide"), cell("subslide"), cell(), cell("subslide"), cell("skip"), cell("slide")]) == []
    assert deck_unreachable([cell("slide"), cell("subslide"), cell("notes"), cell("subslide")]) == [1]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_is_reachable_with_the_deck_buttons(path):
    assert deck_unreachable(_cells(path)) == [], (
        f"{path.name}: 셀 {deck_unreachable(_cells(path))} 바로 뒤에 다시 subslide가 와서 jupyterlab-deck의 화면 버튼으로 "
        "갈 수 없습니다 (뒤 셀을 slide로 바꾸거나 사이에 셀을 두세요)")
