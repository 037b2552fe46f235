"""Settings for every pytest run in this repository (``tests/`` and nbval on ``notebooks/``).

Set before any test, notebook kernel or benchmark subprocess starts, and inherited by all of them
through the environment:

- ``DECODELAB_ANSWERS_DIR``: a fresh temporary answers folder for the session (removed at the
  end), whatever the caller had set, so no test and no notebook run under nbval writes into the
  user's own answers (``~/.decodelab/answers``);
- one torch intra-op thread (``OMP_NUM_THREADS=1`` for the kernels and subprocesses, and
  ``torch.set_num_threads(1)`` in this process, once): the course's models are tiny, and on a
  busy 2-core machine two OpenMP threads waiting for each other slow a decode step many times;
- offline Hugging Face and the Agg matplotlib backend.

With pytest-xdist (``bash course.sh test`` passes ``-n``), tests go out slowest first (browser,
then ``slow``), and a module's tests run on one worker so that its module fixtures (a hub, an
nbgrader course, a notebook's cells under nbval) are set up once; ``tests/test_browser.py``'s
tests are spread over the workers (each worker has its own JupyterLab and Chromium, the latter
kept from one browser test to the next and closed before the first other test), except the
notebook runs that another test opens again (``REOPENED_BY``).

No notebook is executed twice for nothing: nbval's cells of a notebook are deselected when a
selected test executes the same notebook top to bottom with a check that holds nbval-lax's
(:func:`runs_elsewhere`: notebook 01 from the installed wheel; every notebook in JupyterLab and
Chromium, when those are here). Without Chromium or with ``-m "not browser"``, nbval runs every
notebook (01 from the wheel); ``pytest notebooks/ --nbval-lax`` alone runs every notebook's cells.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ANSWERS_ENV = "DECODELAB_ANSWERS_DIR"
_SAVED: dict[str, str | None] = {}
_TEMP: list[str] = []


def _setenv(name: str, value: str) -> None:
    _SAVED.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def pytest_configure(config) -> None:
    answers = tempfile.mkdtemp(prefix="decodelab-test-answers-")
    _TEMP.append(answers)
    _setenv(ANSWERS_ENV, answers)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        _setenv(name, "1")
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("MPLBACKEND", "Agg")):
        if name not in os.environ:
            _setenv(name, value)
    import torch

    torch.set_num_threads(1)


def pytest_unconfigure(config) -> None:
    for name, value in _SAVED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED.clear()
    while _TEMP:
        shutil.rmtree(_TEMP.pop(), ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Before a test that is not a browser test: close the Chromium the browser tests before it
    shared (tests/browserkit.py, :func:`shared_browser`): Playwright's sync API holds an asyncio
    event loop in this thread while it runs."""
    kit = sys.modules.get("browserkit")
    if kit is not None and not item.get_closest_marker("browser"):
        kit.close_browser()


def pytest_sessionfinish(session) -> None:
    kit = sys.modules.get("browserkit")
    if kit is not None:
        kit.close_browser()


def _heaviness(item) -> int:
    """Browser tests 0, other slow ones 1 (mostly busy on a core), the classroom's 2 (they mostly
    wait on JupyterHub and nbgrader), the rest 3."""
    if item.get_closest_marker("browser"):
        return 0
    if item.get_closest_marker("classroom"):
        return 2
    if item.get_closest_marker("slow"):
        return 1
    return 3


#: notebooks that a test runs under nbval from the installed wheel (the same file: the wheel
#: carries notebooks/ as it is, tests/test_packaging.py checks the bytes): when that test is
#: collected, the notebook's own nbval cells are deselected, so it is not executed twice
RUN_FROM_THE_WHEEL = {
    "notebooks/01_decode_phase.ipynb": "tests/test_packaging.py::test_the_installed_wheel_runs_notebook_01_and_grades_a_quiz",
}
#: variables that test leaves out of the wheel's environment
WHEEL_RUN_DROPS = ("DECODELAB_TARGET", "DECODELAB_DRAFT", "DECODELAB_QUIZZES", "DECODELAB_BENCHMARKS")
#: the browser test that runs a course notebook top to bottom in JupyterLab (tests/test_browser.py,
#: one per notebook, ``{stem}`` its file name without ``.ipynb``). Its check holds nbval-lax's
#: (every cell ran, no error output) and more (no traceback or warning on stderr, widgets shown,
#: sliders that redraw in place), on the same pair (the server inherits DECODELAB_TARGET/DRAFT)
#: and with the kernel a student gets (the inline matplotlib backend)
BROWSER_RUN = "tests/test_browser.py::test_notebook_in_jupyterlab[{stem}]"
#: the leak test that runs a course notebook top to bottom with nbclient (tests/test_prediction_leaks.py,
#: ``{nb}`` the notebook's id: "04b"): a cell that fails fails it, as nbval-lax would; it stands in for
#: nbval's run when neither the wheel's run nor the browser's takes the notebook
LEAK_RUN = "tests/test_prediction_leaks.py::test_nothing_printed_or_shown_answers_a_prediction_before_its_reveal[{nb}]"


def runs_elsewhere(config, ids: set[str]) -> dict[str, str]:
    """The notebooks (``notebooks/NN_name.ipynb``) whose nbval cells would execute them a second
    time for nothing in this session, each with the selected test that executes it instead: the
    wheel's run (``RUN_FROM_THE_WHEEL``), or the browser run (``BROWSER_RUN``) when Chromium and
    playwright are here (else that test is skipped and nbval's run is the only one), it tests this
    checkout's notebooks and the notebook has no cell whose output nbval-lax compares
    (``NBVAL_CHECK_OUTPUT``, or the tag ``nbval-check-output``: the browser run does not compare
    outputs), or else the run-based leak test (``LEAK_RUN``) when it is selected. Only for --nbval-lax:
    strict --nbval compares every cell's output."""
    if not config.getoption("nbval_lax", False):
        return {}
    elsewhere: dict[str, str] = {}
    if not any(os.environ.get(v) for v in WHEEL_RUN_DROPS):  # a pair the caller chose: not the wheel's run
        elsewhere.update({nb: test for nb, test in RUN_FROM_THE_WHEEL.items() if test in ids})
    kit = sys.modules.get("browserkit")  # imported by tests/test_browser.py when it was collected
    if kit is not None and not os.environ.get("DECODELAB_BROWSER_NOTEBOOKS") and kit.browser_missing() is None:
        for nb in kit.course_notebooks():
            test = BROWSER_RUN.format(stem=nb.stem)
            if test in ids and not _compares_outputs(nb):
                elsewhere.setdefault(f"notebooks/{nb.name}", test)
    for test in ids if not os.environ.get("DECODELAB_EXECUTED_NOTEBOOKS") else ():  # a saved run may stand in there
        if test.startswith(LEAK_RUN.split("[", 1)[0] + "["):
            nb_id = test.rsplit("[", 1)[1].rstrip("]")
            for path in (Path(__file__).resolve().parent / "notebooks").glob(f"{nb_id}_*.ipynb"):
                if not _compares_outputs(path):
                    elsewhere.setdefault(f"notebooks/{path.name}", test)
    return elsewhere


def _compares_outputs(notebook) -> bool:
    """Whether nbval-lax compares some cell's output in ``notebook`` (a path): a cell marked
    ``# NBVAL_CHECK_OUTPUT`` or tagged ``nbval-check-output`` (either shows in the file's text)."""
    text = notebook.read_text(encoding="utf-8")
    return "NBVAL_CHECK_OUTPUT" in text or "nbval-check-output" in text


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Modules with browser tests first, then modules with slow ones (the classroom's last of them),
    then the rest; a module's tests stay together and in order (its module fixtures are set up
    once, also in one process).
    The nbval cells of a notebook that another selected test executes top to bottom
    (:func:`runs_elsewhere`: from the wheel, or in the browser) are deselected, so no notebook runs
    twice (this hook runs last: after ``-k`` and ``-m``). nbval cells wait up to
    ``NBVAL_OUTPUT_TIMEOUT_S`` for each output message."""
    twice = runs_elsewhere(config, {item.nodeid for item in items})
    dropped = [item for item in items if item.nodeid.split("::", 1)[0] in twice]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.nodeid.split("::", 1)[0] not in twice]
    module_of = {id(item): item.nodeid.split("::", 1)[0] for item in items}
    rank: dict[str, int] = {}
    for item in items:
        m = module_of[id(item)]
        h = _heaviness(item)
        rank[m] = min(rank.get(m, h), h)
    items.sort(key=lambda item: rank[module_of[id(item)]])  # stable
    for item in items:
        if hasattr(item, "output_timeout"):  # an nbval cell
            item.output_timeout = NBVAL_OUTPUT_TIMEOUT_S


#: seconds nbval waits for the next output message of a cell that has finished (nbval's own 5 s):
#: notebook 06's quiz cell sent some 4,300 widgets (2,650 since its self-check rows are built lazily), and on
#: two busy cores a 5 s gap
#: between two of them failed 2 runs of 8 ("Timeout of 5 seconds exceeded waiting for output")
NBVAL_OUTPUT_TIMEOUT_S = 60


#: test modules whose tests share no module fixture (only Chromium, started again in little time):
#: pytest-xdist may run each test of them on any worker
SPREAD_MODULES = {"tests/test_browser.py"}
#: browser runs that another unit opens again (the one home of that list: the fixture ``reopened``
#: below tells the test to keep the kernel, once per worker): the run goes to that unit. Notebook
#: 01's run is reopened by the exercise test, 03's by tests/test_browser_presentation.py, 04's by
#: tests/test_browser_slides.py.
REOPENED_BY = {
    "tests/test_browser.py::test_notebook_in_jupyterlab[01_decode_phase]": "tests/test_browser.py::test_exercises_in_jupyterlab",
    "tests/test_browser.py::test_notebook_in_jupyterlab[03_agent_loops]": "tests/test_browser_presentation.py",
    "tests/test_browser.py::test_notebook_in_jupyterlab[04_speculative_decoding]": "tests/test_browser_slides.py",
}


@pytest.fixture
def reopened(request) -> bool:
    """Whether another unit opens this test's notebook run again (``REOPENED_BY``): the browser
    test then runs it with ``run_notebook_once`` (tests/browserkit.py), which keeps the kernel and
    saves the notebook for that unit."""
    return request.node.nodeid in REOPENED_BY


def xdist_scope(nodeid: str) -> str:
    """The unit of work a test belongs to: its module (a notebook file for nbval's cells), or the
    test itself in ``SPREAD_MODULES``, or the unit ``REOPENED_BY`` names."""
    if nodeid in REOPENED_BY:
        return REOPENED_BY[nodeid]
    module = nodeid.split("::", 1)[0]
    return nodeid if module in SPREAD_MODULES else module


#: the modules whose units make the browser lane (:func:`browser_lane`)
BROWSER_MODULES = "tests/test_browser"


def browser_lane(index: int, workers: int) -> bool:
    """Whether worker ``index`` (0-based, of ``workers``) takes the browser units first.

    The first half of the workers (at least one) do: a browser test mostly waits while its kernel
    and Chromium work (about one core between them), so the other workers meanwhile run the
    CPU-bound units and keep the cores busy (and seldom start a JupyterLab server and Chromium of
    their own). Each worker takes the other lane's units once its own is empty."""
    return index < max(1, (workers + 1) // 2)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist (``-n N``): each unit of work (:func:`xdist_scope`) runs on one worker, so its
    module fixtures are set up once; units go out in the order of the collection (sorted above,
    the slowest first), each to the first worker that runs short of work, which takes the first
    unit of its lane (:func:`browser_lane`)."""
    if config.getvalue("dist") != "load":  # the user asked for another --dist
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            lane = browser_lane(list(self.assigned_work).index(node), len(self.assigned_work))
            mine = next((s for s in self.workqueue if s.startswith(BROWSER_MODULES) == lane), None)
            if mine is not None:  # else the other lane's first unit, the queue's first
                self.workqueue.move_to_end(mine, last=False)
            super()._assign_work_unit(node)  # sends the queue's first unit

    config.option.loadscopereorder = False
    return ModuleScheduling(config, log)
