"""Shared fixtures: the bundled model pair and the browser tests' JupyterLab server are each started
once per test process (Chromium too, while browser tests follow one another). The session-wide
settings (temporary answers folder, one torch thread, offline) are in the repository's top-level
conftest.py.

Markers (pyproject.toml, ``--strict-markers``): ``browser`` (JupyterLab in Chromium), ``classroom``
(JupyterHub or nbgrader end to end), ``slow``. Tests that share a server carry
``pytest.mark.xdist_group``: every browser module the group ``jupyterlab`` (one JupyterLab server
and one Chromium, and a notebook run saved by one test is opened again by another), each classroom
module a group of its own (its hub or nbgrader course is a module fixture); ``bash course.sh test``
runs pytest-xdist with ``--dist loadgroup``. :func:`pytest_collection_modifyitems` refuses a test
that uses the browser fixtures without the ``browser`` marker, or whose module starts a JupyterHub
without the ``classroom`` marker, so ``-m "not browser and not classroom"`` (``--quick``) leaves
them out.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

# helper modules of tests/ (not test modules): their asserts get pytest's messages too
pytest.register_assert_rewrite("browserkit", "hubkit", "demo_notebooks")

#: Korean prompts used across tests (none is special-cased anywhere in the package).
PROMPTS = [
    "대한민국은 민주공화국이다.",
    "문서를 저장하려면",
    "표의 셀을 선택한 다음",
    "데비안 패키지는",
    "국회는 법률을",
    "이 대화 상자에서",
    "글꼴 크기를 바꾸려면",
    "모든 국민은",
    "슬라이드 쇼를 시작하려면",
    "스프레드시트에서 함수를",
]


@pytest.fixture(scope="session")
def pair():
    import torch

    torch.manual_seed(0)
    from decodelab.models import bundled

    return bundled()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """One JupyterLab server for all browser tests (see tests/browserkit.py)."""
    import browserkit

    yield from browserkit.start_lab_server(tmp_path_factory)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (skipped without Chromium, except under CI): one per process, kept from one
    browser test to the next, with the JupyterLab pages it loaded (tests/browserkit.py,
    :func:`browserkit.shared_browser`); closed before the first test that is not a browser test
    (the repository's conftest.py) and at the end of the session."""
    import browserkit

    return browserkit.shared_browser()


#: the course notebooks whose browser run (tests/test_browser.py) another browser test opens again
#: (notebook 01: the exercise test; 03: tests/test_browser_presentation.py; 04:
#: tests/test_browser_slides.py): that run keeps its kernel and is saved (``run_notebook_once``)
REOPENED_NOTEBOOKS = {"01_decode_phase.ipynb", "03_agent_loops.ipynb", "04_speculative_decoding.ipynb"}


@pytest.fixture
def reopened(request) -> bool:
    """Whether another browser test opens this test's notebook run again (``REOPENED_NOTEBOOKS``,
    by the test's ``notebook`` parameter, a path)."""
    notebook = getattr(getattr(request.node, "callspec", None), "params", {}).get("notebook")
    return notebook is not None and Path(notebook).name in REOPENED_NOTEBOOKS


#: what a test needs its marker for: fixtures, and calls in its module's source
_NEEDS_MARK = {"browser": ({"browser", "lab_server"}, ()), "classroom": (set(), ("start_hub(",))}


def pytest_collection_modifyitems(config, items) -> None:
    """Refuse (a usage error naming the tests) a test that uses the browser fixtures but lacks the
    ``browser`` marker, or whose module starts a JupyterHub (``hubkit.start_hub``) but lacks the
    ``classroom`` marker: ``-m "not browser and not classroom"`` must leave them out; either also
    needs an ``xdist_group``, so the tests that share its server run on one worker."""
    sources: dict[str, str] = {}
    unmarked = []
    for item in items:
        module = getattr(item, "module", None)
        if module is None:  # an nbval cell
            continue
        if module.__name__ not in sources:
            try:
                sources[module.__name__] = inspect.getsource(module)
            except (OSError, TypeError):
                sources[module.__name__] = ""
        for mark, (fixtures, calls) in _NEEDS_MARK.items():
            needs = fixtures & set(item.fixturenames) or any(c in sources[module.__name__] for c in calls)
            if needs and not item.get_closest_marker(mark):
                unmarked.append(f"{item.nodeid}: needs @pytest.mark.{mark} (pytestmark at module level)")
            if needs and not item.get_closest_marker("xdist_group"):  # its module's tests share one server
                unmarked.append(f"{item.nodeid}: needs pytest.mark.xdist_group(...) (pytestmark at module level), "
                                "so --dist loadgroup keeps the tests that share its server on one worker")
    if unmarked:
        raise pytest.UsageError("tests that start a server without their marker:\n" + "\n".join(unmarked))


@pytest.fixture(scope="session")
def prompts():
    return list(PROMPTS)


# --- change-the-code tasks (tests/test_tasks_NN.py) ---------------------------------------------

def task_decider(task_id: str, answers_dir):
    """The notebook's check (``ex.check``) as a callable ``value -> bool``: decodelab.assess.exercises
    decides and records into ``answers_dir``; the shown text says success or hint, never the solution."""
    from decodelab.assess import exercises as ex

    quizzes = Path(__file__).resolve().parents[1] / "quizzes"

    def decide(value) -> bool:
        ok, html = ex.check_record(task_id, value, quizzes_dir=quizzes, answers_dir=answers_dir)
        assert ("목표 달성" in html) is ok and (("💡" in html) is (not ok))
        return ok

    return decide


@pytest.fixture
def passes(request, tmp_path):
    """:func:`task_decider` for the task ``TASK_ID`` of the requesting test module, recording into
    ``tmp_path``."""
    return task_decider(request.module.TASK_ID, tmp_path)


def edit_cell_source(source, notebook: str) -> str:
    """The code of the cell marked ``# ✏️ 여기를 바꾸세요`` in a notebook's MyST source."""
    import re

    m = re.search(r"# ✏️ 여기를 바꾸세요\n(.*?)```", source.read_text(encoding="utf-8"), re.S)
    assert m, f"노트북 {notebook}에 '✏️ 여기를 바꾸세요' 셀이 없습니다"
    return m.group(1)


def question_texts(q) -> list[str]:
    """Every student-visible string of a quiz question (prompt, choices, items, answers, explanations)."""
    data = q.model_dump(exclude={"source", "id", "kind", "points"})
    out: list[str] = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(data)
    return out


#: Exercise definitions for notebook 01 used by tests/test_exercises.py and tests/test_edge_cases.py:
#: two predictions (number, choice), one written answer, and tasks with the ``<``, ``between``
#: and ``in`` checks.
EXERCISE_DEFS_01 = """\
notebook: "01"
predictions:
  - id: 01-predict-kv-step
    prompt: "KV 캐시를 켜면 위치 60에서 디코드 한 스텝은 몇 ms일까요?"
    kind: number
    unit: "ms"
    why: "캐시가 있으면 새 토큰 하나만 계산하므로 스텝 시간이 거의 일정합니다."
  - id: 01-predict-curve
    prompt: "캐시 없이 위치가 늘면 스텝 시간은 어떤 모양일까요?"
    kind: choice
    choices:
      - {id: a, text: "평평하다"}
      - {id: b, text: "위치에 따라 늘어난다"}
    why: "캐시가 없으면 매 스텝 앞의 토큰 전체를 다시 계산합니다."
written:
  - id: 01-written-decode-definition
    prompt: "디코드 단계를 한 문장으로, 내 말로 설명하세요."
    rubric: ["토큰을 하나씩 만든다", "방금 만든 토큰을 다음 입력으로 쓴다"]
    model_answer: "디코드 단계는 방금 만든 토큰을 입력으로 다음 토큰을 하나씩 만드는 반복입니다."
tasks:
  - id: 01-task-low-rate
    goal: "수락률을 0.3 아래로 만드세요."
    check: {op: "<", value: 0.3}
    success: "초안 모델이 대상 모델과 멀수록 수락률이 떨어집니다."
    hint: "초안 모델이 대상 모델과 얼마나 비슷한지 생각해 보세요."
  - id: 01-task-band
    goal: "스텝 시간을 10~20 ms 사이로 맞추세요."
    check: {op: between, value: [10, 20]}
    success: "맞췄습니다."
    hint: "배치 크기를 바꿔 보세요."
  - id: 01-task-mode
    goal: "탐욕 또는 top-k 디코딩을 고르세요."
    check: {op: in, value: ["greedy", "top-k"]}
    success: "좋습니다."
    hint: "온도를 쓰지 않는 방법입니다."
"""


def quizzes_with_exercises(tmp_path, monkeypatch, defs_01: str = EXERCISE_DEFS_01) -> Path:
    """A copy of the real quiz folder whose only exercise file is ``01.yaml`` = ``defs_01``, with
    ``DECODELAB_QUIZZES`` and a private ``DECODELAB_ANSWERS_DIR`` pointed at ``tmp_path``."""
    import shutil

    q = tmp_path / "quizzes"
    shutil.copytree(Path(__file__).resolve().parents[1] / "quizzes", q, ignore=shutil.ignore_patterns("exercises"))
    (q / "exercises").mkdir()
    (q / "exercises" / "01.yaml").write_text(defs_01, encoding="utf-8")
    monkeypatch.setenv("DECODELAB_QUIZZES", str(q))
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path / "answers"))
    return q


def assert_task_defined(task_id: str, op: str, value, source: Path) -> None:
    """Check that ``quizzes/exercises/NN.yaml`` defines the change-the-code task ``task_id`` with
    the goal ``check: {op, value}`` the test's reference numbers assume, and that the notebook
    source ``source`` calls ``ex.check("<task_id>", ...)``.

    Raises:
        AssertionError: the definition's ``op`` or ``value`` differs, or the notebook has no such call.
    """
    from decodelab.assess import exercises as ex

    task = ex.get_exercise(task_id, Path(__file__).resolve().parents[1] / "quizzes")
    assert (task.check.op, task.check.value) == (op, value), (task_id, task.check)
    assert f'ex.check("{task_id}"' in source.read_text(encoding="utf-8"), f"{source.name} has no ex.check({task_id!r}, ...)"
