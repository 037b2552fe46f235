"""Notebook 04 as a RISE slideshow in a real browser (jupyterlab-rise + headless Chromium).

Uses the JupyterLab server and Chromium fixtures of tests/conftest.py and the harness of
tests/browserkit.py. The notebook is opened in JupyterLab, run top to bottom and saved (as a
lecturer does before class): the run of
``tests/test_browser.py::test_notebook_in_jupyterlab[04_speculative_decoding]``, done once per
server with its kernel kept (``run_notebook_once``); then RISE's own page, ``/rise/<notebook>``
(what the "Open as Reveal Slideshow" command, ``RISE:slideshow``, opens in a new tab), shows it as a reveal.js deck. The test checks that the deck has the slides
the notebook's metadata asks for and that the arrow keys advance it, saving a screenshot of each
visited slide to ``artifacts/screenshots/rise-04-*.png``; and that a live widget (the
speculative-decoding explorer) renders on its slide when its cell is run there and answers a
slider move.

Known limitation (December 2026): jupyterlab-rise 0.43.1's slideshow page is built on JupyterLab
4.3 and cannot load the widget manager of ipywidgets 8.1.9 / jupyterlab_widgets 3.0.17 (the
browser console says "Shared module @jupyterlab/console doesn't exist in shared scope default"),
so widgets show as their text form there; upstream: jupyterlab-contrib/rise issues 119 and 126.
That test is a strict expected failure: it turns into a failure the day the widget renders, so
the mark gets removed then.

The same notebook presented with jupyterlab-deck (``test_a_live_widget_in_jupyterlab_deck``): the
deck is JupyterLab's own notebook panel with the cells of the other slides hidden, so widgets are
live. The test opens the saved run again on its running kernel (the widgets come back live from
the kernel), starts the deck (command ``deck:start``), advances it with the
arrow keys (ArrowRight: next slide; ArrowDown: next cell of the slide), checks that no slide is cut
off at the panel's edge, that the speculative-decoding explorer shows as real ipywidgets sliders on
its slide and that moving one redraws its output, and saves ``artifacts/screenshots/deck-*.png``.

The deck test comes first in this module, the RISE test last: running the explorer's cell on
RISE's page (no widget manager there) makes new widgets whose comms that page closes, so the saved
run the deck test reopens must not have met it (autosave is off in the test lab, too).

Run: ``pytest -m browser tests/test_browser_slides.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import browserkit

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("jupyterlab")]


# the JupyterLab server and Chromium are the fixtures ``lab_server`` (session) and ``browser`` (module) of
# tests/conftest.py: one server for every browser test

NOTEBOOK = "04_speculative_decoding.ipynb"
SHOTS = browserkit.SCREENSHOTS
EXPLORER_CALL = "speculative_explorer("
VIEWPORT = {"width": 1280, "height": 800}
#: the slide on screen (a horizontal slide with sub-slides is also .present: take the innermost)
CURRENT = ".reveal section.present:not(:has(section.present))"

# reveal.js marks the slide on screen with .present; a horizontal slide holding sub-slides is a
# <section> of <section>s, so the innermost present section is the one shown.
JS_PRESENT = """
() => {
  const all = Array.from(document.querySelectorAll('.reveal .slides section.present'));
  const cur = all.filter(s => !s.querySelector('section.present')).pop();
  const h = Array.from(document.querySelectorAll('.reveal .slides > section'));
  return {
    horizontal: h.length,
    index: cur ? h.indexOf(cur.closest('.reveal .slides > section')) : -1,
    text: cur ? cur.innerText.slice(0, 200) : null,
    sliders: cur ? cur.querySelectorAll('.widget-slider').length : 0,
    widgetErrors: cur ? cur.querySelectorAll('.jupyter-widgets-error-widget').length : 0,
    loading: cur ? cur.innerText.includes('Loading widget') : false,
    // no widget manager: the output falls back to the widget's text form, e.g. "SpeculativeExplorer(children=(..."
    textForm: cur ? cur.innerText.includes('(children=(') : false,
  };
}
"""

JS_SCREENS = """
() => {
  const h = Array.from(document.querySelectorAll('.reveal .slides > section'));
  return h.reduce((n, s) => n + Math.max(1, s.querySelectorAll(':scope > section').length), 0);
}
"""


def _expected_screens(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    kinds = [(c.get("metadata", {}).get("slideshow") or {}).get("slide_type") for c in cells]
    return sum(1 for i, k in enumerate(kinds) if i == 0 or k in ("slide", "subslide"))


def _explorer_cell(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    (i,) = [k for k, c in enumerate(cells) if c["cell_type"] == "code" and EXPLORER_CALL in "".join(c["source"])]
    return i


def _shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"rise-04-{name}.png"
    page.screenshot(path=str(path))
    return path


def _wait_deck(page, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        state = page.evaluate(JS_PRESENT)
        if state["index"] >= 0 and state["text"]:
            return state
        if time.monotonic() > deadline:
            raise TimeoutError(f"no reveal.js slide on screen after {timeout_s} s: {state}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def saved_run(browser, lab_server):
    """The notebook run in JupyterLab, checked and saved, its kernel kept for the slideshow: the
    run of tests/test_browser.py (``run_notebook_once``; whichever test comes first runs it)."""
    report = browserkit.run_notebook_once(browser, lab_server, NOTEBOOK)
    assert report.problems == [], "\n".join(map(str, report.problems))
    return lab_server.root / NOTEBOOK


def _open_deck(browser, server, cell: int = 0):
    context = browser.new_context(viewport=VIEWPORT, locale="ko-KR")
    page = context.new_page()
    page.set_default_timeout(browserkit.RUN_ALL_S * 1000)
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}") if m.type == "error" else None)
    page.goto(f"{server.url}/rise/{NOTEBOOK}?token={server.token}&activeCellIndex={cell}", wait_until="domcontentloaded")
    state = _wait_deck(page)
    time.sleep(1.5)  # fonts and math
    return context, page, state, console


def _open_saved(page, server, *, require_command: str | None = None) -> None:
    """Load JupyterLab in ``page`` and open the saved NOTEBOOK again (``open_saved_run``)."""
    browserkit.load_lab(page, server)
    browserkit.open_saved_run(page, NOTEBOOK)
    if require_command:
        assert page.evaluate(f"() => window.jupyterapp.commands.hasCommand('{require_command}')"), (
            f"{require_command} is missing: is the extension installed?")


# --------------------------------------------------------------------------------------------
# jupyterlab-deck: the slideshow inside JupyterLab's own notebook panel (widgets stay live)
# --------------------------------------------------------------------------------------------

#: the cells jupyterlab-deck shows now (it hides the others with CSS), and what they hold
JS_DECK = """
() => {
  const w = window.__nb;
  const cells = Array.from(w.content.node.querySelectorAll('.jp-Cell'));
  const on = cells.filter(c => c.classList.contains('jp-deck-mod-onscreen'));
  const shown = on.filter(c => c.getBoundingClientRect().height > 0);
  const box = w.node.getBoundingClientRect();  // the notebook's panel in the dock: it does not scroll
  const sliders = shown.flatMap(c => Array.from(c.querySelectorAll('.jupyter-widgets .widget-slider')))
                       .filter(s => s.getBoundingClientRect().width > 0);
  return {
    presenting: document.body.dataset.jpDeckMode || null,
    deck: w.hasClass('jp-Deck'),
    active: w.content.activeCellIndex,
    visible: cells.filter(c => c.classList.contains('jp-deck-mod-visible')).map(c => cells.indexOf(c)),
    onscreen: on.map(c => cells.indexOf(c)),
    text: shown.map(c => c.innerText).join('\\n').slice(0, 200),
    sliders: sliders.length,
    widgets: shown.reduce((n, c) => n + c.querySelectorAll('.jupyter-widgets.widget-box, .jupyter-widgets.widget-container').length, 0),
    widgetErrors: shown.reduce((n, c) => n + c.querySelectorAll('.jupyter-widgets-error-widget').length, 0),
    loading: shown.some(c => c.innerText.includes('Loading widget')),
    // a cell that starts left of / above the notebook's box is cut off on screen
    clipped: shown.filter(c => c.getBoundingClientRect().left < box.left - 1 || c.getBoundingClientRect().top < box.top - 1)
                  .map(c => cells.indexOf(c)),
    scrolled: [w.node, w.content.node, ...w.node.querySelectorAll('.jp-WindowedPanel-outer, .jp-WindowedPanel-inner, .jp-WindowedPanel-viewport')]
                  .map(e => [e.className.split(' ').slice(0, 3).join('.'), e.scrollLeft, e.scrollTop]),
  };
}
"""

#: command mode, keyboard focus on the notebook (jupyterlab-deck's keys are bound to
#: ``.jp-Deck .jp-Notebook.jp-mod-commandMode:focus``)
JS_COMMAND_MODE = "(i) => { const n = window.__nb.content; if (i !== null) n.activeCellIndex = i; n.mode = 'command'; n.node.focus(); }"


def _deck_shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"deck-{name}.png"
    page.screenshot(path=str(path))
    return path


def _explorer_output(page, cell: int) -> str:
    return page.evaluate(
        "(i) => window.__nb.content.widgets[i].node.querySelector('.jp-OutputArea').innerText", cell)


#: jupyterlab-deck 0.2.0 on JupyterLab 4.6 pins the notebook toolbar with ``position: absolute``
#: and leaves it wider than the panel; focusing a cell then scrolls the panel sideways (40 px at
#: 1280 px) and every slide after the first is cut off on the left. This jupyterlab-fonts
#: "Global Styles" setting (JSS) clips that overflow; lecturer/README.md gives lecturers the same.
DECK_STYLES = {"@global": {".jp-Deck.jp-NotebookPanel": {"overflow": "clip"}}}


def _write_deck_styles(server) -> None:
    path = server.root.parent / "settings" / "@deathbeds" / "jupyterlab-fonts" / "fonts.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"styles": DECK_STYLES}), encoding="utf-8")


def test_a_live_widget_in_jupyterlab_deck(browser, lab_server, saved_run):
    """Notebook 04 presented with jupyterlab-deck: slides from the same metadata, keys advance
    them, and the speculative-decoding explorer on its slide is a live ipywidget. The notebook is
    the saved run, opened again on its running kernel (as a lecturer reopens a prepared notebook):
    the widgets come back live from the kernel."""
    explorer = _explorer_cell(saved_run)
    _write_deck_styles(lab_server)
    context = browser.new_context(viewport=VIEWPORT, locale="ko-KR")
    page = context.new_page()
    page.set_default_timeout(browserkit.RUN_ALL_S * 1000)
    try:
        _open_saved(page, lab_server, require_command="deck:start")

        # as a lecturer does after Run All: back to the top (a notebook left scrolled down or
        # sideways keeps that scroll in the deck, and its slides are cut off)
        page.evaluate(browserkit.JS_TO_TOP)
        page.evaluate(JS_COMMAND_MODE, 0)
        page.evaluate("() => window.jupyterapp.commands.execute('deck:start')")
        page.wait_for_function("() => document.body.dataset.jpDeckMode === 'presenting'")
        time.sleep(1.5)
        page.evaluate(JS_COMMAND_MODE, None)
        first = page.evaluate(JS_DECK)
        assert first["deck"] and first["onscreen"][:1] == [0] and "투기적 디코딩" in first["text"], first
        _deck_shot(page, "01")

        # ArrowRight goes to the next slide (jupyterlab-deck's key; the first press after the
        # start only settles the deck), ArrowDown to the next cell of the slide (JupyterLab's own
        # cursor key; the deck follows the active cell): sub-slides, fragments, code cells
        seen = [first]
        for k in range(2, 7):
            page.keyboard.press("ArrowRight")
            time.sleep(0.8)
            seen.append(page.evaluate(JS_DECK))
            _deck_shot(page, f"{k:02d}")
        active = [s["active"] for s in seen]
        assert active == sorted(active) and len(set(active)) >= 4, f"the deck did not advance: {seen}"
        assert all(s["onscreen"] and s["presenting"] == "presenting" for s in seen), seen
        assert [s["clipped"] for s in seen] == [[]] * len(seen), f"slides cut off at the edge: {seen}"

        # on to the explorer: slides with ArrowRight, then its sub-slide's cells with ArrowDown
        state = seen[-1]
        for _ in range(20):
            if state["active"] >= explorer - 4:
                break
            page.keyboard.press("ArrowRight")
            time.sleep(0.5)
            state = page.evaluate(JS_DECK)
        for _ in range(8):
            if explorer in state["onscreen"]:
                break
            page.keyboard.press("ArrowDown")
            time.sleep(0.5)
            state = page.evaluate(JS_DECK)
        assert explorer in state["onscreen"], f"never reached the explorer's slide (cell {explorer}): {state}"
        time.sleep(1.0)
        _deck_shot(page, "widget")
        assert state["widgetErrors"] == 0 and not state["loading"] and state["clipped"] == [], state
        assert state["sliders"] >= 2 and state["widgets"] >= 1, f"no live widget on the explorer's slide: {state}"
        assert "children=" not in state["text"], state

        before = _explorer_output(page, explorer)
        page.evaluate("(i) => window.__nb.content.widgets[i].node.querySelector('.widget-slider .noUi-handle').focus()", explorer)
        # down, not up: the saved run left γ one step above its start, at notebook 04's max_gamma
        page.keyboard.press("ArrowLeft")
        deadline = time.monotonic() + 60
        while _explorer_output(page, explorer) == before:
            assert time.monotonic() < deadline, "moving the explorer's slider in the deck changed nothing"
            time.sleep(0.5)
        browserkit.wait_idle(page, browserkit.RUN_ALL_S)
        time.sleep(1.0)
        _deck_shot(page, "widget-moved")
        assert page.evaluate(JS_DECK)["presenting"] == "presenting", "the slider move ended the deck"

        page.evaluate("() => window.jupyterapp.commands.execute('deck:stop')")
        page.wait_for_function("() => document.body.dataset.jpDeckMode !== 'presenting'")
        assert not page.evaluate(JS_DECK)["deck"]
    finally:
        context.close()


# --------------------------------------------------------------------------------------------
# RISE: last in the module. Running the explorer's cell on RISE's page (no widget manager there)
# makes new widgets whose comms that page closes, and the page may autosave the notebook with their
# ids; the saved run the deck test reopens must not have been touched by it.
# --------------------------------------------------------------------------------------------

class RiseWidgetsNotDrawn(AssertionError):
    """The known failure below: the slideshow shows the widget's text form (or a widget error)."""


@pytest.mark.xfail(strict=True, raises=RiseWidgetsNotDrawn, reason="jupyterlab-rise 0.43.1 cannot load the ipywidgets 8.1.9 widget manager "
                   "(jupyterlab-contrib/rise#119, #126): widgets show as text in the slideshow")
def test_a_live_widget_in_the_slideshow(browser, lab_server, saved_run):
    context, page, _, console = _open_deck(browser, lab_server, _explorer_cell(saved_run))
    try:
        # the slides are live: run the explorer's cell right there (Ctrl+Enter: run and stay on the slide)
        page.locator(f"{CURRENT} .jp-CodeCell .jp-InputArea-editor").first.click()
        page.keyboard.press("Control+Enter")
        # the kernel is warm (saved_run): a working widget manager draws the sliders within seconds;
        # the widget's text form in the output means no manager will draw it
        deadline = time.monotonic() + 25
        while True:
            state = page.evaluate(JS_PRESENT)
            if state["sliders"] or state["widgetErrors"] or state["textForm"] or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        time.sleep(1.0)
        _shot(page, "widget")
        if state["widgetErrors"] or state["textForm"]:
            raise RiseWidgetsNotDrawn(f"the widget is shown as text or as an error, not drawn: {state}")
        assert not state["loading"], f"the widget is still loading: {state}"
        assert state["sliders"] >= 2, f"no live widget on the explorer's slide: {state}\nconsole errors: {console[:5]}"
        before = page.locator(f"{CURRENT} .jp-OutputArea").first.inner_text()
        page.locator(f"{CURRENT} .widget-slider .noUi-handle").first.focus()
        page.keyboard.press("ArrowLeft")  # γ down: it may be at notebook 04's max_gamma already
        deadline = time.monotonic() + 60
        while page.locator(f"{CURRENT} .jp-OutputArea").first.inner_text() == before:
            assert time.monotonic() < deadline, "moving the explorer's slider in the slideshow changed nothing"
            time.sleep(0.5)
        time.sleep(1.0)
        _shot(page, "widget-moved")
    finally:
        context.close()
