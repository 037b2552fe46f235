"""Tiny helper shared by the notebook builder scripts: markdown/code cells -> .ipynb (no outputs)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def build(filename: str, cells: list[tuple[str, str]]) -> Path:
    """Write ``notebooks/<filename>`` from ``[("md" | "code", source), ...]``; kernelspec python3."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, src in cells:
        src = src.strip("\n")
        nb.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src))
    for i, cell in enumerate(nb.cells):  # stable ids: rebuilding gives the same file
        cell["id"] = f"c{i:02d}"
    path = NOTEBOOKS / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    print(f"wrote {path}", file=sys.stderr)
    return path
