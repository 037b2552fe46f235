"""Notebook 02's change-the-code task: its check fails on the notebook's code and passes on a solution.

The task's code goes through the same decodelab call the notebook uses (the roofline decode step
of Llama-3-8B BF16 on one H100, empty context), and the goal is decided by the notebook's own check
call, ``ex.check("02-task-batch-throughput", value)`` (``quizzes/exercises/02.yaml``), with answers
saved in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_task_defined

from decodelab.assess import exercises as ex
from decodelab import latency as lat
from decodelab import profiles as P

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "src" / "02_prefill_vs_decode.md"
UNMODIFIED_B = 1      # what the notebook's ✏️ cell holds
SOLUTION_B = 256      # a reference solution: still memory-bound, 256 tokens per weight read


def throughput(batch: int) -> float:
    # the notebook's check cell
    m8 = P.get_model("Llama-3-8B", "bf16")
    e = lat.estimate_decode_step(m8, "H100", 0, batch)
    return batch * 1000 / e.ms


def test_notebook_holds_the_unmodified_batch():
    text = NOTEBOOK.read_text(encoding="utf-8")
    assert "# ✏️ 여기를 바꾸세요\nB = 1\n" in text
    assert 'ex.check("02-task-batch-throughput", throughput)' in text


def test_the_task_is_defined_as_the_notebook_uses_it():
    assert_task_defined("02-task-batch-throughput", ">", 50000, NOTEBOOK)  # the goal: over 50,000 tokens/s


@pytest.mark.parametrize("batch, reached", [(UNMODIFIED_B, False), (SOLUTION_B, True)])
def test_batch_throughput_task(batch, reached, tmp_path):
    value = throughput(batch)
    assert ex.check("02-task-batch-throughput", value, answers_dir=tmp_path) is reached, value


def test_hand_computed_throughput():
    # batch 1: weights 16.06 GB / 3.35 TB/s = 4.79 ms -> 208.6 tokens/s; batch 256 reads the same
    # bytes (empty context) and is still memory-bound: 256x that
    assert throughput(1) == pytest.approx(208.6, rel=1e-3)
    assert throughput(256) == pytest.approx(256 * throughput(1), rel=1e-9)
