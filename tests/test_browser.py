"""The course in a real browser: every notebook run top to bottom in JupyterLab + headless Chromium
(the harness is tests/browserkit.py: what a run checks is listed there).

- ``test_notebook_in_jupyterlab``: each ``notebooks/*.ipynb`` passes every check of
  :func:`browserkit.run_notebook`; opening it changes only the kernel's ``language_info``, and the
  stored notebook keeps ``{"name": "python"}``. The runs that another test opens again
  (``REOPENED_NOTEBOOKS`` in tests/conftest.py: 01, 03, 04) keep their kernel and are saved; the
  browser modules share one xdist_group, so one server holds them.
- ``test_exercises_in_jupyterlab``: notebook 01's exercise widgets driven as a student would, on
  that notebook's saved run opened again on its kernel: type a prediction (a wrong one first: a
  Korean message), run the measuring cell again and see its result hidden, commit the prediction
  and see the result open below with the prediction beside the value and the prediction widget
  locked, rerun the measuring cell, write an explanation and submit it (an empty one first) and
  see the model answer and the rubric; each state is saved as ``artifacts/screenshots/01-ex-*.png``.
  The kernel's answers go to the server's temporary ``$DECODELAB_ANSWERS_DIR``.
- Two demo notebooks (``tests/demo_notebooks.py``) check the harness itself: a good one must pass,
  a broken one must be reported for each of its planted faults.

Run: ``pytest -m browser tests/test_browser.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import demo_notebooks
from browserkit import (JS_CELL_INDEX, JS_RUN_AT, NOTEBOOKS, ON_CI, RUN_ALL_S, SCREENSHOTS, course_notebooks,
                        lab_page, open_saved_run, release_lab_page, run_notebook, run_notebook_once, shot_name,
                        summary, wait_idle)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("jupyterlab")]


def test_harness_passes_a_good_notebook(browser, lab_server):
    report = run_notebook(browser, lab_server, "demo_good.ipynb", "demo_good")
    print(summary(report))
    assert report.problems == [], "\n".join(map(str, report.problems))
    assert (report.sliders, report.sliders_changed) == (1, 1)


def test_harness_reports_a_broken_notebook(browser, lab_server):
    report = run_notebook(browser, lab_server, "demo_broken.ipynb", "demo_broken", slider_effect_s=4)
    print(summary(report))
    kinds = {p.kind for p in report.problems}
    assert kinds == demo_notebooks.EXPECTED_BROKEN_KINDS, "\n".join(map(str, report.problems))
    diagnosis = next(p.detail for p in report.problems if p.kind == "diagnosis")
    # the Ghost widget's module does not exist: ipywidgets says so in the console
    assert "kernel connection: [" in diagnosis and "decodelab-no-such-module" in diagnosis, diagnosis


@pytest.mark.parametrize("notebook", course_notebooks(), ids=lambda p: p.stem)
def test_notebook_in_jupyterlab(browser, lab_server, notebook, reopened):
    if reopened:
        report = run_notebook_once(browser, lab_server, notebook.name)
    else:
        report = run_notebook(browser, lab_server, notebook.name, shot_name(notebook))
    print(summary(report))
    if report.console_errors:
        print("browser page errors:", *report.console_errors, sep="\n  ")
    assert report.problems == [], f"{notebook.name} in JupyterLab:\n" + "\n".join(map(str, report.problems))
    # JupyterLab itself writes the kernel's language_info into an opened notebook, which marks it
    # modified; storing it would make jupytext write "{code-cell} ipython3" into every MyST source,
    # so the notebooks keep {"name": "python"} (see lecturer/README.md). Nothing else may change.
    stored = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
    assert stored["language_info"] == {"name": "python"}, stored["language_info"]
    assert report.changed_on_open == ["language_info"], f"opening {notebook.name} changed {report.changed_on_open}"


EXERCISE_NOTEBOOK = "01_decode_phase.ipynb"
EXERCISE_PREDICT = "01-predict-cache-length"  # number, unit 위치; the reveal cell shows state.position (8)
EXERCISE_WRITTEN = "01-written-decode-definition"


def _cell_text(page, index: int) -> str:
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-Cell-outputArea").inner_text()


def _wait_text(locator, needle: str, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    while True:
        text = locator.inner_text()
        if needle in text:
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"{needle!r} did not appear within {timeout_s} s; shown: {text[:600]!r}")
        time.sleep(0.3)


def _shot(locator, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    locator.scroll_into_view_if_needed()
    time.sleep(0.3)
    locator.screenshot(path=str(path))
    return path


def test_exercises_in_jupyterlab(browser, lab_server):
    """A student's path through notebook 01's exercises, in the browser, after Run All (the run of
    ``test_notebook_in_jupyterlab[01_decode_phase]``, opened again on its kernel): predict +
    commit, reveal, written answer + submit (screenshots ``01-ex-*.png``)."""
    if not (lab_server.root / EXERCISE_NOTEBOOK).is_file():
        pytest.skip(f"{EXERCISE_NOTEBOOK} is not among the tested notebooks")
    run = run_notebook_once(browser, lab_server, EXERCISE_NOTEBOOK)
    assert run.problems == [], "\n".join(map(str, run.problems))
    answers = lab_server.root.parent / "answers" / "course"
    for name in (EXERCISE_PREDICT, EXERCISE_WRITTEN):  # Run All answers nothing: no prediction, no answer yet
        rec = answers / f"{name}.json"
        saved = json.loads(rec.read_text(encoding="utf-8")) if rec.exists() else {}
        assert saved.get("response") is None and saved.get("revealed") is None, saved
    lp = lab_page(browser, lab_server)
    page, ok = lp.page, False
    try:
        open_saved_run(page, EXERCISE_NOTEBOOK)
        reveal_cell = page.evaluate(JS_CELL_INDEX, f'ex.reveal("{EXERCISE_PREDICT}"')
        written_cell = page.evaluate(JS_CELL_INDEX, f'ex.written("{EXERCISE_WRITTEN}"')
        assert 0 < reveal_cell < written_cell

        # 1. the prediction widget, untouched: Korean prompt, an input, the commit button
        box = page.locator(f".decodelab-exercise-{EXERCISE_PREDICT}")
        box.first.wait_for(state="visible")
        text = box.inner_text()
        assert "예측해 보세요" in text and "예측 확정" in text and "위치" in text, text
        _shot(box, "01-ex-1-predict")

        # 2. an invalid prediction gets a Korean message, nothing is saved
        field_ = box.locator("input[type=text]")
        field_.fill("여덟")
        box.get_by_role("button", name="예측 확정").click()
        _wait_text(box, "숫자로 읽을 수 없습니다")
        _shot(box, "01-ex-2-predict-invalid")

        # 2b. the measuring cell runs (again) before any prediction: its printed lines and the value
        #     stay hidden, a notice and the skip button show; the prediction stays open
        page.evaluate(JS_RUN_AT, [reveal_cell, "notebook:run-cell"])
        time.sleep(0.5)
        wait_idle(page, RUN_ALL_S)
        result = page.locator(f".decodelab-result-{EXERCISE_PREDICT}")
        hidden = _wait_text(result, "결과를 숨겨 두었습니다")
        assert "예측 없이 보기" in hidden and "실제 값:" not in hidden and "캐시 길이 8" not in hidden, hidden
        assert not box.locator("input[type=text]").is_disabled()
        _shot(page.locator(".jp-Notebook .jp-Cell").nth(reveal_cell).locator(".jp-Cell-outputArea"), "01-ex-2b-result-hidden")

        # 3. a real prediction, committed: the hidden result below opens at once
        field_.fill("7")
        box.get_by_role("button", name="예측 확정").click()
        opened = _wait_text(result, "실제 값: 8 위치")
        assert "내 예측: 7 위치" in opened and "캐시 길이 8" in opened, opened
        assert "7 위치" in box.inner_text()
        _shot(box, "01-ex-3-predict-committed")

        # 4. rerun the measuring cell: it opens at once, the prediction beside the value, with the why
        page.evaluate(JS_RUN_AT, [reveal_cell, "notebook:run-cell"])
        time.sleep(0.5)
        wait_idle(page, RUN_ALL_S)
        out = _cell_text(page, reveal_cell)
        assert "내 예측: 7 위치" in out and "실제 값: 8 위치" in out, out
        assert "2 + 6 = 8" in out and "실제의 0.88배" in out, out  # the why, and how far off
        assert "예측을 확정하지 않았습니다" not in out, out
        _shot(page.locator(".jp-Notebook .jp-Cell").nth(reveal_cell).locator(".jp-Cell-outputArea"), "01-ex-4-reveal")
        # the prediction widget above is locked now, showing the committed value
        _wait_text(box, "바꿀 수 없습니다")
        assert box.locator("input[type=text]").is_disabled() and "7 위치" in box.inner_text()
        _shot(box, "01-ex-4b-predict-locked")
        page.evaluate(JS_RUN_AT, [written_cell, "notebook:run-cell"])
        time.sleep(0.5)
        wait_idle(page, RUN_ALL_S)

        # 5. the written answer: empty submit is refused, a real one shows the model answer + rubric
        wbox = page.locator(f".decodelab-exercise-{EXERCISE_WRITTEN}")
        wbox.first.wait_for(state="visible")
        assert "내 말로 설명해 보세요" in wbox.inner_text()
        _shot(wbox, "01-ex-5-written")
        wbox.get_by_role("button", name="제출").click()
        _wait_text(wbox, "답이 비어 있습니다")
        _shot(wbox, "01-ex-5b-written-empty")
        answer = "디코드 단계는 모델이 답의 토큰을 하나씩, 앞의 토큰과 KV 캐시를 보고 차례로 만드는 구간입니다."
        wbox.locator("textarea").fill(answer)
        wbox.get_by_role("button", name="제출").click()
        text = _wait_text(wbox, "저장했습니다")  # "모범 답안" is already in the instructions: wait for the save itself
        assert "모범 답안:" in text and "채점 기준" in text, text
        _shot(wbox, "01-ex-6-written-submitted")

        # the answers reached the kernel's answers folder (what the submission exports)
        pred = json.loads((answers / f"{EXERCISE_PREDICT}.json").read_text(encoding="utf-8"))
        assert (pred["response"], pred["revealed"]) == (7.0, 8), pred
        wrote = json.loads((answers / f"{EXERCISE_WRITTEN}.json").read_text(encoding="utf-8"))
        assert wrote["response"] == answer, wrote
        ok = True
    finally:
        release_lab_page(lp, ok=ok)


def test_course_notebooks_exist():
    if not course_notebooks():
        msg = f"no notebooks in {NOTEBOOKS}"
        pytest.fail(msg) if ON_CI else pytest.skip(msg)
