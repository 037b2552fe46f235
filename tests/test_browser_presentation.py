"""What a lecturer sees in the browser: notebook 03 at 1400 px, in jupyterlab-deck, and RISE's page.

Uses the fixtures ``lab_server`` (session) and ``browser`` (module) of ``tests/conftest.py``.

* ``test_notebook_03_at_1400_px``: after Run All (the run of tests/test_browser.py, which also
  checks that opening a notebook changes only ``language_info``; its kernel kept, opened again at
  1400 px as a lecturer reopens a prepared notebook) no code cell and no output scrolls sideways at a 1400 px window (long code lines wrap: the
  notebook-level styles of :mod:`decodelab.teach.widgets.styles`; the agent-loop explorer fits its
  cell); the chosen option of a quiz question is a filled dark-blue button
  (``decodelab.assess.quiz.widget.QUIZ_STYLE``). Screenshots ``artifacts/screenshots/present-03-*.png``.
* ``test_deck_text_size_and_keys_after_a_slider``: the same notebook as a jupyterlab-deck
  slideshow: body text on a slide is at least 20 px; after a slider is moved with the keyboard
  the arrow keys belong to the slider (the deck does not move, also not after ``Esc``), and the
  recovery that lecturer/README.md describes (one click on the slide's text or on its empty top,
  then the arrow keys) moves the slides again.
  Screenshots ``artifacts/screenshots/present-deck-*.png``.
* ``test_rise_has_no_add_a_cell_box``: RISE's slideshow page loads ``notebooks/rise.css``, so
  JupyterLab's "Click to add a cell." footer is not on any slide.

Run: ``pytest -m browser tests/test_browser_presentation.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import browserkit

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("jupyterlab")]


# the JupyterLab server and Chromium are the fixtures ``lab_server`` (session) and ``browser`` (module) of
# tests/conftest.py: one server for every browser test

NOTEBOOK = "03_agent_loops.ipynb"
SHOTS = browserkit.SCREENSHOTS
WIDE = {"width": 1400, "height": 900}
QUIZ_BLUE = "rgb(29, 78, 216)"  # #1d4ed8

#: elements that scroll sideways: code editors and anything inside outputs
JS_SIDEWAYS = """
() => {
  const out = [];
  const nb = window.__nb.node;
  const cells = Array.from(nb.querySelectorAll('.jp-Cell'));
  const check = (e, what) => {
    if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) {
      const ov = getComputedStyle(e).overflowX;
      if (ov === 'auto' || ov === 'scroll') {
        out.push({what, cell: cells.indexOf(e.closest('.jp-Cell')), cls: e.className.toString().slice(0, 60),
                  over: e.scrollWidth - e.clientWidth});
      }
    }
  };
  nb.querySelectorAll('.jp-CodeCell .cm-scroller').forEach(e => check(e, 'code'));
  nb.querySelectorAll('.jp-OutputArea, .jp-OutputArea *').forEach(e => check(e, 'output'));
  return out;
}
"""

JS_QUIZ_PICK = """
() => {
  const b = window.__nb.node.querySelector('[class*="decodelab-quiz-"] .widget-toggle-button');
  if (!b) return null;
  b.scrollIntoView({block: 'center'});
  b.click();
  return true;
}
"""

JS_QUIZ_ACTIVE = """
() => {
  const b = window.__nb.node.querySelector('[class*="decodelab-quiz-"] .widget-toggle-button.mod-active');
  if (!b) return null;
  const s = getComputedStyle(b);
  return {background: s.backgroundColor, color: s.color, weight: s.fontWeight};
}
"""

JS_DECK_STATE = """
() => {
  const w = window.__nb;
  const cells = Array.from(w.content.node.querySelectorAll('.jp-Cell'));
  const on = cells.filter(c => c.classList.contains('jp-deck-mod-onscreen') && c.getBoundingClientRect().height > 0);
  const p = on.map(c => c.querySelector('.jp-RenderedMarkdown p, .jp-RenderedMarkdown li')).find(Boolean);
  return {
    presenting: document.body.dataset.jpDeckMode || null,
    active: w.content.activeCellIndex,
    onscreen: on.map(c => cells.indexOf(c)),
    bodyPx: p ? parseFloat(getComputedStyle(p).fontSize) : null,
    focus: document.activeElement ? document.activeElement.className.toString().slice(0, 60) : null,
  };
}
"""


JS_BOX = """
([i, sel]) => {
  const e = window.__nb.content.widgets[i].node.querySelector(sel);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return [r.left + 5, r.top + r.height / 2];
}
"""

JS_TO_CELL_NO_FOCUS = "(i) => { window.__nb.content.activeCellIndex = i; }"

JS_TO_CELL = """
(i) => {
  const n = window.__nb.content;
  n.activeCellIndex = i;
  n.mode = 'command';
  n.node.focus();
}
"""


def _shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"present-{name}.png"
    page.screenshot(path=str(path))
    return path


def _explorer_cell(page) -> int:
    i = page.evaluate(browserkit.JS_CELL_INDEX, "latency_explorer()")
    assert i >= 0
    return i


@pytest.fixture(scope="module")
def page_03(request, browser, lab_server):
    """Notebook 03 run by tests/test_browser.py (``run_notebook_once``: checked, saved, its kernel
    kept), opened again at 1400 px on its running kernel, in the JupyterLab page of this module's
    Chromium."""
    report = browserkit.run_notebook_once(browser, lab_server, NOTEBOOK)
    assert report.problems == [], "\n".join(map(str, report.problems))
    failed = request.session.testsfailed
    lp = browserkit.lab_page(browser, lab_server, WIDE)
    try:
        browserkit.open_saved_run(lp.page, NOTEBOOK)
    except BaseException:
        browserkit.release_lab_page(lp, ok=False)
        raise
    yield lp.page
    browserkit.release_lab_page(lp, ok=request.session.testsfailed == failed)


def test_notebook_03_at_1400_px(page_03):
    page = page_03
    sideways = page.evaluate(JS_SIDEWAYS)
    explorer = _explorer_cell(page)
    page.evaluate("(i) => window.__nb.content.widgets[i].node.scrollIntoView()", explorer)
    time.sleep(0.5)
    _shot(page, "03-explorer")
    assert sideways == [], f"scrolls sideways at 1400 px: {sideways}"

    assert page.evaluate(JS_QUIZ_PICK), "no single-choice quiz question in notebook 03"
    time.sleep(0.8)
    active = page.evaluate(JS_QUIZ_ACTIVE)
    _shot(page, "03-quiz-choice")
    assert active == {"background": QUIZ_BLUE, "color": "rgb(255, 255, 255)", "weight": "700"}, active


def test_deck_text_size_and_keys_after_a_slider(page_03):
    page = page_03
    explorer = _explorer_cell(page)
    page.evaluate(browserkit.JS_TO_TOP)
    page.evaluate(JS_TO_CELL, 0)
    page.evaluate("() => window.jupyterapp.commands.execute('deck:start')")
    page.wait_for_function("() => document.body.dataset.jpDeckMode === 'presenting'")
    time.sleep(1.5)
    page.evaluate(JS_TO_CELL, None if False else 0)
    first = page.evaluate(JS_DECK_STATE)
    _shot(page, "deck-01")
    assert first["bodyPx"] is not None and first["bodyPx"] >= 20, first

    # to the explorer's slide, put the keyboard on a slider and move it
    page.evaluate(JS_TO_CELL, explorer)
    time.sleep(1.0)
    page.evaluate("(i) => window.__nb.content.widgets[i].node.querySelector('.widget-slider .noUi-handle').focus()", explorer)
    before = page.evaluate(JS_DECK_STATE)
    page.keyboard.press("ArrowRight")
    time.sleep(1.0)
    browserkit.wait_idle(page, browserkit.RUN_ALL_S)
    after_slider = page.evaluate(JS_DECK_STATE)
    _shot(page, "deck-slider")
    assert after_slider["active"] == before["active"] == explorer, (before, after_slider)  # the slider took the key

    # Esc does not take the keys back from the slider (checked: the deck stays put)
    page.keyboard.press("Escape")
    time.sleep(0.5)
    page.keyboard.press("ArrowRight")
    time.sleep(1.0)
    assert page.evaluate(JS_DECK_STATE)["active"] == explorer

    # the recovery lecturer/README.md gives: one click on the slide's text (not on a control),
    # then the arrow keys move the slides again
    for where in (".widget-html:last-child", None):      # the explorer's caption; the empty top of the slide
        page.evaluate("(i) => window.__nb.content.widgets[i].node.querySelector('.widget-slider .noUi-handle').focus()", explorer)
        page.evaluate(JS_TO_CELL_NO_FOCUS, explorer)
        time.sleep(0.3)
        box = page.evaluate(JS_BOX, [explorer, where]) if where else [700, 30]
        page.mouse.click(box[0], box[1])
        time.sleep(0.5)
        page.keyboard.press("ArrowRight")
        time.sleep(1.0)
        moved = page.evaluate(JS_DECK_STATE)
        assert moved["presenting"] == "presenting" and moved["active"] > explorer, (where, moved)
        _shot(page, "deck-after-click")
    page.evaluate("() => window.jupyterapp.commands.execute('deck:stop')")


def test_rise_has_no_add_a_cell_box(browser, lab_server, page_03):
    page = page_03
    page.evaluate("async () => { await window.__nb.context.save(); }")
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ko-KR")
    rise = context.new_page()
    try:
        rise.goto(f"{lab_server.url}/rise/{NOTEBOOK}?token={lab_server.token}", wait_until="domcontentloaded")
        rise.wait_for_function("() => document.querySelector('.reveal .slides section.present') !== null",
                               timeout=90_000)
        time.sleep(2.0)
        rise.keyboard.press("End")
        time.sleep(1.5)
        _shot(rise, "rise-last")
        shown = rise.evaluate("""() => Array.from(document.querySelectorAll('.jp-Notebook-footer'))
                                   .filter(e => e.getBoundingClientRect().height > 0).length""")
        loaded = rise.evaluate("() => !!document.getElementById('rise-custom-css')")
        assert loaded, "RISE did not load notebooks/rise.css"
        assert shown == 0, "the 'Click to add a cell.' box is on a slide"
    finally:
        context.close()
