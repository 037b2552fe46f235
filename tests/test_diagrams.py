"""The mechanism diagrams: drawn by scripts/draw_diagrams.py, kept in notebooks/figures/, embedded in 01-05."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import matplotlib
import pytest

REPO = Path(__file__).resolve().parents[1]
FIGURES = REPO / "notebooks" / "figures"
LINK = re.compile(r"!\[[^\]]+\]\((figures/[^)\s]+)\)")


def _script():
    spec = importlib.util.spec_from_file_location("draw_diagrams", REPO / "scripts" / "draw_diagrams.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook_links(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [m for c in nb["cells"] if c["cell_type"] == "markdown" for m in LINK.findall("".join(c["source"]))]


def test_the_folder_holds_exactly_the_scripts_diagrams():
    names = set(_script().FIGURES)
    assert {p.name for p in FIGURES.iterdir() if p.suffix in (".svg", ".png")} == names


@pytest.mark.parametrize("nn", ["01", "02", "03", "04", "05"])
def test_each_notebook_embeds_its_diagrams_by_a_relative_link(nn):
    ipynb = next((REPO / "notebooks").glob(f"{nn}_*.ipynb"))
    src = next((REPO / "notebooks" / "src").glob(f"{nn}_*.md"))
    links = _notebook_links(ipynb)
    own = sorted(f"figures/{n}" for n in _script().FIGURES if n.startswith(nn + "_"))
    assert own, f"notebook {nn} has no diagram"
    assert sorted(links) == own == sorted(LINK.findall(src.read_text(encoding="utf-8")))
    for link in links:
        assert (ipynb.parent / link).is_file()


def test_every_image_link_in_any_notebook_resolves():
    for ipynb in (REPO / "notebooks").glob("*.ipynb"):
        for link in _notebook_links(ipynb):
            assert (ipynb.parent / link).is_file(), (ipynb.name, link)


def test_svgs_are_up_to_date_with_the_script():
    module = _script()
    for name in module.FIGURES:
        stored = (FIGURES / name).read_bytes()
        assert stored.startswith(b"<?xml") and b"<svg" in stored[:400]
        assert b"<text" not in stored            # text drawn as paths: no font needed to view
        made_with = re.search(rb"Matplotlib v([\d.]+)", stored).group(1).decode()
        if made_with != matplotlib.__version__:
            pytest.skip(f"{name} was drawn with matplotlib {made_with}; this is {matplotlib.__version__}")
        assert module.render(name) == stored, f"{name} is out of date: run python scripts/draw_diagrams.py"
