"""The browser harness: one JupyterLab server, headless Chromium, a notebook run top to bottom and
checked as a student sees it. Used by tests/test_browser.py, tests/test_browser_slides.py,
tests/test_browser_presentation.py and tests/test_classroom_hub.py (not a test module itself;
``tests/`` is on ``sys.path`` through tests/conftest.py, so they ``import browserkit``).

:func:`start_lab_server` starts JupyterLab on 127.0.0.1 (free port, token auth, temporary config /
runtime / settings / workspace dirs, a temporary copy of ``notebooks/`` as root, the two demo
notebooks of ``tests/demo_notebooks.py`` beside them) with the project's Python;
:func:`shared_browser` starts Chromium (once per process, kept across browser tests). :func:`run_notebook` then, for one notebook:

1. opens it in headless Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright; Playwright's
   own browser download is never used), records which metadata keys opening it changed, and runs
   "Run All Cells";
2. waits until the kernel is idle and no cell shows ``[*]``;
3. checks: every code cell ran; no error output and no stderr with a traceback, error or warning
   (a missing-glyph warning from matplotlib lands there); no "Error displaying widget"; no
   "Loading widget" left; every slider moves one step with the keyboard (ArrowRight, or
   ArrowLeft at its maximum, on the noUiSlider handle); in each cell that has sliders, at least
   one of them changes the notebook's output (a slider may by design do nothing alone, e.g. until
   a checkbox is ticked; such sliders are listed in the report); no slider move adds
   images (plots must be redrawn in place, not stack up); the checks of step 3 are repeated
   after the sliders moved (an exception in a slider callback shows up then);
4. with ``DECODELAB_SCREENSHOTS=1``, saves a screenshot of the whole notebook to
   ``artifacts/screenshots/<NN>.png`` (a very long notebook continues in ``<NN>-p2.png``, ...), for
   looking at the course as a student sees it. A plain test run leaves them out: they check nothing.

Each problem found is a :class:`Problem` in the returned :class:`Report`. :func:`run_notebook_once`
keeps the kernel and saves the notebook, once per server, so that another test can open the run
again (:func:`open_saved_run`).

Needs: ``/usr/bin/chromium`` (or ``$DECODELAB_CHROMIUM``) and the ``playwright`` package
(``scripts/install_browser.sh`` installs both). For screenshots as a student sees them the
browser machine also needs a Hangul font and a colour emoji font (the exercise and quiz widgets'
icons, e.g. Debian's ``fonts-noto-color-emoji``); without the latter the icons are empty boxes.
Without Chromium or playwright the browser tests are skipped, except under CI (``CI=true``) where
that is a failure. ``DECODELAB_BROWSER_NOTEBOOKS=<dir>`` tests the notebooks of another folder
instead of ``notebooks/``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import demo_notebooks
import hubkit

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = Path(os.environ.get("DECODELAB_BROWSER_NOTEBOOKS") or REPO / "notebooks")
SCREENSHOTS = REPO / "artifacts" / "screenshots"
#: whole-notebook screenshots (step 4 above) only when asked for: ``DECODELAB_SCREENSHOTS=1``
WHOLE_NOTEBOOK_SHOTS = os.environ.get("DECODELAB_SCREENSHOTS", "").lower() in ("1", "true", "yes")
CHROMIUM = os.environ.get("DECODELAB_CHROMIUM", "/usr/bin/chromium")
ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM_ARGS = [
    "--no-sandbox",  # runs as root in containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
SERVER_START_S = 90
RUN_ALL_S = 240  # per notebook; nbval budget is far below this
SLIDER_EFFECT_S = 30
JS_SAVE = "async () => { await window.__nb.context.save(); return window.__nb.context.model.dirty; }"
SCREENSHOT_MAX_PX = 16000  # Chromium's largest capture is 16,384 px
STDERR_BAD = re.compile(r"Traceback|Error|Warning|missing from font", re.IGNORECASE)


def _unavailable(reason: str):
    if ON_CI:
        pytest.fail(f"browser test cannot run under CI: {reason} (run scripts/install_browser.sh)")
    pytest.skip(reason)


def course_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


# --------------------------------------------------------------------------------------------
# JupyterLab server
# --------------------------------------------------------------------------------------------


@dataclass
class LabServer:
    url: str
    token: str
    root: Path
    proc: subprocess.Popen
    log: Path
    #: notebooks run with their kernel kept (:func:`run_notebook_once`), by file name
    runs: dict[str, "Report | Exception"] = field(default_factory=dict)

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def _write_settings(settings: Path) -> None:
    """User settings for the test lab: render every cell (no windowing), no news pop-ups, and no
    autosave: a notebook on disk changes only when a test saves it (``JS_SAVE``), so a saved run
    that another test reopens is the run that was checked."""
    files = {
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        # 'none' attaches all cells to the DOM, so off-screen outputs and sliders are checked too
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    }
    for rel, value in files.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


def _bound_port(runtime: Path, proc: subprocess.Popen, deadline: float, log: Path) -> int:
    """The port a Jupyter server started with ``--ServerApp.port=0`` bound: read from the
    ``jpserver-<pid>.json`` it writes into its runtime folder once it listens."""
    info = runtime / f"jpserver-{proc.pid}.json"
    while not info.is_file():
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        if time.monotonic() > deadline:
            proc.terminate()
            pytest.fail(f"JupyterLab wrote no {info.name} within {SERVER_START_S} s:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.2)
    for _ in range(50):  # written, perhaps not yet complete
        try:
            return int(json.loads(info.read_text(encoding="utf-8"))["port"])
        except (ValueError, KeyError):
            time.sleep(0.1)
    pytest.fail(f"{info} holds no port: {info.read_text(errors='replace')[:500]}")


def start_lab_server(tmp_path_factory):
    """Start the test JupyterLab, yield its :class:`LabServer`, stop it: the body of the session
    fixture ``lab_server`` of tests/conftest.py (one server for all browser tests)."""
    root = tmp_path_factory.mktemp("lab")
    nb_root = root / "notebooks"
    if NOTEBOOKS.is_dir():
        shutil.copytree(NOTEBOOKS, nb_root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    else:
        nb_root.mkdir()
    for kind in ("good", "broken"):
        demo_notebooks.write(nb_root, kind)
    settings = root / "settings"
    _write_settings(settings)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(root / "config"),
        JUPYTER_RUNTIME_DIR=str(root / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(root / "workspaces"),
        IPYTHONDIR=str(root / "ipython"),
        MPLCONFIGDIR=str(root / "mpl"),
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
        PYTHONHASHSEED="0",
        # a fresh answers folder: saved predictions of earlier runs (or of the developer's own
        # ~/.decodelab) must not change what the notebooks show
        DECODELAB_ANSWERS_DIR=str(root / "answers"),
    )
    # the lab a student gets from `decodelab lab`: its Jupyter config folder first (no news pop-up;
    # no nbgrader menu, panel and toolbar button, which the test venv's nbgrader would add)
    from decodelab.tools.lab import lab_env

    env.update(lab_env())
    env.pop("MPLBACKEND", None)  # let the kernel use the inline backend
    token = secrets.token_hex(16)
    log = root / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        # port 0: the server takes a free port when it binds (a port chosen here could be taken in
        # the seconds before that) and names it in its runtime file (:func:`_bound_port`)
        "--ServerApp.port=0",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={nb_root}",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.shutdown_no_activity_timeout=900",
        "--MappingKernelManager.cull_idle_timeout=0",
    ]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=nb_root)
    deadline = time.monotonic() + SERVER_START_S
    port = _bound_port(root / "runtime", proc, deadline, log)
    server = LabServer(f"http://127.0.0.1:{port}", token, nb_root, proc, log)
    while True:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            server.api("/api/status")
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.terminate()
                pytest.fail(f"JupyterLab did not answer within {SERVER_START_S} s:\n{server.log_tail()}")
            time.sleep(0.5)
    yield server
    hubkit.stop_process(proc)


# --------------------------------------------------------------------------------------------
# Browser
# --------------------------------------------------------------------------------------------


def browser_missing() -> str | None:
    """Why the browser tests cannot start Chromium here (no Chromium at ``CHROMIUM``, or no
    ``playwright`` package), or None when both are present."""
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium, or set DECODELAB_CHROMIUM)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright Python package is not installed (pip install playwright)"
    return None


#: this process's Playwright and Chromium (:func:`shared_browser`), while open
_CHROMIUM: dict[str, object] = {}


def shared_browser():
    """This process's headless Chromium, launched on first use and kept for the browser tests
    that follow (with the JupyterLab pages they loaded, :func:`lab_page`): the body of the
    fixture ``browser`` of tests/conftest.py. :func:`close_browser` ends it; the repository's
    conftest.py calls that before any test that is not a browser test, because Playwright's sync
    API holds an asyncio event loop in this thread while it runs (nbclient, or a test's own
    Playwright, could not run theirs)."""
    b = _CHROMIUM.get("browser")
    if b is not None and b.is_connected():
        return b
    reason = browser_missing()
    if reason:
        _unavailable(reason)
    from playwright.sync_api import sync_playwright

    if "playwright" not in _CHROMIUM:
        _CHROMIUM["playwright"] = sync_playwright().start()
    _CHROMIUM["browser"] = _CHROMIUM["playwright"].chromium.launch(executable_path=CHROMIUM, headless=True,
                                                                   args=CHROMIUM_ARGS)
    return _CHROMIUM["browser"]


def close_browser() -> None:
    """Close this process's Chromium (if :func:`shared_browser` started one) and stop Playwright."""
    _LAB_PAGES.clear()
    b, pw = _CHROMIUM.pop("browser", None), _CHROMIUM.pop("playwright", None)
    try:
        if b is not None:
            b.close()
    finally:
        if pw is not None:
            pw.stop()


@dataclass
class Problem:
    kind: str  # error | stderr | not-executed | widget-error | widget-loading | slider-stuck | slider-no-effect | plots-stack | not-saved | diagnosis
    detail: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.detail}"


@dataclass
class Report:
    notebook: str
    problems: list[Problem] = field(default_factory=list)
    sliders: int = 0
    sliders_changed: int = 0
    idle_sliders: list[str] = field(default_factory=list)
    #: what opening the notebook changed before anything ran (:data:`JS_CHANGED_KEYS`)
    changed_on_open: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    console_errors: list[str] = field(default_factory=list)

    def add(self, kind: str, detail: str) -> None:
        problem = Problem(kind, detail)
        if problem not in self.problems:  # the checks run twice: after Run All and after the sliders
            self.problems.append(problem)


JS_OPEN = """
async (path) => {
  const app = window.jupyterapp;
  if (!app) throw new Error('window.jupyterapp missing: was --LabApp.expose_app_in_browser set?');
  await app.restored;
  const w = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await w.context.ready;
  await w.sessionContext.ready;
  app.shell.activateById(w.id);
  app.shell.collapseLeft();
  app.shell.collapseRight();
  window.__nb = w;
  return w.sessionContext.session ? w.sessionContext.session.kernel.name : null;
}
"""

#: notebook metadata keys and cells that differ from the file on disk (read through the contents API)
JS_CHANGED_KEYS = """
async () => {
  const w = window.__nb;
  const disk = await window.jupyterapp.serviceManager.contents.get(w.context.path, {content: true});
  const now = w.context.model.toJSON();
  const keys = new Set([...Object.keys(disk.content.metadata), ...Object.keys(now.metadata)]);
  const changed = [...keys].filter(k => JSON.stringify(disk.content.metadata[k]) !== JSON.stringify(now.metadata[k]));
  const src = (c) => Array.isArray(c.source) ? c.source.join('') : c.source;
  now.cells.forEach((c, i) => { const d = disk.content.cells[i];
    if (!d || src(d) !== src(c) || JSON.stringify(d.metadata) !== JSON.stringify(c.metadata)) changed.push('cell ' + i); });
  return changed.sort();
}
"""

JS_STATE = """
() => {
  const w = window.__nb;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const busy = Array.from(w.node.querySelectorAll('.jp-InputPrompt')).some(p => p.textContent.includes('*'));
  return {kernel: k ? k.status : 'none', busy};
}
"""

JS_MODEL_OUTPUTS = """
() => {
  const w = window.__nb;
  const cells = [];
  w.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const src = cell.model.sharedModel.getSource();
    cells.push({index: i, count: cell.model.executionCount, empty: src.trim() === '',
                head: src.split('\\n')[0].slice(0, 80), outputs: cell.model.outputs.toJSON()});
  });
  return cells;
}
"""

# stderr and errors shown inside widgets (an ipywidgets Output, e.g. an exception in a slider
# callback): these are in widget state, not in the notebook model.
JS_WIDGET_STDERR = """
() => Array.from(window.__nb.node.querySelectorAll(
  '.jupyter-widgets .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText)
"""

# ipywidgets 8 draws a widget it cannot create as an icon + "Click to show javascript error.";
# the click reveals the message (e.g. "Failed to load model class ... from module ...").
JS_WIDGET_ERRORS = """
() => Array.from(window.__nb.node.querySelectorAll('.jupyter-widgets-error-widget')).map(e => {
  if (e.classList.contains('icon-error') && e.parentElement) e.parentElement.click();
  return e.innerText.replace('[Open Browser Console for more detailed log - Double click to close this message]', '').trim();
})
"""

# Everything the outputs show, minus the sliders themselves (their readout changes trivially).
JS_OUTPUT_FINGERPRINT = """
() => {
  const parts = [];
  let images = 0;
  window.__nb.node.querySelectorAll('.jp-Cell-outputArea').forEach(area => {
    const c = area.cloneNode(true);
    c.querySelectorAll('.widget-slider, .widget-readout').forEach(e => e.remove());
    images += c.querySelectorAll('img, canvas, svg.main-svg').length;
    parts.push(c.innerHTML);
  });
  // a digest of the outputs' HTML (cyrb53), not the HTML itself: the outputs hold every figure as a
  // base64 PNG, megabytes that would cross to Python at every poll
  const text = parts.join('\\n');
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return {digest: `${text.length}:${(h2 >>> 0).toString(16)}:${(h1 >>> 0).toString(16)}`, images};
}
"""

# The readout shows the value as ipywidgets formats it; aria-valuenow is rounded to 1 decimal.
JS_SLIDER_VALUE_FN = """
const sliderValue = (s) => {
  const r = s.querySelector('.widget-readout');
  const h = s.querySelector('.noUi-handle, input[type=range]');
  if (r && r.textContent.trim()) return r.textContent.trim();
  return h ? (h.getAttribute('aria-valuenow') || h.value) : null;
};
"""

JS_SLIDERS = """
() => { """ + JS_SLIDER_VALUE_FN + """ return Array.from(window.__nb.node.querySelectorAll('.widget-slider')).map((s, i) => {
  const cell = s.closest('.jp-Cell');
  const handle = s.querySelector('.noUi-handle, input[type=range]');
  return {index: i, cell: Array.from(window.__nb.node.querySelectorAll('.jp-Cell')).indexOf(cell),
          disabled: !handle || s.classList.contains('mod-disabled') || handle.hasAttribute('disabled'),
          value: sliderValue(s),
          label: (s.querySelector('.widget-label') || {}).textContent || ''};
}); }
"""

JS_SLIDER_VALUE = """
(i) => { """ + JS_SLIDER_VALUE_FN + """
  const s = window.__nb.node.querySelectorAll('.widget-slider')[i];
  return s ? sliderValue(s) : null;
}
"""

#: first cell, scrolled to the top (a deck started scrolled down shows an empty first slide)
JS_TO_TOP = """
() => {
  const n = window.__nb.content;
  n.activeCellIndex = 0;
  const scroller = n.node.querySelector('.jp-WindowedPanel-outer') || n.node;
  scroller.scrollTop = 0;
  scroller.scrollLeft = 0;
}
"""

JS_SCROLL_TO = """
(y) => {
  const w = window.__nb;
  (w.content.node.querySelector('.jp-WindowedPanel-outer') || w.content.node).scrollTop = y;
}
"""

JS_NOTEBOOK_HEIGHT = """
() => {
  const w = window.__nb;
  const scroller = w.content.node.querySelector('.jp-WindowedPanel-outer') || w.content.node;
  scroller.scrollTop = 0;
  return scroller.scrollHeight;
}
"""


def wait_idle(page, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    calm = 0
    while True:
        state = page.evaluate(JS_STATE)
        calm = calm + 1 if state["kernel"] == "idle" and not state["busy"] else 0
        if calm >= 3:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"kernel still {state} after {timeout_s} s")
        time.sleep(0.25)


def _wait_widgets_loaded(page, report: Report, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while "Loading widget" in page.locator(".jp-Notebook").inner_text():
        if time.monotonic() > deadline:
            report.add("widget-loading", f"'Loading widget...' still shown after {timeout_s} s")
            return
        time.sleep(0.5)


def _check_outputs(page, report: Report) -> None:
    for cell in page.evaluate(JS_MODEL_OUTPUTS):
        where = f"cell {cell['index']} ({cell['head']!r})"
        if cell["count"] is None and not cell["empty"]:
            report.add("not-executed", f"{where} did not run")
        for out in cell["outputs"]:
            if out.get("output_type") == "error":
                report.add("error", f"{where}: {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = "".join(out.get("text", ""))
                if STDERR_BAD.search(text):
                    report.add("stderr", f"{where}: {text.strip()[:300]}")
    for text in page.evaluate(JS_WIDGET_STDERR):
        if STDERR_BAD.search(text):
            report.add("stderr", f"inside a widget: {text.strip()[:300]}")
    for text in page.evaluate(JS_WIDGET_ERRORS):
        report.add("widget-error", " ".join(text.split())[:300])
    body = page.locator(".jp-Notebook").inner_text()
    for line in body.splitlines():
        if "Error displaying widget" in line:
            report.add("widget-error", line.strip()[:200])


def _wait_for_change(page, before: dict, effect_s: float) -> dict:
    """Poll the outputs until they differ from ``before``, or the kernel has been idle (nothing
    more is coming) for ~1.5 s, or ``effect_s`` has passed; return the last fingerprint."""
    start = time.monotonic()
    calm = 0
    while True:
        time.sleep(0.2)
        after = page.evaluate(JS_OUTPUT_FINGERPRINT)
        if after["digest"] != before["digest"]:
            wait_idle(page, RUN_ALL_S)  # let the redraw finish before comparing image counts
            return page.evaluate(JS_OUTPUT_FINGERPRINT)
        state = page.evaluate(JS_STATE)
        calm = calm + 1 if state["kernel"] == "idle" and not state["busy"] else 0
        elapsed = time.monotonic() - start
        if (calm >= 7 and elapsed > 1.5) or elapsed > effect_s:  # 7 polls: ~1.4 s of an idle kernel
            return after


def _changed_on_open(page, settle_s: float = 1.0) -> list[str]:
    """What the open notebook's model differs in from its file, once that has stayed the same for
    ``settle_s`` (kernel info, the widget manager and styles arrive after the kernel is idle)."""
    last, since = page.evaluate(JS_CHANGED_KEYS), time.monotonic()
    deadline = since + 4 * settle_s
    while time.monotonic() - since < settle_s and time.monotonic() < deadline:
        time.sleep(0.5)
        now = page.evaluate(JS_CHANGED_KEYS)
        if now != last:
            last, since = now, time.monotonic()
    return last


def _move_sliders(page, report: Report, effect_s: float) -> None:
    """Move every enabled slider one keyboard step; each widget (cell) with sliders must change
    its output for at least one of them. A single slider may legitimately change nothing (it
    only matters once a checkbox is on, or the cell redraws on a button click); those are
    listed in ``report.idle_sliders``, not failed."""
    sliders = page.evaluate(JS_SLIDERS)
    report.sliders = len(sliders)
    changed_cells: dict[int, bool] = {}
    for s in sliders:
        if s["disabled"]:
            continue
        changed_cells.setdefault(s["cell"], False)
        before = page.evaluate(JS_OUTPUT_FINGERPRINT)
        handle = page.locator(".jp-Notebook .widget-slider").nth(s["index"]).locator(".noUi-handle, input[type=range]").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        page.keyboard.press("ArrowRight")
        if page.evaluate(JS_SLIDER_VALUE, s["index"]) == s["value"]:  # already at its maximum
            page.keyboard.press("ArrowLeft")
        moved_to = page.evaluate(JS_SLIDER_VALUE, s["index"])
        name = f"slider {s['index']} in cell {s['cell']} ({s['label'].strip() or 'no label'}: {s['value']} -> {moved_to})"
        if moved_to == s["value"]:
            report.add("slider-stuck", f"{name}: the keyboard (ArrowRight / ArrowLeft) did not move it")
            continue
        after = _wait_for_change(page, before, effect_s)
        if after["digest"] == before["digest"]:
            report.idle_sliders.append(name)
            continue
        report.sliders_changed += 1
        changed_cells[s["cell"]] = True
        if after["images"] > before["images"]:
            report.add("plots-stack", f"{name}: images in outputs went {before['images']} -> {after['images']}")
    for cell, changed in changed_cells.items():
        if not changed:
            names = [n for n in report.idle_sliders if f" in cell {cell} " in n]
            report.add("slider-no-effect", f"cell {cell}: no slider changed any output ({'; '.join(names)})")


def _screenshot(page, name: str) -> list[Path]:
    """Save the whole notebook: ``<name>.png``, and ``<name>-p2.png``... when it is taller than
    one Chromium capture (about 16,000 px) allows. The page is made as tall as the notebook,
    because JupyterLab scrolls inside its own panel (a "full page" capture would show one
    screen)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob(f"{name}-p*.png"):
        old.unlink()
    height = int(page.evaluate(JS_NOTEBOOK_HEIGHT))
    view = max(800, min(height + 160, SCREENSHOT_MAX_PX))
    page.set_viewport_size({"width": 1280, "height": view})
    time.sleep(1.0)
    page.evaluate(JS_NOTEBOOK_HEIGHT)
    paths, offset, part = [], 0, 1
    while True:
        path = SCREENSHOTS / (f"{name}.png" if part == 1 else f"{name}-p{part}.png")
        rest = height + 160 - offset  # the last part: only what is left of the notebook
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1280, "height": min(view, max(rest, 800))})
        paths.append(path)
        offset += view - 400  # overlap a little so no line is cut in two unseen
        if offset >= height - 400 or part >= 10:
            return paths
        page.evaluate(JS_SCROLL_TO, offset)
        time.sleep(0.5)
        part += 1


@dataclass
class LabPage:
    """A loaded JupyterLab page, kept for the next notebook: loading JupyterLab costs Chromium
    about 5 CPU-seconds, opening a notebook in a loaded page about 1."""
    browser: object
    server: LabServer
    context: object
    page: object
    report: Report | None = None  # the run that page errors are reported to


_LAB_PAGES: list[LabPage] = []

JS_CLOSE = "() => { if (window.__nb) { window.__nb.dispose(); window.__nb = null; } }"


def load_lab(page, server: LabServer) -> None:
    """Load JupyterLab in ``page`` with a fresh workspace (``&reset``)."""
    page.goto(f"{server.url}/lab?token={server.token}&reset", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp !== undefined")


def open_notebook(page, notebook: str) -> None:
    """Open ``notebook`` in the JupyterLab of ``page`` (as ``window.__nb``) and wait until its
    kernel (the ``python3`` kernelspec) is idle."""
    kernel = page.evaluate(JS_OPEN, notebook)
    assert kernel == "python3", f"{notebook}: kernel {kernel!r}, expected 'python3' (kernelspec name)"
    wait_idle(page, RUN_ALL_S)


JS_WATCH_KERNEL = """
() => {
  // what the kernel connection does while the notebook runs (the last 40 events), for a diagnosis (:func:`_diagnose`)
  const w = window.__nb, t0 = performance.now();
  const events = window.__nbEvents = [];
  const note = (what) => { events.push(`${Math.round(performance.now() - t0)} ms ${what}`); if (events.length > 40) events.shift(); };
  w.sessionContext.connectionStatusChanged.connect((_, v) => note(`connection ${v}`));
  w.sessionContext.statusChanged.connect((_, v) => { if (v !== 'busy' && v !== 'idle') note(`kernel ${v}`); });
  w.sessionContext.session.kernel.iopubMessage.connect((_, m) => {
    if (m.header.msg_type === 'comm_close') note(`comm_close ${m.content.comm_id}`);
  });
}
"""


def _watch_console(page) -> tuple[list[str], object]:
    """Collect the page's console errors and warnings (ipywidgets logs its failures there): the
    list, and the listener to remove afterwards."""
    console: list[str] = []
    listen = lambda m: console.append(f"{m.type}: {m.text[:300]}") if m.type in ("error", "warning") else None  # noqa: E731
    page.on("console", listen)
    return console, listen


def _diagnose(page, report: Report, console: list[str]) -> None:
    """Add a ``diagnosis`` problem to a report with widget problems: the widget models its outputs
    show and whether the kernel still has their comms, what the kernel connection did
    (:data:`JS_WATCH_KERNEL`, when installed) and the browser console, errors first."""
    def read(js: str):
        try:
            return page.evaluate(js)
        except Exception as exc:  # noqa: BLE001 - the diagnosis must not hide the problems found
            return f"(not read: {str(exc)[:200]})"

    missing = read(JS_MISSING_MODELS)
    events = read("() => window.__nbEvents || []")
    errors_first = sorted(console, key=lambda line: not line.startswith("error"))
    report.add("diagnosis", f"widget models in the outputs and whether the kernel has their comms: {missing}; "
                            f"kernel connection: {events}; browser console: {errors_first[:8]}")


def open_saved_run(page, notebook: str) -> None:
    """Open a notebook saved by :func:`run_notebook_once` again, on its running kernel, and
    require what a lecturer reopening a prepared notebook sees: every code cell shows its output
    of the saved run, the widgets load from the kernel, and nothing is an error."""
    console, listen = _watch_console(page)
    try:
        open_notebook(page, notebook)
        page.evaluate(JS_WATCH_KERNEL)
        counts = [c["count"] for c in page.evaluate(JS_MODEL_OUTPUTS) if not c["empty"]]
        assert None not in counts, f"the saved {notebook} has cells without a run: {counts}"
        report = Report(notebook)
        _wait_widgets_loaded(page, report)
        _check_outputs(page, report)
        if report.problems:
            _diagnose(page, report, console)
        assert report.problems == [], "\n".join(map(str, report.problems))
    finally:
        page.remove_listener("console", listen)


def lab_page(browser, server: LabServer, viewport: dict | None = None) -> LabPage:
    """The JupyterLab page of this Chromium and server, loaded on first use (``&reset``: a fresh
    workspace), with no notebook open and the window at ``viewport`` (default 1280 x 900)."""
    for lp in _LAB_PAGES:
        if lp.browser is browser and lp.server is server and browser.is_connected():
            break
    else:
        _LAB_PAGES[:] = [lp for lp in _LAB_PAGES if lp.browser.is_connected()]
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR")
        page = context.new_page()
        page.set_default_timeout(RUN_ALL_S * 1000)
        lp = LabPage(browser, server, context, page)
        page.on("pageerror", lambda exc: lp.report and lp.report.console_errors.append(str(exc)[:300]))
        load_lab(page, server)
        _LAB_PAGES.append(lp)
    lp.page.set_viewport_size(viewport or {"width": 1280, "height": 900})
    return lp


def release_lab_page(lp: LabPage, *, ok: bool, shutdown: bool = True) -> None:
    """After a test: shut down the open notebook's kernel (unless ``shutdown`` is false: another
    test opens the run again) and close its panel; a test that failed (``ok`` false) may have left
    the page in any state, so it is closed and the next test loads a fresh one."""
    lp.report = None
    try:
        if shutdown:
            lp.page.evaluate("async () => { if (window.__nb) await window.__nb.sessionContext.shutdown(); }")
        lp.page.evaluate(JS_CLOSE)
        if lp.page.evaluate("() => document.querySelector('.jp-Dialog') !== null"):
            ok = False  # a dialog (e.g. the kernel restarting) would keep the keyboard from the next notebook
    except Exception:  # the page may be gone; the server fixture stops all kernels anyway
        ok = False
    if not ok:
        _LAB_PAGES.remove(lp)
        try:
            lp.context.close()
        except Exception:  # Chromium may be gone: the error that brought us here is the one to see
            pass


def run_notebook(browser, server: LabServer, path: str, shot_name: str, slider_effect_s: float = SLIDER_EFFECT_S,
                 *, keep_kernel: bool = False) -> Report:
    """Open ``path`` (relative to the server root), run all cells, check it; return the report.
    ``keep_kernel``: save the notebook (outputs and widget state) and leave its kernel running,
    so that another test can open the run again; otherwise the kernel is shut down."""
    report = Report(path)
    t0 = time.monotonic()
    lp = lab_page(browser, server)
    lp.report, page, ok = report, lp.page, False
    console, listen = _watch_console(page)
    try:
        open_notebook(page, path)
        page.evaluate(JS_WATCH_KERNEL)
        report.changed_on_open = _changed_on_open(page)
        report.seconds["open"] = time.monotonic() - t0
        t1 = time.monotonic()
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        time.sleep(0.5)
        wait_idle(page, RUN_ALL_S)
        report.seconds["run_all"] = time.monotonic() - t1
        _wait_widgets_loaded(page, report)
        _check_outputs(page, report)
        t2 = time.monotonic()
        _move_sliders(page, report, slider_effect_s)
        report.seconds["sliders"] = time.monotonic() - t2
        _check_outputs(page, report)
        if WHOLE_NOTEBOOK_SHOTS:
            _screenshot(page, shot_name)
        if keep_kernel and page.evaluate(JS_SAVE):
            report.add("not-saved", "the notebook is still modified after saving")
        if any(p.kind.startswith("widget-") for p in report.problems):
            _diagnose(page, report, console)
        ok = not report.problems
    finally:
        page.remove_listener("console", listen)
        # the kernel is kept only for a clean run (a failed one may still be busy)
        release_lab_page(lp, ok=ok, shutdown=not (keep_kernel and ok))
    report.seconds["total"] = time.monotonic() - t0
    return report


def run_notebook_once(browser, server: LabServer, name: str) -> Report:
    """:func:`run_notebook` with the kernel kept, once per server: a later call (another test
    that needs the notebook run and saved, e.g. tests/test_browser_slides.py for notebook 04)
    returns the first call's report. Under pytest-xdist those tests share a worker (the browser
    modules' ``xdist_group``)."""
    if name not in server.runs:
        try:
            server.runs[name] = run_notebook(browser, server, name, shot_name(Path(name)), keep_kernel=True)
        except Exception as exc:  # the second caller fails at once, with the first one's error
            server.runs[name] = exc
    if isinstance(server.runs[name], Exception):
        raise server.runs[name]
    return server.runs[name]


def shot_name(nb: Path) -> str:
    """The screenshot name of a notebook: its number, with the letter of a second part ("04b"), so that
    04b's screenshots do not overwrite 04's."""
    m = re.match(r"(\d+[a-z]?)(?=_)", nb.stem)
    return m.group(1) if m else nb.stem


def summary(report: Report) -> str:
    secs = ", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items())
    idle = "".join(f"\n  slider with no visible effect (allowed): {n}" for n in report.idle_sliders)
    return f"{report.notebook}: {secs}; sliders {report.sliders_changed}/{report.sliders} changed output{idle}"

#: the widget model ids in the open notebook's saved outputs that have no comm in its kernel
JS_MISSING_MODELS = """
async () => {
  const w = window.__nb;
  const ids = [];
  w.content.widgets.forEach((cell) => {
    if (cell.model.type !== 'code') return;
    for (const out of cell.model.outputs.toJSON()) {
      const v = out.data && out.data['application/vnd.jupyter.widget-view+json'];
      if (v && v.model_id) ids.push(v.model_id);
    }
  });
  const kernel = w.sessionContext.session.kernel;
  const info = await kernel.requestCommInfo({target_name: 'jupyter.widget'});
  const live = Object.keys(info.content.comms || {});
  return {saved: ids.length, not_in_kernel: ids.filter(i => !live.includes(i)), kernel_comms: live.length};
}
"""

JS_CELL_INDEX = """
(needle) => window.__nb.content.widgets.findIndex(c => c.model.sharedModel.getSource().includes(needle))
"""

JS_RUN_AT = """
async ([i, command]) => {
  const w = window.__nb;
  w.content.activeCellIndex = i;
  w.content.deselectAll();
  await window.jupyterapp.commands.execute(command);
}
"""
