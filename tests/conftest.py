"""Shared fixtures: the bundled model pair is loaded once per test session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

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
def prompts():
    return list(PROMPTS)


# --- change-the-code tasks (tests/test_tasks_NN.py) ---------------------------------------------

def task_decider(task_id: str, answers_dir):
    """The notebook's check (``ex.check``) as a callable ``value -> bool``: decodelab.exercises
    decides and records into ``answers_dir``; the shown text says success or hint, never the solution."""
    from pathlib import Path

    from decodelab import exercises as ex

    quizzes = Path(__file__).resolve().parents[1] / "quizzes"

    def decide(value) -> bool:
        ok, html = ex.check_record(task_id, value, quizzes_dir=quizzes, answers_dir=answers_dir)
        assert ("목표 달성" in html) is ok and (("💡" in html) is (not ok))
        return ok

    return decide


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
