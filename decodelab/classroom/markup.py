"""nbgrader autograde step: what a student wrote or printed reaches the lecturer's pages as text.

formgrader (and the feedback nbgrader generates) renders a submission with nbconvert's HTML
exporter and nbgrader's ``formgrade`` template, whose markdown block passes a cell's source through
``markdown2html`` without any cleaning, and whose outputs are raw HTML unless the exporter
sanitises. A written answer such as ``<img src=x onerror="...">`` or a ``display(HTML("<script>"))``
in an answer cell would then run script in the lecturer's grading page, with the grader's session
(its Jupyter API runs code as the grader account). So, in the autograded copy only (never the
student's submission), right after the student's notebook has run in the sandbox:

- every markdown cell the release did not lock (written answers, cells the student added) has its
  ``<`` written as ``&lt;`` (no tag survives: the lecturer reads the characters the student typed)
  and link targets with a script scheme (``javascript:``, ``vbscript:``, ``data:``) replaced by ``#``;
- every code cell's outputs keep only inert data: ``text/plain``, PNG/JPEG images, streams, errors
  and the answer record of :mod:`decodelab.classroom.student` (JSON); ``text/html``, SVG,
  JavaScript, markdown, LaTeX and widget views are dropped (their ``text/plain`` stays).

Locked cells (the course's own text) are left alone: nbgrader's ``OverwriteCells`` has already put
the released version back. The scores do not depend on any of this (:mod:`.review` reads the
answer records).
"""

from __future__ import annotations

import re

from nbgrader.preprocessors import NbGraderPreprocessor

from .student import ANSWER_MIME

__all__ = ["NeutralizeMarkup", "SAFE_MIMES", "neutral_markdown"]

#: output data kept in the autograded copy (everything else a kernel may emit is dropped)
SAFE_MIMES = frozenset({"text/plain", "image/png", "image/jpeg", "image/gif", ANSWER_MIME})

_SCHEME = re.compile(r"(\]\(\s*<?|^\s*\[[^\]\n]*\]:\s*<?)\s*(?:javascript|vbscript|data)\s*:[^)\s>]*",
                     re.IGNORECASE | re.MULTILINE)


def neutral_markdown(source: str) -> str:
    """``source`` with no HTML tag and no script link left: ``<`` -> ``&lt;``; a link or reference
    target starting with ``javascript:``, ``vbscript:`` or ``data:`` (any case) -> ``#``."""
    return _SCHEME.sub(lambda m: m.group(1) + "#", source.replace("<", "&lt;"))


def _locked(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and not meta.get("solution")


class NeutralizeMarkup(NbGraderPreprocessor):
    """Student markdown as text, code outputs without active content (see the module docstring)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and not _locked(cell):
            cell.source = neutral_markdown(cell.source)
        elif cell.cell_type == "code":
            kept = []
            for out in cell.get("outputs", []):
                if out.get("output_type") in ("display_data", "execute_result"):
                    out["data"] = {k: v for k, v in out.get("data", {}).items() if k in SAFE_MIMES}
                    if not out["data"]:
                        continue
                kept.append(out)
            cell.outputs = kept
        # attachments: images a student pasted into a markdown cell may be SVG with script
        if cell.get("attachments"):
            cell["attachments"] = {name: {k: v for k, v in data.items() if k in SAFE_MIMES}
                                   for name, data in cell["attachments"].items()}
        return cell, resources
