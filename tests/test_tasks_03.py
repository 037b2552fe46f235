"""Notebook 03's change-the-code task (``03-task-under-130s``): the check fails on the notebook's
unmodified values and passes on a reference solution kept here.

The task's numbers go through the same decodelab calls as the notebook's check cell; the edit cell's
starting values are read from the notebook source, so the test follows the notebook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_task_defined, edit_cell_source

from decodelab import latency as lat
from decodelab import profiles as P
from decodelab.teach.widgets import latency as W

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "src" / "03_agent_loops.md"
TASK_ID = "03-task-under-130s"  # also the task of the `passes` fixture (tests/conftest.py)


def test_the_task_is_defined_as_the_notebook_uses_it():
    assert_task_defined(TASK_ID, "<", 130, SOURCE)  # the goal: under 130 s


@pytest.mark.parametrize("op, value, notebook", [("<", 131, "03_agent_loops.md"), ("<=", 130, "03_agent_loops.md"),
                                                 ("<", 130, "05_chips.md")])
def test_the_definition_check_catches_another_goal_or_notebook(op, value, notebook):
    with pytest.raises(AssertionError):
        assert_task_defined(TASK_ID, op, value, SOURCE.parent / notebook)


def _edit_cell() -> str:
    return edit_cell_source(SOURCE, "03")


def _task_total_s(decode_ms_per_token: float, speculative) -> float:
    """The notebook's check cell: 50 calls x 300 tokens + 2 s tool, H100 roofline prefill rate."""
    m = P.get_model("Llama-3-70B", "fp8")
    h100 = {p.label: p for p in W.rate_presets(m)}["H100 SXM (루프라인)"]
    task = lat.agent_loop(50, 300, 2000, decode_ms_per_token=decode_ms_per_token, speculative=speculative,
                          prefill_tokens_per_s=h100.prefill_tokens_per_s, initial_context_tokens=4000,
                          context_growth_per_call=1000)
    return task.total_s


def test_the_unmodified_cell_does_not_reach_the_goal(passes):
    ns: dict = {"lat": lat}
    exec(_edit_cell(), ns)
    assert ns["decode_ms_per_token"] == pytest.approx(21.9) and ns["speculative"] is None
    total = _task_total_s(ns["decode_ms_per_token"], ns["speculative"])
    # 50 calls x (299 x 21.9 ms + 2 s) + prefill of 4,000 + 49 x 1,000 tokens at the H100 roofline rate
    prefill_s = 53000 / {p.label: p for p in W.rate_presets()}["H100 SXM (루프라인)"].prefill_tokens_per_s
    assert total == pytest.approx(50 * (299 * 0.0219 + 2) + prefill_s)
    assert total == pytest.approx(431.47, abs=0.01)
    assert not passes(total)


def test_reference_solutions_reach_the_goal(passes):
    # the decode rate NVIDIA claims for Rubin + Groq 3 LPX: 50 x (0.299 + 2) + 4.07 s prefill
    assert _task_total_s(1.0, None) == pytest.approx(119.02, abs=0.01)
    assert passes(_task_total_s(1.0, None))
    # Rubin's roofline with speculative decoding (Leviathan et al.'s setting, x3.16)
    rubin = {p.label: p for p in W.rate_presets()}["Rubin (루프라인)"].decode_ms_per_token
    spec = lat.SpeculativeConfig(alpha=0.75, gamma=7, c=0.02)
    assert passes(_task_total_s(rubin, spec))


def test_one_lever_alone_is_not_enough(passes):
    rubin = {p.label: p for p in W.rate_presets()}["Rubin (루프라인)"].decode_ms_per_token
    assert not passes(_task_total_s(rubin, None))  # ~153 s
    h100 = {p.label: p for p in W.rate_presets()}["H100 SXM (루프라인)"].decode_ms_per_token
    assert not passes(_task_total_s(h100, lat.SpeculativeConfig(alpha=0.75, gamma=7, c=0.02)))  # ~208 s
    assert not passes(_task_total_s(0.0, None) + 30.0)  # the floor: 100 s of tools + 4 s prefill
