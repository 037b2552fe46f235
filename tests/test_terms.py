"""One term per concept: no non-preferred variant listed in GLOSSARY.md appears in the course.

GLOSSARY.md's term table has a column "쓰지 않는 말" with backticked variants per concept, and a
second table "쓰지 않는 표현" of calques. Every backticked variant in either is searched for, as a
plain substring, in the notebook sources (``notebooks/src/*.md``: markdown, code, strings and
comments), in the quiz, exercise and exam files (``quizzes/*.yaml``, ``quizzes/exercises/*.yaml``,
``classroom/exam/*.yaml``), and in the Korean string literals of the package's widgets and
assessment code (``decodelab/teach/widgets/*.py``, ``decodelab/assess/**/*.py``, read with
:mod:`ast`: what those widgets and graders show a student, f-strings' literal parts included).
"""

from __future__ import annotations

import ast
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
    [*ROOT.glob("notebooks/src/*.md"), *ROOT.glob("quizzes/*.yaml"), *ROOT.glob("quizzes/exercises/*.yaml"),
     *ROOT.glob("classroom/exam/*.yaml")]
)
#: package code whose strings a student sees (widgets, exercise and quiz views, reports)
SHOWN_CODE = sorted([*ROOT.glob("decodelab/teach/widgets/*.py"), *ROOT.glob("decodelab/assess/**/*.py")])
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def korean_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal of Python ``source`` holding Hangul: plain strings and
    the literal parts of f-strings (a placeholder reads as ``{}``, so "대상 모델 호출 {n}회" stays one
    text); docstrings are left out (they are for developers)."""
    tree = ast.parse(source)
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    out, inside = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                           for v in node.values)
            inside |= {id(v) for v in node.values}
            if _HANGUL.search(text):
                out.append((node.lineno, text))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                and id(node) not in inside and _HANGUL.search(node.value)):
            out.append((node.lineno, node.value))
    return sorted(out)


def find_variants_in_code(source: str, variants: dict[str, str]) -> list[str]:
    """:func:`find_variants` over :func:`korean_strings` (line numbers of the Python file)."""
    found = []
    for line, text in korean_strings(source):
        found += [f"line {line}: {hit.split(': ', 1)[1]}" for hit in find_variants(text.replace("\n", " "), variants)]
    return found


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


def test_each_term_is_listed_once():
    """One row per term: a second row with another gloss leaves two definitions to choose from."""
    seen: dict[str, int] = {}
    for table in _tables(GLOSSARY.read_text(encoding="utf-8")):
        if VARIANT_COLUMN in table[0]:
            for row in table[1:]:
                seen[row[0]] = seen.get(row[0], 0) + 1
    assert len(seen) >= 30 and not [t for t, n in seen.items() if n > 1], [t for t, n in seen.items() if n > 1]


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


def test_the_code_check_reads_plain_and_formatted_strings_but_not_docstrings():
    code = (
        'def f(n):\n'
        '    """대상 모델 호출을 세는 함수 (개발자용 설명)."""\n'
        '    a = "이 문맥에서"\n'
        '    return f"대상 모델 호출 {n}회 · 순전파 {n}번"\n'
    )
    found = find_variants_in_code(code, VARIANTS)
    assert [h.split(":")[0] for h in found] == ["line 3", "line 4"], found
    assert "대상 모델 호출" in found[1]
    assert korean_strings('x = "plain ascii"') == []


def test_shown_code_covers_the_widgets_and_the_assessment():
    names = {str(p.relative_to(ROOT)) for p in SHOWN_CODE}
    assert "decodelab/teach/widgets/speculative.py" in names
    assert "decodelab/assess/exercises/views.py" in names and "decodelab/assess/quiz/widget.py" in names


@pytest.mark.parametrize("path", SHOWN_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_non_preferred_variant_in_what_the_package_shows(path):
    found = find_variants_in_code(path.read_text(encoding="utf-8"), VARIANTS)
    assert not found, f"{path.relative_to(ROOT)}: 학생에게 보이는 문자열에 GLOSSARY.md의 '쓰지 않는 말'이 있습니다:\n" + "\n".join(found)
