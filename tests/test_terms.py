"""One term per concept: no non-preferred variant listed in GLOSSARY.md appears in the course.

GLOSSARY.md's term table has a column "쓰지 않는 말" with backticked variants per concept, and a
second table "쓰지 않는 표현" of calques. Every backticked variant in either is searched for, as a
plain substring, in the notebook sources (``notebooks/src/*.md``: markdown, code, strings and
comments) and in the quiz and exercise files (``quizzes/*.yaml``, ``quizzes/exercises/*.yaml``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "GLOSSARY.md"
VARIANT_COLUMN = "쓰지 않는 말"
CALQUE_COLUMN = "쓰지 않는 표현"


def _tables(text: str) -> list[list[list[str]]]:
    """Markdown tables of ``text`` as lists of rows of stripped cells (header row first)."""
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def glossary_variants(text: str) -> dict[str, str]:
    """Non-preferred variant -> the preferred term (or replacement) it stands for."""
    variants: dict[str, str] = {}
    for table in _tables(text):
        header = table[0]
        for column in (VARIANT_COLUMN, CALQUE_COLUMN):
            if column not in header:
                continue
            col = header.index(column)
            for row in table[1:]:
                preferred = row[0] if col != 0 else row[1]
                for variant in re.findall(r"`([^`]+)`", row[col]):
                    variants[variant] = preferred
    return variants


def find_variants(text: str, variants: dict[str, str]) -> list[str]:
    """``"line N: 'variant' -> use 'preferred'"`` for each occurrence in ``text``."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for variant, preferred in variants.items():
            if variant in line:
                found.append(f"line {n}: {variant!r} -> {preferred!r}: {line.strip()[:80]}")
    return found


VARIANTS = glossary_variants(GLOSSARY.read_text(encoding="utf-8"))
COURSE_FILES = sorted(
    [*ROOT.glob("notebooks/src/*.md"), *ROOT.glob("quizzes/*.yaml"), *ROOT.glob("quizzes/exercises/*.yaml")]
)


def test_glossary_lists_the_decided_variants():
    # the clashes decided in GLOSSARY.md are all listed (a parsing slip would make the check vacuous)
    for variant, preferred in {
        "문맥": "맥락", "과제": "작업", "조밀": "밀집", "고정 비용": "부대 비용", "병렬 패스": "순전파",
        "판정한 자리": "판정", "자리마다": "위치", "초안 모델 호출": "순전파", "검증 패스": "검증",
        "수락률과 상관없이": "수락률",
        "맥락 처리": "프리필", "메인 모델": "대상 모델", "수정 토큰": "복구 토큰", "단계마다": "스텝 (디코드 스텝)",
        "에이전트 단계": "호출 (모델 호출)", "운이 없습니다": "무작위성이 없습니다",
    }.items():
        assert VARIANTS.get(variant) == preferred, variant
    assert len(VARIANTS) >= 30


def test_variants_never_hit_a_preferred_term():
    # a variant that is part of a preferred term would flag correct text (false positive)
    preferred_terms = set()
    for table in _tables(GLOSSARY.read_text(encoding="utf-8")):
        if VARIANT_COLUMN in table[0]:
            preferred_terms |= {row[0] for row in table[1:]} | {row[1] for row in table[1:]}
    for variant in VARIANTS:
        hits = [t for t in preferred_terms if variant in t]
        assert not hits, (variant, hits)


def test_overhead_is_allowed_beside_its_korean_term():
    # real documentation says "오버헤드": the glossary allows it (decided 2026-12), so it is no variant
    assert "오버헤드" not in VARIANTS
    assert find_variants("순전파마다 붙는 부대 비용(오버헤드, overhead)", VARIANTS) == []
    glossary = GLOSSARY.read_text(encoding="utf-8")
    assert "\"오버헤드\"도 쓸 수 있습니다" in glossary


def test_the_decisions_are_recorded_in_prose():
    glossary = GLOSSARY.read_text(encoding="utf-8")
    for decision in ("검증과 판정", "위치와 자리", "호출은 에이전트의 모델 호출에만", "수락률과 상관없이"):
        assert decision in glossary, decision


def test_the_check_finds_a_planted_variant():
    text = "디코드 단계에서는 스텝마다 토큰 하나를 만듭니다.\n이 문맥에서 KV 캐시는 자랍니다.\n"
    found = find_variants(text, VARIANTS)
    assert len(found) == 1 and found[0].startswith("line 2: '문맥' -> '맥락'")
    assert find_variants("프리필 단계와 디코드 단계, 그리고 디코드 스텝 시간", VARIANTS) == []


@pytest.mark.parametrize("path", COURSE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_non_preferred_variant(path):
    found = find_variants(path.read_text(encoding="utf-8"), VARIANTS)
    assert not found, f"{path.relative_to(ROOT)}: GLOSSARY.md의 '쓰지 않는 말'이 있습니다:\n" + "\n".join(found)
