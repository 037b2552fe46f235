"""Notebook 02's change-the-code task: its check fails on the notebook's code and passes on a solution.

The task's code goes through the same decodelab call the notebook uses (the roofline decode step
of Llama-3-8B BF16 on one H100, empty context); the goal is the ``check`` of
``quizzes/exercises/02.yaml``.
"""

from __future__ import annotations

import operator
from pathlib import Path

import pytest
import yaml

from decodelab import latency as lat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "src" / "02_prefill_vs_decode.md"
UNMODIFIED_B = 1      # what the notebook's ✏️ cell holds
SOLUTION_B = 256      # a reference solution: still memory-bound, 256 tokens per weight read

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def task(task_id: str) -> dict:
    data = yaml.safe_load((ROOT / "quizzes" / "exercises" / "02.yaml").read_text(encoding="utf-8"))
    return next(t for t in data["tasks"] if t["id"] == task_id)


def goal_reached(check: dict, value) -> bool:
    op, target = check["op"], check["value"]
    if op == "between":
        return target[0] <= value <= target[1]
    if op == "in":
        return value in target
    return OPS[op](value, target)


def throughput(batch: int) -> float:
    # the notebook's check cell
    m8 = lat.get_model("Llama-3-8B", "bf16")
    e = lat.decode_step(m8, "H100", 0, batch)
    return batch * 1000 / e.ms


def test_notebook_holds_the_unmodified_batch():
    text = NOTEBOOK.read_text(encoding="utf-8")
    assert "# ✏️ 여기를 바꾸세요\nB = 1\n" in text
    assert 'ex.check("02-task-batch-throughput", throughput)' in text


@pytest.mark.parametrize("batch, reached", [(UNMODIFIED_B, False), (SOLUTION_B, True)])
def test_batch_throughput_task(batch, reached):
    value = throughput(batch)
    assert goal_reached(task("02-task-batch-throughput")["check"], value) is reached, value


def test_hand_computed_throughput():
    # batch 1: weights 16.06 GB / 3.35 TB/s = 4.79 ms -> 208.6 tokens/s; batch 256 reads the same
    # bytes (empty context) and is still memory-bound: 256x that
    assert throughput(1) == pytest.approx(208.6, rel=1e-3)
    assert throughput(256) == pytest.approx(256 * throughput(1), rel=1e-9)
