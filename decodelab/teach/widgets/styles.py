"""The course's notebook-level styles, stored in each notebook's metadata for jupyterlab-fonts.

jupyterlab-fonts (installed with jupyterlab-deck) reads ``metadata["@deathbeds/jupyterlab-fonts"]
["styles"]`` of a notebook and applies it to that notebook's panel only
(``lib/stylist.js``, ``_nbMetaToStyle``: each key becomes a selector under
``.jp-NotebookPanel[id=...]``). So the styles travel with the notebooks: no lecturer or student
setting is needed. The MyST sources carry them in their YAML header
(``notebook_metadata_filter``), and ``tests/test_presentation.py`` checks every notebook has
exactly :data:`NOTEBOOK_STYLES`.

* **Slides** (jupyterlab-deck marks the cells on screen with ``jp-deck-mod-onscreen``): body text
  20 px (JupyterLab's 14 px is too small for a projector; headings scale with it, they are set
  in ``em``), code and outputs 18 px, widget labels 18 px.
* **Long code lines wrap** instead of scrolling sideways (CodeMirror 6 keeps ``white-space: pre``
  unless line wrapping is on; this is the CSS of its ``lineWrapping`` option, ``EditorView.lineWrapping``).
"""

from __future__ import annotations

METADATA_KEY = "@deathbeds/jupyterlab-fonts"

#: Deck text sizes, px: body (markdown), code and outputs, widget labels.
DECK_BODY_PX, DECK_CODE_PX, DECK_WIDGET_PX = 20, 18, 18

NOTEBOOK_STYLES: dict = {
    ".jp-Cell.jp-deck-mod-onscreen": {
        "--jp-content-font-size1": f"{DECK_BODY_PX}px",
        "--jp-code-font-size": f"{DECK_CODE_PX}px",
        "--jp-widgets-font-size": f"{DECK_WIDGET_PX}px",
        "--jp-ui-font-size1": f"{DECK_WIDGET_PX}px",
    },
    ".jp-CodeCell .cm-content": {
        "white-space": "break-spaces",
        "word-break": "break-word",
        "overflow-wrap": "anywhere",
        "flex-shrink": "1",
    },
}
