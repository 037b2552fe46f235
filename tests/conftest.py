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
