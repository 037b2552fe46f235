"""How the repository's conftest.py hands tests to pytest-xdist workers (``bash course.sh test``
runs with ``-n``): the units of work, and the order they go out in."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the root conftest.py, loaded as a module of its own: pytest imports it and tests/conftest.py both
# under the name "conftest", so it cannot be imported by name
_spec = importlib.util.spec_from_file_location("repo_conftest", REPO / "conftest.py")
root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root)

scope = root.xdist_scope


class _Config:
    """What the collection hook reads of pytest's config: a --nbval-lax run."""

    @staticmethod
    def getoption(name, default=None):
        return {"nbval_lax": True}.get(name, default)


class _Item:
    """What the collection hook reads of a test item: its node id and one marker (or none)."""

    def __init__(self, nodeid, mark=None):
        self.nodeid, self.mark = nodeid, mark

    def get_closest_marker(self, name):
        return name if name == self.mark else None


class _Hook:
    """``config.hook`` of a fake config: records what the collection hook deselects."""

    def __init__(self):
        self.deselected = []

    def pytest_deselected(self, items):
        self.deselected += [i.nodeid for i in items]


def test_a_notebooks_cells_and_a_modules_tests_are_one_unit():
    cells = {scope(f"notebooks/03_agent_loops.ipynb::Cell {i}") for i in range(5)}
    assert cells == {"notebooks/03_agent_loops.ipynb"}
    assert scope("tests/test_classroom_hub.py::test_a") == scope("tests/test_classroom_hub.py::test_b[x-1]") \
        == scope("tests/test_classroom_hub.py::TestC::test_m") == "tests/test_classroom_hub.py"


def test_browser_notebook_runs_are_spread_but_a_reopened_run_goes_with_the_unit_that_reopens_it():
    a = "tests/test_browser.py::test_notebook_in_jupyterlab[02_prefill_vs_decode]"
    b = "tests/test_browser.py::test_notebook_in_jupyterlab[05_chips]"
    assert scope(a) == a and scope(b) == b
    assert scope("tests/test_browser.py::test_notebook_in_jupyterlab[01_decode_phase]") \
        == scope("tests/test_browser.py::test_exercises_in_jupyterlab") == "tests/test_browser.py::test_exercises_in_jupyterlab"
    assert scope("tests/test_browser.py::test_notebook_in_jupyterlab[03_agent_loops]") \
        == scope("tests/test_browser_presentation.py::test_notebook_03_at_1400_px")
    assert scope("tests/test_browser.py::test_notebook_in_jupyterlab[04_speculative_decoding]") \
        == scope("tests/test_browser_slides.py::test_notebook_04_as_a_rise_slideshow")


def test_the_reopened_runs_name_real_tests_and_notebooks():
    browser = (REPO / "tests" / "test_browser.py").read_text(encoding="utf-8")
    assert len(root.REOPENED_BY) == 3
    for nodeid, unit in root.REOPENED_BY.items():
        m = re.fullmatch(r"(tests/test_browser\.py)::(\w+)\[(\w+)\]", nodeid)
        assert m and f"def {m[2]}(" in browser
        assert (REPO / "notebooks" / f"{m[3]}.ipynb").is_file()
        module, _, test = unit.partition("::")
        text = (REPO / module).read_text(encoding="utf-8")
        if test:  # a test of tests/test_browser.py: it names the notebook through a constant
            assert f"def {test}(" in text and f'= "{m[3]}.ipynb"' in text
        else:
            assert f'NOTEBOOK = "{m[3]}.ipynb"' in text
        assert "run_notebook_once(" in (text if not test else text.split(f"def {test}(", 1)[1].split("\ndef ", 1)[0])


def test_the_browser_run_asks_the_conftest_whether_it_is_reopened():
    """``REOPENED_BY`` is the one home of the list: the browser test reads it through the root
    conftest's fixture ``reopened`` (a browser run keeps its kernel only then)."""
    import inspect

    import test_browser

    assert "reopened" in inspect.signature(test_browser.test_notebook_in_jupyterlab).parameters
    body = inspect.getsource(test_browser.test_notebook_in_jupyterlab)
    assert "    if reopened:\n        report = run_notebook_once(" in body, body


def test_slow_modules_go_out_first_and_a_module_stays_together():
    items = [_Item("tests/a.py::t1"), _Item("tests/d.py::t1", "classroom"), _Item("tests/b.py::t1"),
             _Item("tests/b.py::t2", "slow"), _Item("tests/c.py::t1", "browser"), _Item("tests/a.py::t2", "slow"),
             _Item("nb/x.ipynb::Cell 0"), _Item("nb/x.ipynb::Cell 1")]
    root.pytest_collection_modifyitems(_Config(), items)
    assert [i.nodeid for i in items] == ["tests/c.py::t1", "tests/a.py::t1", "tests/b.py::t1", "tests/b.py::t2",
                                         "tests/a.py::t2", "tests/d.py::t1", "nb/x.ipynb::Cell 0", "nb/x.ipynb::Cell 1"]


def test_a_notebook_run_from_the_wheel_is_not_run_again_by_its_own_nbval_cells(monkeypatch):

    class Config(_Config):
        hook = _Hook()

    (notebook, test), = root.RUN_FROM_THE_WHEEL.items()
    assert (REPO / notebook).is_file() and (REPO / test.split("::")[0]).is_file()
    assert f"def {test.split('::')[1]}(" in (REPO / test.split("::")[0]).read_text(encoding="utf-8")
    cells = [f"{notebook}::Cell {i}" for i in range(3)]
    other = "notebooks/02_prefill_vs_decode.ipynb::Cell 0"
    items = [_Item(n) for n in [*cells, other, test]]
    root.pytest_collection_modifyitems(Config(), items)
    assert sorted(i.nodeid for i in items) == sorted([other, test]) and Config.hook.deselected == cells
    # without the wheel's test (e.g. `pytest notebooks/`) the notebook's cells run
    items = [_Item(n) for n in [*cells, other]]
    root.pytest_collection_modifyitems(Config(), items)
    assert [i.nodeid for i in items] == [*cells, other]
    # and so they do in a strict --nbval run, or on a pair the caller chose (not the wheel's run)
    strict = type("Strict", (Config,), {"getoption": staticmethod(lambda name, default=None: False)})
    items = [_Item(n) for n in [*cells, test]]
    root.pytest_collection_modifyitems(strict(), items)
    assert [i.nodeid for i in items] == [*cells, test]
    monkeypatch.setenv("DECODELAB_TARGET", "/some/model")
    items = [_Item(n) for n in [*cells, test]]
    root.pytest_collection_modifyitems(Config(), items)
    assert [i.nodeid for i in items] == [*cells, test]


def test_the_wheel_rule_applies_after_k_and_m():
    """Deselecting the wheel's test with -k (or -m) brings the notebook's own nbval cells back (the
    case without is the test above)."""
    import subprocess
    import sys

    (notebook, test), = root.RUN_FROM_THE_WHEEL.items()
    module = test.split("::")[0]

    def collected(*args: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                               "--nbval-lax", module, notebook, *args], cwd=REPO, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return [line for line in proc.stdout.splitlines() if "::" in line]

    ids = collected("-k", "not " + test.split("::")[1])  # -m goes through the same deselection
    assert test not in ids and f"{notebook}::Cell 0" in ids, ids


def test_a_notebook_the_browser_test_runs_is_not_run_again_by_its_own_nbval_cells(monkeypatch):
    """With Chromium and playwright here, the browser run of a notebook replaces its nbval cells
    (its check holds nbval-lax's); without them (the browser test is skipped), with another
    notebook folder in the browser, or in a strict --nbval run, the nbval cells stay."""
    import browserkit

    nb = "notebooks/02_prefill_vs_decode.ipynb"
    assert (REPO / nb).is_file()
    run = root.BROWSER_RUN.format(stem="02_prefill_vs_decode")
    assert run.startswith("tests/test_browser.py::test_notebook_in_jupyterlab[")  # the test's real name
    cells = [f"{nb}::Cell {i}" for i in range(3)]
    other = "notebooks/05_chips.ipynb::Cell 0"  # its browser run is not selected (e.g. -k 02)

    def collect(config=_Config, missing=None, **env):
        monkeypatch.setattr(browserkit, "browser_missing", lambda: missing)
        for name in ("DECODELAB_BROWSER_NOTEBOOKS", "DECODELAB_TARGET"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        hook = _Hook()
        cfg = type("C", (config,), {"hook": hook})()
        items = [_Item(run, "browser"), *(_Item(n) for n in [*cells, other])]
        root.pytest_collection_modifyitems(cfg, items)
        return [i.nodeid for i in items], hook.deselected

    assert collect() == ([run, other], cells)
    assert collect(DECODELAB_TARGET="/some/model") == ([run, other], cells)  # the lab server gets it too
    assert collect(missing="no Chromium") == ([run, *cells, other], [])
    assert collect(DECODELAB_BROWSER_NOTEBOOKS="/elsewhere") == ([run, *cells, other], [])
    strict = type("Strict", (_Config,), {"getoption": staticmethod(lambda name, default=None: False)})
    assert collect(config=strict) == ([run, *cells, other], [])


def test_a_notebook_with_a_cell_whose_output_nbval_lax_compares_keeps_its_nbval_cells(monkeypatch, tmp_path):
    """nbval-lax compares the output of a cell marked ``# NBVAL_CHECK_OUTPUT`` (or tagged
    ``nbval-check-output``); the browser run does not, so such a notebook keeps its nbval cells."""
    import browserkit
    import nbformat

    monkeypatch.setattr(browserkit, "browser_missing", lambda: None)
    monkeypatch.delenv("DECODELAB_BROWSER_NOTEBOOKS", raising=False)
    plain, marked, tagged = "02_prefill_vs_decode", "03_agent_loops", "05_chips"
    cells = {plain: nbformat.v4.new_code_cell("print(1)"),
             marked: nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)"),
             tagged: nbformat.v4.new_code_cell("print(1)", metadata={"tags": ["nbval-check-output"]})}
    for stem, cell in cells.items():
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / f"{stem}.ipynb")
    monkeypatch.setattr(browserkit, "course_notebooks", lambda: sorted(tmp_path.glob("*.ipynb")))
    ids = {root.BROWSER_RUN.format(stem=stem) for stem in cells}
    assert root.runs_elsewhere(_Config, ids) == {f"notebooks/{plain}.ipynb": root.BROWSER_RUN.format(stem=plain)}


def test_the_leak_tests_run_stands_in_for_nbval_when_no_browser_run_takes_the_notebook(monkeypatch):
    """tests/test_prediction_leaks.py runs each notebook top to bottom with nbclient (a failing cell
    fails it, as nbval-lax would): with Chromium missing, its run of 04b deselects 04b's nbval cells
    only; a saved execution (DECODELAB_EXECUTED_NOTEBOOKS) may stand in for that run, so then not."""
    import browserkit

    monkeypatch.setattr(browserkit, "browser_missing", lambda: "no Chromium")
    monkeypatch.delenv("DECODELAB_EXECUTED_NOTEBOOKS", raising=False)
    leak = root.LEAK_RUN.format(nb="04b")
    assert leak.startswith("tests/test_prediction_leaks.py::test_nothing_printed_or_shown_answers_a_prediction_before_its_reveal[")
    assert root.runs_elsewhere(_Config, {leak}) == {"notebooks/04b_speculative_speedup.ipynb": leak}
    assert root.runs_elsewhere(_Config, {root.LEAK_RUN.format(nb="04")}) == {
        "notebooks/04_speculative_decoding.ipynb": root.LEAK_RUN.format(nb="04")}
    monkeypatch.setenv("DECODELAB_EXECUTED_NOTEBOOKS", "/saved")
    assert root.runs_elsewhere(_Config, {leak}) == {}


def test_browser_missing_names_what_to_install(monkeypatch):
    import browserkit

    monkeypatch.setattr(browserkit, "CHROMIUM", "/no/such/chromium")
    assert "no Chromium at /no/such/chromium" in browserkit.browser_missing()


class _SchedConfig:
    """What pytest-xdist's scheduler reads of the config: ``-n <workers>`` with ``--dist load``."""

    def __init__(self, workers: int):
        self.option = type("Option", (), {"loadscopereorder": True})()
        self._values = {"dist": "load", "tx": [f"{workers}*popen"]}

    def getvalue(self, name):
        return self._values[name]


class _Node:
    """A worker as the scheduler sees it: it records the tests it is sent."""

    def __init__(self, name):
        self.name, self.sent, self.shutting_down = name, [], False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices):
        self.sent.append(indices)

    def shutdown(self):
        self.shutting_down = True


UNITS = [  # in the collection's order (browser modules first, then slow ones, then the rest)
    "tests/test_browser.py::test_notebook_in_jupyterlab[02_prefill_vs_decode]",
    "tests/test_browser.py::test_notebook_in_jupyterlab[05_chips]",
    "tests/test_browser_slides.py::test_a",
    "tests/test_speculative.py::test_a",
    "tests/test_classroom_hub.py::test_a",
    "tests/test_quiz.py::test_a",
]


def _first_units(workers: int) -> list[list[str]]:
    """The tests each of ``workers`` fake workers is sent when the run starts, in order."""
    sched = root.pytest_xdist_make_scheduler(_SchedConfig(workers), log=None)
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, UNITS)
    sched.schedule()
    return [[UNITS[i] for batch in node.sent for i in batch] for node in nodes]


def test_the_first_half_of_the_workers_take_the_browser_units_and_the_others_the_rest():
    assert [root.browser_lane(i, 2) for i in range(2)] == [True, False]
    assert [root.browser_lane(i, 3) for i in range(3)] == [True, True, False]
    assert root.browser_lane(0, 1)
    two = _first_units(2)  # two units each to start with
    assert two == [UNITS[0:2], UNITS[3:5]], two
    # three workers: two browser lanes; the second one's browser lane is dry at its second unit
    assert _first_units(3) == [[UNITS[0], UNITS[2]], [UNITS[1], UNITS[4]], [UNITS[3], UNITS[5]]]
    # a lane that runs dry takes the other lane's units: one worker gets everything, in order
    assert _first_units(1) == [UNITS[0:2]]
