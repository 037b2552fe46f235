"""Notebook 01's change-the-code task: its check fails on the notebook's code and passes on a solution.

The task's code is run through the same decodelab calls the notebook uses, and the goal is decided
by the notebook's own check call, ``ex.check("01-task-flatten", value)`` (``quizzes/exercises/01.yaml``),
with answers saved in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_task_defined

import decodelab
from decodelab.assess import exercises as ex
from decodelab.sampling import SamplingConfig, probabilities

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "src" / "01_decode_phase.md"
UNMODIFIED = dict(temperature=1.0)      # what the notebook's ✏️ cell holds
SOLUTION = dict(temperature=3.0)        # a reference solution (kept here, not in the notebook)


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


def test_the_task_is_defined_as_the_notebook_uses_it():
    assert_task_defined("01-task-flatten", "<", 0.3, NOTEBOOK)  # the goal: top probability under 0.3


@pytest.mark.parametrize("setting, reached", [(UNMODIFIED, False), (SOLUTION, True)])
def test_flatten_task(pair, setting, reached, tmp_path):
    value = top_probability(pair, setting)
    assert ex.check("01-task-flatten", value, answers_dir=tmp_path) is reached, value


def test_other_knobs_do_not_flatten(pair):
    # top-k and top-p only cut the tail and renormalise: the top token gets MORE probable
    base = top_probability(pair, UNMODIFIED)
    assert top_probability(pair, dict(temperature=1.0, top_k=5)) >= base
    assert top_probability(pair, dict(temperature=1.0, top_p=0.5)) >= base
