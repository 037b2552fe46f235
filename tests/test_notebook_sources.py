"""Each notebook has one text source: ``notebooks/src/NN_*.md`` (jupytext MyST markdown), paired
with ``notebooks/NN_*.ipynb`` (what lecturers open). Edit either one: in JupyterLab the pair is
kept in sync by jupytext on save; on the command line run ``jupytext --sync notebooks/*.ipynb``.

These tests fail when a pair is out of sync, when a pairing is missing, or when a committed
notebook keeps outputs or execution counts (outputs belong to a run, not to the course).
"""

from __future__ import annotations

import json
from pathlib import Path

import jupytext
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
IPYNBS = sorted(NOTEBOOKS.glob("*.ipynb"))
SOURCES = sorted((NOTEBOOKS / "src").glob("*.md"))
FORMATS = "ipynb,src//md:myst"
# jupytext's own bookkeeping; everything else in a cell's metadata (slides, tags) must match.
_IGNORED_CELL_KEYS = {"id", "execution", "ExecuteTime", "jp-MarkdownHeadingCollapsed"}


def _cells(nb) -> list[tuple[str, str, dict]]:
    return [(c.cell_type, c.source.strip("\n"),
             {k: v for k, v in c.metadata.items() if k not in _IGNORED_CELL_KEYS}) for c in nb.cells]


def test_every_notebook_has_a_text_source_and_back():
    assert IPYNBS, "no notebooks found"
    assert [p.stem for p in IPYNBS] == [p.stem for p in SOURCES]


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.name)
def test_pair_is_declared(ipynb):
    meta = json.loads(ipynb.read_text(encoding="utf-8"))["metadata"]
    assert meta.get("jupytext", {}).get("formats") == FORMATS, (
        f"{ipynb.name}: jupytext pairing missing; run: jupytext --set-formats '{FORMATS}' {ipynb}")
    assert meta["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.name)
def test_pair_in_sync(ipynb):
    md = NOTEBOOKS / "src" / f"{ipynb.stem}.md"
    from_ipynb = _cells(jupytext.read(ipynb))
    from_md = _cells(jupytext.read(md))
    assert len(from_ipynb) == len(from_md), (
        f"{ipynb.name} has {len(from_ipynb)} cells, {md.name} {len(from_md)}: "
        f"run `jupytext --sync {ipynb}` after editing either file")
    for i, (a, b) in enumerate(zip(from_ipynb, from_md)):
        assert a == b, f"cell {i} of {ipynb.name} differs from {md.name}: run `jupytext --sync {ipynb}`"


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.name)
def test_no_outputs_stored(ipynb):
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{ipynb.name} cell {i} stores outputs (clear them before committing)"
            assert cell.get("execution_count") is None, f"{ipynb.name} cell {i} stores an execution count"
    assert "widgets" not in nb["metadata"], f"{ipynb.name} stores widget state"


def test_sync_check_catches_a_change(tmp_path):
    """The comparison above must see a one-character edit of a text source."""
    ipynb = IPYNBS[0]
    nb = jupytext.read(NOTEBOOKS / "src" / f"{ipynb.stem}.md")
    nb.cells[-1].source += "x"
    assert _cells(nb) != _cells(jupytext.read(ipynb))


def strikethrough_tildes(markdown: str) -> list[str]:
    """Paragraphs of a markdown cell that JupyterLab would partly strike through: GitHub-flavoured
    markdown (JupyterLab's renderer) reads text between two single tildes as ~~strikethrough~~,
    so "1~2배 … 3~4 ms" loses its middle. Fenced code, inline code and math are left out.
    Returns the offending paragraphs (first 80 characters each)."""
    import re

    text = re.sub(r"(?ms)^\s*(`{3,}|~{3,}).*?^\s*\1[^\n]*$", "", markdown)  # fenced blocks
    out = []
    for para in re.split(r"\n\s*\n", text):
        bare = re.sub(r"`+[^`]*`+|\$\$.*?\$\$|\$[^$\n]*\$", "", para, flags=re.S)
        if len(re.findall(r"(?<!~)~(?!~)", bare)) >= 2:
            out.append(" ".join(para.split())[:80])
    return out


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.name)
def test_no_markdown_paragraph_has_two_single_tildes(ipynb):
    """A range written "a~b" twice in one paragraph renders as strikethrough: write "a–b" (en dash)
    or "a부터 b까지"."""
    bad = []
    for i, cell in enumerate(json.loads(ipynb.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            bad += [f"cell {i}: {p}" for p in strikethrough_tildes(src)]
    assert not bad, f"{ipynb.name}: two single '~' in one paragraph strike the text between them through:\n" + "\n".join(bad)


def test_the_tilde_check_reads_paragraphs_and_skips_code_and_math():
    assert strikethrough_tildes("토큰 0~i에서만 나오고, 출력도 토큰 0~i만 봅니다.")
    assert strikethrough_tildes("1.1~1.3배가 들어\n그 순전파는 3.4~6.9 ms입니다.")  # one paragraph, two lines
    assert not strikethrough_tildes("1.1~1.3배입니다.\n\n3.4~6.9 ms입니다.")  # two paragraphs: no pair
    assert not strikethrough_tildes("1.1–1.3배, 3.4–6.9 ms")
    assert not strikethrough_tildes("`a~b` 와 `c~d`, $x \\sim y$ 와 $~$ 하나, $$p~q$$ ~ 하나")
    assert not strikethrough_tildes("```text\na~b\nc~d\n```\n")
    assert not strikethrough_tildes("~~지운 글~~")  # a deliberate strikethrough
