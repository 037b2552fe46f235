"""Notebook 01's change-the-code task: its check fails on the notebook's code and passes on a solution.

The task's code is run through the same decodelab calls the notebook uses; the goal is the
``check`` of ``quizzes/exercises/01.yaml`` (evaluated by ``decodelab.exercises`` when it is
importable, otherwise by the operator table below, which follows the contract's ops).
"""

from __future__ import annotations

import operator
from pathlib import Path

import pytest
import torch
import yaml

import decodelab
from decodelab.sampling import SamplingConfig, probabilities

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "src" / "01_decode_phase.md"
UNMODIFIED = dict(temperature=1.0)      # what the notebook's ✏️ cell holds
SOLUTION = dict(temperature=3.0)        # a reference solution (kept here, not in the notebook)

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def task(task_id: str) -> dict:
    data = yaml.safe_load((ROOT / "quizzes" / "exercises" / "01.yaml").read_text(encoding="utf-8"))
    return next(t for t in data["tasks"] if t["id"] == task_id)


def goal_reached(check: dict, value) -> bool:
    op, target = check["op"], check["value"]
    if op == "between":
        return target[0] <= value <= target[1]
    if op == "in":
        return value in target
    return OPS[op](value, target)


def top_probability(pair, setting: dict) -> float:
    # the notebook's cells: the logits after "문서를 저장하려면", then the setting's distribution
    tok = pair.tokenizer
    ids = tok("문서를 저장하려면", add_special_tokens=False)["input_ids"]
    logits = decodelab.prefill(pair.target, torch.tensor([ids])).logits
    cfg = SamplingConfig(**setting)
    return float(torch.softmax(logits, -1).max() if cfg.greedy else probabilities(logits, cfg).max())


def test_notebook_holds_the_unmodified_setting():
    text = NOTEBOOK.read_text(encoding="utf-8")
    assert "# ✏️ 여기를 바꾸세요\nmy_setting = dict(temperature=1.0)\n" in text
    assert 'ex.check("01-task-flatten", p_top)' in text


@pytest.mark.parametrize("setting, reached", [(UNMODIFIED, False), (SOLUTION, True)])
def test_flatten_task(pair, setting, reached):
    check = task("01-task-flatten")["check"]
    value = top_probability(pair, setting)
    assert goal_reached(check, value) is reached, value


def test_other_knobs_do_not_flatten(pair):
    # top-k and top-p only cut the tail and renormalise: the top token gets MORE probable
    base = top_probability(pair, UNMODIFIED)
    assert top_probability(pair, dict(temperature=1.0, top_k=5)) >= base
    assert top_probability(pair, dict(temperature=1.0, top_p=0.5)) >= base
