"""Quiz ``source`` references to notebooks point at real sections.

Every ``{notebook: "NN", passage: ...}`` entry of a question's ``source`` names, exactly, a
markdown heading (without the #'s) of notebook NN's MyST source ``notebooks/src/NN_*.md``.
Lines inside code cells and fenced blocks (a ``# comment`` in a code cell) are not headings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from decodelab.assess.quiz import load_quizzes

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS_SRC = REPO / "notebooks" / "src"
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def headings(text: str) -> list[str]:
    """The markdown headings of a MyST notebook source, in order, outside ``` fences."""
    out, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = HEADING.match(line)
        if m and not fence:
            out.append(m.group(1).strip())
    return out


def notebook_headings(nn: str) -> set[str]:
    paths = sorted(NOTEBOOKS_SRC.glob(f"{nn}_*.md"))
    assert len(paths) == 1, f"노트북 {nn}의 MyST 원본이 하나가 아닙니다: {[p.name for p in paths]}"
    return set(headings(paths[0].read_text(encoding="utf-8")))


def notebook_refs() -> list[tuple[str, str, str]]:
    """``(question id, notebook, passage)`` for each notebook entry of every question's source."""
    out = []
    for q in load_quizzes():
        for ref in q.source or []:
            if ref.notebook is not None:
                out.append((q.id, ref.notebook, ref.passage))
    return out


def test_heading_parser_skips_code_cells_and_fences():
    text = ("---\njupytext: {}\n---\n\n# 01. 제목\n\n```{code-cell}\n# 주석은 제목이 아님\nx = 1\n```\n\n"
            "## 둘째 절 ##\n\n```bash\n# 셸 주석\n```\n\n### 셋째: 절 (예)\n본문 # 가운데 샵\n")
    assert headings(text) == ["01. 제목", "둘째 절", "셋째: 절 (예)"]


def test_there_are_notebook_references():
    refs = notebook_refs()
    assert len(refs) > 80
    assert {nn for _, nn, _ in refs} >= {"01", "02", "03", "04", "05", "07"}


def test_every_notebook_passage_is_a_heading_of_its_notebook():
    cache: dict[str, set[str]] = {}
    bad = []
    for qid, nn, passage in notebook_refs():
        if nn not in cache:
            cache[nn] = notebook_headings(nn)
        if passage not in cache[nn]:
            bad.append(f"{qid}: 노트북 {nn}에 '{passage}' 제목이 없습니다")
    assert bad == [], "문항의 source가 가리키는 절이 없습니다 (제목을 # 없이 그대로 적으세요):\n" + "\n".join(bad)


def test_a_wrong_passage_is_caught():
    h = notebook_headings("04")
    assert "한 라운드에 일어나는 일" in h
    assert "라운드별로 보기" not in h and "한 라운드에 일어나는 일 (그림)" not in h


@pytest.mark.parametrize("nn", ["01", "04"])
def test_code_cell_comments_are_not_headings(nn):
    (path,) = NOTEBOOKS_SRC.glob(f"{nn}_*.md")
    comments = {m.group(1).strip() for m in re.finditer(r"^#\s+(.+)$", path.read_text(encoding="utf-8"), re.M)}
    # some ``# ...`` lines of this notebook are code comments, and none of those is taken for a heading
    code_only = comments - set(headings(path.read_text(encoding="utf-8")))
    assert code_only, "이 노트북에 코드 주석 줄이 있어야 검사가 의미가 있습니다"
    assert not code_only & notebook_headings(nn)
