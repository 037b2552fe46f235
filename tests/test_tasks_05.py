"""Notebook 05's change-the-code task (``05-task-kv-under-30ms``): the check fails on the notebook's
unmodified values and passes on a reference solution kept here.

The transfer time goes through the same decodelab calls as the notebook's check cell; the edit
cell's starting values are read from the notebook source.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_task_defined, edit_cell_source

from decodelab import latency as lat
from decodelab import profiles as P

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "src" / "05_chips.md"
TASK_ID = "05-task-kv-under-30ms"  # also the task of the `passes` fixture (tests/conftest.py)


def test_the_task_is_defined_as_the_notebook_uses_it():
    assert_task_defined(TASK_ID, "<", 30, SOURCE)  # the goal: under 30 ms


def _edit_cell() -> dict:
    ns: dict = {}
    exec(edit_cell_source(SOURCE, "05"), ns)
    return ns


def _transfer_ms(weights_dtype: str, kv_dtype: str) -> float:
    """The notebook's check cell: 8,192 tokens of Llama-3-70B KV over one 400 Gb/s NIC."""
    mine = P.get_model("Llama-3-70B", weights_dtype, kv_dtype=kv_dtype)
    return lat.kv_transfer_ms(mine, 8192, "400G-NIC")


def test_the_unmodified_cell_does_not_reach_the_goal(passes):
    ns = _edit_cell()
    assert (ns["weights_dtype"], ns["kv_dtype"]) == ("fp8", "bf16")
    ms = _transfer_ms(ns["weights_dtype"], ns["kv_dtype"])
    # 8192 x 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 2.684 GB / 50 GB/s (facts/hardware.md: ~54 ms)
    assert ms == pytest.approx(8192 * 2 * 80 * 8 * 128 * 2 / 50e9 * 1e3)
    assert ms == pytest.approx(53.69, abs=0.01)
    assert not passes(ms)


def test_reference_solution_reaches_the_goal(passes):
    ms = _transfer_ms("fp8", "fp8")  # an FP8 KV cache halves the bytes per token
    assert ms == pytest.approx(26.84, abs=0.01)
    assert passes(ms)


def test_the_weights_format_does_not_change_the_transfer(passes):
    assert _transfer_ms("bf16", "bf16") == pytest.approx(_transfer_ms("fp8", "bf16"))
    assert not passes(_transfer_ms("bf16", "bf16"))
