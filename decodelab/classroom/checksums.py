"""Autograde warns only for read-only cells a student really changed.

nbgrader 0.9's ``generate_assignment`` records each read-only cell's checksum in the gradebook
*before* ``ClearHiddenTests`` removes the hidden tests, so the released cell, untouched, never
matches it: ``autograde`` (``OverwriteCells``) then warns "Attribute 'checksum' for cell ... has
changed!" for every autograded test cell of every student (nbgrader issue #1961, open), and the
warnings that matter drown. It restores the recorded source either way.

:class:`ReleaseAwareOverwriteCells` replaces ``OverwriteCells`` in ``Autograde.sanitize_preprocessors``
(the ``nbgrader_config.py`` that ``decodelab classroom init`` writes): a submitted read-only cell
that equals the *released* form of its recorded source (hidden tests and mark schemes cleared with
the course's own delimiters) is put back silently; any other difference is left to nbgrader's
check, which warns and restores the cell as before.
"""

from __future__ import annotations

import copy

from .pins import require

require("nbgrader")  # released_source calls nbgrader 0.9's private ClearHiddenTests._remove_hidden_test_region

from nbgrader.api import MissingEntry  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, OverwriteCells  # noqa: E402

__all__ = ["ReleaseAwareOverwriteCells", "released_source"]


def released_source(source: str, cell_type: str, *, parent=None) -> str:
    """The source a read-only cell has in the release: ``source`` (as recorded in the gradebook)
    without its hidden-test and mark-scheme regions, with ``parent``'s nbgrader configuration
    (delimiters). Raises RuntimeError (nbgrader's) for an unbalanced region."""
    from nbformat.v4 import new_code_cell, new_markdown_cell

    cell = new_code_cell(source) if cell_type == "code" else new_markdown_cell(source)
    ClearHiddenTests(parent=parent)._remove_hidden_test_region(cell)
    if cell_type == "markdown":
        ClearMarkScheme(parent=parent)._remove_mark_scheme_region(cell)
    return cell.source


class ReleaseAwareOverwriteCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` that compares a read-only cell with its released form (see the
    module's docstring); everything else (cell type, points, locked flag, missing cells) as nbgrader."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                src = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                src = None
            if (src is not None and src.locked and cell.cell_type == src.cell_type and cell.source != src.source
                    and cell.source == released_source(src.source, src.cell_type, parent=self)):
                cell = copy.deepcopy(cell)
                cell.source = src.source  # untouched: the hidden tests back, no warning
        return super().preprocess_cell(cell, resources, cell_index)
