"""Settings for every pytest run in this repository (``tests/`` and nbval on ``notebooks/``).

Set before any test, notebook kernel or benchmark subprocess starts, and inherited by all of them
through the environment:

- ``DECODELAB_ANSWERS_DIR``: a fresh temporary answers folder for the session (removed at the
  end), whatever the caller had set, so no test and no notebook run under nbval writes into the
  user's own answers (``~/.decodelab/answers``);
- one torch intra-op thread (``OMP_NUM_THREADS=1`` for the kernels and subprocesses, and
  ``torch.set_num_threads(1)`` in this process): the course's models are tiny, and on a busy
  2-core machine two OpenMP threads waiting for each other slow a decode step many times;
- offline Hugging Face and the Agg matplotlib backend.

nbval's cells of one notebook share one kernel, so each notebook is one ``xdist_group`` (under
``--dist loadgroup`` its cells run in order on one worker), and each cell waits up to
``NBVAL_OUTPUT_TIMEOUT_S`` for its next output message.
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

#: seconds nbval waits for the next output message of a cell that has finished (nbval's own: 5 s).
#: Notebook 06's quiz cell sends thousands of widget messages, and on two busy cores a gap
#: between two of them can pass 5 s ("Timeout of 5 seconds exceeded waiting for output").
NBVAL_OUTPUT_TIMEOUT_S = 60


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
def pytest_collection_modifyitems(config, items) -> None:
    """A notebook's nbval cells: one ``xdist_group`` per notebook file, and a longer output wait
    (runs before pytest-xdist reads the groups).

    Under ``--nbval-lax`` the nbval cells of a notebook that the browser test
    (tests/test_browser.py, ``test_notebook_in_jupyterlab``) runs top to bottom in this session are
    deselected when Chromium is here: that test's check holds nbval-lax's (every cell runs, no error
    output) on the same notebook file, so nbval would execute it a second time for nothing. A
    notebook with a cell whose output nbval compares (``NBVAL_CHECK_OUTPUT``) keeps its nbval run."""
    kit = sys.modules.get("browserkit")  # imported by tests/test_browser.py when it was collected
    if config.getoption("nbval_lax", False) and kit is not None and kit.browser_missing() is None:
        in_browser = {Path(item.callspec.params["notebook"]).resolve() for item in items
                      if getattr(item, "originalname", "") == "test_notebook_in_jupyterlab"}
        twice = [item for item in items if hasattr(item, "output_timeout")
                 and Path(item.fspath).resolve() in in_browser
                 and "NBVAL_CHECK_OUTPUT" not in Path(item.fspath).read_text(encoding="utf-8")]
        if twice:
            config.hook.pytest_deselected(items=twice)
            items[:] = [item for item in items if item not in twice]
    for item in items:
        if hasattr(item, "output_timeout"):  # an nbval cell
            item.output_timeout = NBVAL_OUTPUT_TIMEOUT_S
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Before a test that is not a browser test: close the Chromium the browser tests before it
    shared (tests/browserkit.py, ``shared_browser``): Playwright's sync API holds an asyncio
    event loop in this thread while it runs."""
    kit = sys.modules.get("browserkit")
    if kit is not None and not item.get_closest_marker("browser"):
        kit.close_browser()


def pytest_sessionfinish(session) -> None:
    kit = sys.modules.get("browserkit")
    if kit is not None:
        kit.close_browser()
