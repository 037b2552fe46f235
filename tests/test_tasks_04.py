"""Notebook 04b's change-the-code task (its id keeps the 04- prefix): the check fails on the notebook's unmodified cell and
passes on a reference solution kept here.

The task cell (the one marked ``# ✏️ 여기를 바꾸세요``) and the check cell are read from the
notebook's source, so the test runs exactly the decodelab calls the notebook makes.
"""

from __future__ import annotations

import importlib.util
import operator
import re
from pathlib import Path

import pytest
import yaml
from conftest import assert_task_defined

from decodelab import speculative as spec

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "src" / "04b_speculative_speedup.md"  # the task is in 04b since the split
EXERCISES = REPO / "quizzes" / "exercises" / "04b.yaml"
TASK_ID = "04-task-low-acceptance"
MARK = "# ✏️ 여기를 바꾸세요"

#: A reference solution: a prompt unlike the Korean text both models were trained on.
REFERENCE = {"task_prompt": "hello world xyz"}


def _code_cells() -> list[str]:
    text = SOURCE.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(r"```\{code-cell\}\n(?:---\n.*?\n---\n)?(.*?)```", text, re.S)]


def _task_cells() -> tuple[str, str]:
    cells = _code_cells()
    (i,) = [k for k, c in enumerate(cells) if c.lstrip().startswith(MARK)]
    assert TASK_ID in cells[i + 1], "the cell after the task cell must be its check cell"
    return cells[i], cells[i + 1]


def _task() -> dict:
    data = yaml.safe_load(EXERCISES.read_text(encoding="utf-8"))
    (task,) = [t for t in data["tasks"] if t["id"] == TASK_ID]
    return task


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def _goal_reached(value: float) -> bool:
    check = _task()["check"]
    return _OPS[check["op"]](value, check["value"])


def _acceptance(pair, overrides: dict | None = None) -> float:
    """Run the notebook's task cell (with ``overrides`` applied after it) and the same
    speculative_generate call as its check cell; return the value the check cell checks."""
    edit, check_cell = _task_cells()
    ns = {"draft": pair.draft, "target": pair.target, "tok": pair.tokenizer, "spec": spec}
    exec("from decodelab.proposers import NGramProposer", ns)
    exec(edit, ns)
    ns.update(overrides or {})
    call = check_cell.split("\nprint(")[0]  # the speculative_generate assignment
    exec(call, ns)
    assert "task_result.acceptance_rate" in check_cell
    return ns["task_result"].acceptance_rate


def test_the_task_definition_matches_the_contract():
    assert_task_defined(TASK_ID, "<", 0.3, SOURCE)  # the goal: acceptance rate under 0.3
    task = _task()
    assert task["goal"] and task["success"] and task["hint"]
    # the hint must not give the reference solution away
    assert REFERENCE["task_prompt"] not in task["hint"] and "hello" not in task["hint"].lower()


def test_unmodified_cell_does_not_reach_the_goal(pair):
    value = _acceptance(pair)
    assert value >= 0.3, value
    assert not _goal_reached(value)


def test_reference_solution_reaches_the_goal(pair):
    value = _acceptance(pair, REFERENCE)
    assert value < 0.3, value
    assert _goal_reached(value)


@pytest.mark.skipif(importlib.util.find_spec("decodelab.assess.exercises") is None, reason="decodelab.assess.exercises not there yet")
def test_ex_check_agrees(pair, tmp_path, monkeypatch):
    monkeypatch.setenv("DECODELAB_ANSWERS_DIR", str(tmp_path))
    from decodelab.assess import exercises as ex

    assert ex.check(TASK_ID, _acceptance(pair)) is False
    assert ex.check(TASK_ID, _acceptance(pair, REFERENCE)) is True
