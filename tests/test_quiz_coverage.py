"""quizzes/COVERAGE.md: every claim of both seed articles is covered by existing questions, paraphrased.

The seed articles live outside the repository (``../shared/seeds`` next to the checkout, or
``$DECODELAB_SEEDS``); the checks that read them are skipped only when they are absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from decodelab.assess.quiz import load_quizzes
from conftest import question_texts

REPO = Path(__file__).resolve().parents[1]
COVERAGE = REPO / "quizzes" / "COVERAGE.md"
ROW = re.compile(r"^\|\s*([CXN][0-9A-Z-]+)\s*\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")
LABEL = re.compile(r"^(확인문제|정답|해설) \d\.$")
PARAPHRASE_WINDOW = 14  # characters, whitespace removed


def _seeds_dir() -> Path | None:
    candidates = [os.environ.get("DECODELAB_SEEDS"), REPO.parent / "shared" / "seeds", REPO / "shared" / "seeds"]
    for c in candidates:
        if c and Path(c).is_dir() and list(Path(c).glob("000_*.txt")):
            return Path(c)
    return None


SEEDS = _seeds_dir()
needs_seeds = pytest.mark.skipif(SEEDS is None, reason="시드 글(../shared/seeds)이 없습니다 (DECODELAB_SEEDS로 위치를 줄 수 있습니다)")


def _seed_text(prefix: str) -> str:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


def _rows() -> list[dict]:
    rows = []
    for line in COVERAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m:
            continue
        rid, text, anchors, section, qids = (g.strip() for g in m.groups())
        rows.append({
            "id": rid,
            "text": text,
            "section": section,
            "anchors": re.findall(r"`([^`]+)`", anchors),
            "qids": [] if qids == "-" else [q.strip() for q in qids.split(",") if q.strip()],
        })
    return rows


def _seed_of(row_id: str) -> str | None:
    m = re.match(r"^[CX](\d{3})-", row_id)
    return m.group(1) if m else None


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"^-\s+", "", line.strip())
        for part in re.split(r"(?<=[.?!])\s+", line):
            part = part.strip()
            if part and not LABEL.match(part) and part not in out:
                out.append(part)
    return out


def test_table_rows_are_well_formed_and_point_at_existing_questions():
    rows = _rows()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "주장 id가 겹칩니다"
    existing = {q.id for q in load_quizzes()}
    claims = [r for r in rows if r["id"][0] in "CN"]
    assert sum(1 for r in rows if r["id"].startswith("C000-")) == 28
    assert sum(1 for r in rows if r["id"].startswith("C001-")) == 20
    for r in claims:
        assert r["qids"], f"{r['id']}: 문항이 없습니다"
        for qid in r["qids"]:
            assert qid in existing, f"{r['id']}: 없는 문항 id {qid}"
    for r in rows:
        if r["id"][0] in "CX":
            assert r["anchors"], f"{r['id']}: 원문 위치 표시가 없습니다"
        if r["id"][0] == "X":
            assert r["qids"] == []
    listed = {q for r in claims for q in r["qids"]}
    assert existing - listed == set(), "표에 없는 문항"


NOTEBOOKS_SRC = REPO / "notebooks" / "src"
#: one section reference: ``NN §heading`` or ``04b §heading`` (several may be joined with ``;``)
SECTION_REF = re.compile(r"^(\d{2}[a-z]?) §(.+)$")


def _headings(nn: str) -> set[str]:
    """The markdown heading lines (without the #'s) of notebook ``nn``'s MyST source, outside
    code blocks."""
    (path,) = NOTEBOOKS_SRC.glob(f"{nn}_*.md")
    out, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m and not fence:
            out.add(m.group(1).strip())
    return out


def _section_refs(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(";") if part.strip()]


def _section_problems() -> tuple[list[str], list[str]]:
    """(rows still marked ``TODO NN``, rows whose section does not resolve), as messages."""
    todo, bad = [], []
    cache: dict[str, set[str]] = {}
    for r in _rows():
        if r["id"][0] == "X":
            if r["section"] != "-":
                bad.append(f"{r['id']}: 사실 주장이 아닌 문장에는 노트북 절 대신 '-'를 적습니다 ({r['section']!r})")
            continue
        if r["section"].startswith("TODO"):
            todo.append(f"{r['id']} ({r['section']})")
            continue
        refs = _section_refs(r["section"])
        if not refs:
            bad.append(f"{r['id']}: 노트북 절이 비어 있습니다")
        for ref in refs:
            m = SECTION_REF.match(ref)
            if not m:
                bad.append(f"{r['id']}: {ref!r}는 'NN §제목' 모양이 아닙니다")
                continue
            nn, heading = m.groups()
            if nn not in cache:
                cache[nn] = _headings(nn) if list(NOTEBOOKS_SRC.glob(f"{nn}_*.md")) else set()
            if heading.strip() not in cache[nn]:
                bad.append(f"{r['id']}: 노트북 {nn}에 '{heading.strip()}' 제목이 없습니다")
    return todo, bad


def test_heading_parser():
    text = "# 제목\n\n```{code-cell}\n# 주석은 제목이 아님\n```\n\n## 둘째 절 ##\n### 셋째: 절 (예)\n"
    fence, found = False, []
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m and not fence:
            found.append(m.group(1))
    assert found == ["제목", "둘째 절", "셋째: 절 (예)"]
    assert _section_refs("04 §가; 05 §나") == ["04 §가", "05 §나"]


def test_every_filled_section_is_a_heading_of_its_notebook():
    _, bad = _section_problems()
    assert bad == [], "노트북 절이 맞지 않는 행:\n" + "\n".join(bad)


def test_no_section_cell_is_still_todo():
    todo, _ = _section_problems()
    assert todo == [], f"노트북 절이 아직 TODO인 행 {len(todo)}개: " + ", ".join(todo)


def test_the_three_check_questions_are_there():
    qs = {q.id: q for q in load_quizzes()}
    for qid in ("01-check-1", "03-check-2", "05-check-3"):
        assert qid in qs  # the prompts no longer name the source's numbering (students do not have it)
        assert "확인문제" not in qs[qid].prompt
    rows = {r["id"]: r for r in _rows()}
    assert rows["C000-K1"]["qids"] == ["01-check-1"]
    assert rows["C000-K2"]["qids"] == ["03-check-2"]
    assert rows["C000-K3"]["qids"] == ["05-check-3"]


@needs_seeds
def test_seed_hashes_match_the_table():
    text = COVERAGE.read_text(encoding="utf-8")
    for prefix in ("000", "001"):
        (path,) = SEEDS.glob(f"{prefix}_*.txt")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"- {prefix}: `{digest}`" in text, f"시드 {prefix}가 바뀌었습니다: COVERAGE.md를 다시 점검하세요"


@needs_seeds
def test_every_anchor_is_in_its_seed():
    for r in _rows():
        seed = _seed_of(r["id"])
        if seed is None:
            continue
        text = _seed_text(seed)
        for a in r["anchors"]:
            assert a in text, f"{r['id']}: 위치 표시 {a!r}가 시드 {seed}에 없습니다"


@needs_seeds
@pytest.mark.parametrize("seed", ["000", "001"])
def test_every_sentence_of_each_seed_is_listed(seed):
    anchors = [(r["id"], a) for r in _rows() if _seed_of(r["id"]) == seed for a in r["anchors"]]
    sentences = _sentences(_seed_text(seed))
    assert len(sentences) >= (60 if seed == "000" else 16)
    missing = [s for s in sentences if not any(a in s for _, a in anchors)]
    assert missing == [], f"표에 없는 문장: {missing}"


def test_sentence_splitter():
    text = "제목 줄\n- 항목 하나입니다. 둘째 문장?\n정답 1. 한 번에 하나씩. 해설 1. 이유입니다.\n제목 줄\n"
    assert _sentences(text) == ["제목 줄", "항목 하나입니다.", "둘째 문장?", "한 번에 하나씩.", "이유입니다."]


_question_texts = question_texts  # one walker for both quiz-text checks (tests/conftest.py)


@needs_seeds
def test_questions_paraphrase_and_never_copy_the_seeds():
    fold = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    seeds = fold(_seed_text("000") + _seed_text("001"))
    n = PARAPHRASE_WINDOW
    grams = {seeds[i:i + n] for i in range(len(seeds) - n + 1)}
    copied = []
    for q in load_quizzes():
        for t in _question_texts(q):
            f = fold(t)
            hits = {f[i:i + n] for i in range(len(f) - n + 1)} & grams
            if hits:
                copied.append((q.id, sorted(hits)[0]))
    assert copied == [], f"시드 글을 {n}자 넘게 그대로 옮긴 곳: {json.dumps(copied, ensure_ascii=False)}"
