"""The course is in its own words and self-contained.

1. No run of ``WINDOW`` (14) or more characters, whitespace removed, of either source article
   (``../shared/seeds/*.txt`` beside the checkout; ``$DECODELAB_SEEDS`` overrides) appears in any
   text a student or lecturer reads: the notebooks (every markdown and code cell of each
   ``.ipynb`` and its ``notebooks/src/*.md`` source), the quiz and exercise files, README.md,
   GLOSSARY.md, the lecturer guide and the prose of quizzes/COVERAGE.md. COVERAGE.md's location
   markers (the backtick quotes of its "원문 위치 표시" column) are short quotes by design: each
   must stay under ``WINDOW`` characters, and they are left out of the prose check.
2. No student-facing text refers to texts students do not have ("시드 글", "첫 글", "원문",
   "기사", ...). A random seed ("난수 시드", "시드(seed)") is not such a reference.

The source articles live outside the repository. Without them the copy check is skipped with the
reason, except under CI (``CI=true``), where a missing folder is a failure. The checker itself is
tested on planted copies, with or without the articles.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WINDOW = 14  # characters, whitespace removed
COVERAGE = REPO / "quizzes" / "COVERAGE.md"
# a table row of COVERAGE.md: | id | text | markers | section | questions |
ROW = re.compile(r"^(\|\s*[CXN][0-9A-Z-]+\s*\|[^|]*\|)([^|]*)(\|[^|]*\|[^|]*\|\s*)$")

#: References to texts the students do not have. A random seed ("시드(seed)", "난수 시드") is fine.
REFERENCES = [
    (re.compile(r"시드\s*(?:글|기사|자료|텍스트|문서|문단|문장)"), "시드 글"),
    (re.compile(r"첫\s*(?:번째|째)?\s*글(?![자꼴씨])"), "첫 글"),
    (re.compile(r"(?:두\s*번째|둘째|두)\s*글(?![자꼴씨])"), "두 번째 글"),
    (re.compile(r"입력\s*자료"), "입력 자료"),
    (re.compile(r"원문"), "원문"),
    (re.compile(r"기사"), "기사"),
]


# ------------------------------------------------------------------------------------------
# the checker


@dataclass(frozen=True)
class Text:
    """One checked text: where it is (shown in failures) and what it says."""

    where: str  # e.g. "notebooks/03_agent_loops.ipynb cell 4 (markdown)" or "README.md"
    text: str
    first_line: int = 1  # line number of the text's first line inside ``where``


def fold(s: str) -> str:
    """The text with all whitespace removed (the unit the window counts in)."""
    return re.sub(r"\s+", "", s)


def grams(source: str, n: int = WINDOW) -> set[str]:
    """All runs of ``n`` characters of ``source`` with whitespace removed."""
    f = fold(source)
    return {f[i:i + n] for i in range(len(f) - n + 1)}


def copied_runs(t: Text, source_grams: set[str], n: int = WINDOW) -> list[str]:
    """Each maximal run of ``t`` that shares ``n`` or more consecutive characters (whitespace
    removed) with the sources, as ``"<where> line <k>: <run>"``."""
    chars, lines = [], []
    for k, line in enumerate(t.text.splitlines() or [""]):
        for ch in line:
            if not ch.isspace():
                chars.append(ch)
                lines.append(t.first_line + k)
    f = "".join(chars)
    hits = [i for i in range(len(f) - n + 1) if f[i:i + n] in source_grams]
    out: list[str] = []
    start = prev = None
    for i in hits + [None]:
        if start is not None and (i is None or i != prev + 1):
            out.append(f"{t.where} line {lines[start]}: {f[start:prev + n]}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return out


def references(t: Text) -> list[str]:
    """Each mention of a text the students do not have, as ``"<where> line <k>: <word> in '...'"``."""
    out = []
    for k, line in enumerate(t.text.splitlines()):
        for rx, name in REFERENCES:
            for m in rx.finditer(line):
                lo, hi = max(0, m.start() - 12), m.end() + 12
                out.append(f"{t.where} line {t.first_line + k}: {name!r} in {line[lo:hi].strip()!r}")
    return out


# ------------------------------------------------------------------------------------------
# what is checked


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


def notebook_texts() -> list[Text]:
    """Every cell (markdown and code) of every committed notebook, and each MyST source file."""
    out = []
    for p in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            out.append(Text(f"{_rel(p)} cell {i} ({cell['cell_type']})", src))
    for p in sorted((REPO / "notebooks" / "src").glob("*.md")):
        out.append(Text(_rel(p), p.read_text(encoding="utf-8")))
    return out


def student_texts() -> list[Text]:
    """Notebooks, quiz and exercise files, README, the contributors' and benchmarks' guides, GLOSSARY and the
    lecturer guide."""
    files = [*sorted((REPO / "quizzes").glob("*.yaml")), *sorted((REPO / "quizzes" / "exercises").glob("*.yaml")),
             REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md", REPO / "GLOSSARY.md",
             *sorted((REPO / "lecturer").glob("*.md")),
             *(sorted((REPO / "docs").glob("lecturer*.md")))]
    return notebook_texts() + [Text(_rel(p), p.read_text(encoding="utf-8")) for p in files if p.is_file()]


def coverage_parts(text: str) -> tuple[Text, list[tuple[int, str]]]:
    """COVERAGE.md split into its prose (markers column blanked) and its markers ``(line, quote)``."""
    prose, markers = [], []
    for k, line in enumerate(text.splitlines(), start=1):
        m = ROW.match(line)
        if m:
            markers += [(k, q) for q in re.findall(r"`([^`]+)`", m.group(2))]
            line = m.group(1) + " " + m.group(3)
        prose.append(line)
    return Text(_rel(COVERAGE), "\n".join(prose)), markers


# ------------------------------------------------------------------------------------------
# the source articles


def _seeds_dir() -> Path | None:
    candidates = [os.environ.get("DECODELAB_SEEDS"), REPO.parent / "shared" / "seeds", REPO / "shared" / "seeds"]
    git = REPO / ".git"
    if git.is_file():  # a git worktree: also beside the main checkout
        m = re.match(r"gitdir:\s*(.+)", git.read_text(encoding="utf-8").strip())
        if m:
            gitdir = Path(m.group(1).strip())
            if not gitdir.is_absolute():
                gitdir = (REPO / gitdir).resolve()
            if gitdir.parent.name == "worktrees":
                candidates.append(gitdir.parent.parent.parent.parent / "shared" / "seeds")
    for c in candidates:
        if c and Path(c).is_dir() and sorted(Path(c).glob("*.txt")):
            return Path(c)
    return None


SEEDS = _seeds_dir()
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="module")
def source_grams() -> set[str]:
    if SEEDS is None:
        if IN_CI:
            pytest.fail("원문 확인용 ../shared/seeds/*.txt가 없습니다: CI에서는 체크아웃 옆에 shared/가 있어야 합니다 "
                        "(또는 DECODELAB_SEEDS로 위치를 알려 주세요)")
        pytest.skip("../shared/seeds/*.txt가 없어 베끼기 검사를 건너뜁니다 (DECODELAB_SEEDS로 위치를 줄 수 있습니다)")
    return set().union(*(grams(p.read_text(encoding="utf-8")) for p in sorted(SEEDS.glob("*.txt"))))


# ------------------------------------------------------------------------------------------
# the checks over the repository


def _fail(what: str, found: list[str]) -> None:
    if found:
        pytest.fail(f"{what} ({len(found)}곳):\n  " + "\n  ".join(found), pytrace=False)


def test_nothing_is_copied_from_the_sources(source_grams):
    found = [run for t in student_texts() for run in copied_runs(t, source_grams)]
    _fail(f"원문과 {WINDOW}자 이상 같은 곳 (공백 제외): 자기 말로 다시 쓰세요", found)


def test_coverage_prose_is_not_copied(source_grams):
    prose, _ = coverage_parts(COVERAGE.read_text(encoding="utf-8"))
    _fail(f"COVERAGE.md의 설명이 원문과 {WINDOW}자 이상 같은 곳", copied_runs(prose, source_grams))


def test_coverage_markers_are_short_quotes():
    _, markers = coverage_parts(COVERAGE.read_text(encoding="utf-8"))
    assert len(markers) > 50, "COVERAGE.md의 위치 표시를 찾지 못했습니다"
    long = [f"{_rel(COVERAGE)} line {k}: `{q}` ({len(fold(q))}자)" for k, q in markers if len(fold(q)) >= WINDOW]
    _fail(f"위치 표시는 공백 빼고 {WINDOW}자 미만이어야 합니다", long)


def test_no_reference_to_texts_students_do_not_have():
    found = [r for t in student_texts() for r in references(t)]
    _fail("학생에게 없는 글을 가리키는 곳: 내용을 직접 가르치고 말한 사람(엔비디아, CNBC 보도, AWS)을 밝히세요", found)


def test_the_checked_texts_are_found():
    names = {t.where.split(" ")[0] for t in student_texts()}
    assert {"README.md", "GLOSSARY.md", "quizzes/03.yaml", "notebooks/src/03_agent_loops.md",
            "notebooks/03_agent_loops.ipynb"} <= names
    cells = [t for t in notebook_texts() if t.where.startswith("notebooks/05_chips.ipynb")]
    assert any("(code)" in t.where for t in cells) and any("(markdown)" in t.where for t in cells)


# ------------------------------------------------------------------------------------------
# the checker on planted copies (runs without the articles)

SOURCE = "가나다라마바사아자차카타파하 거너더러머버서어저처커터퍼허. 두 번째 문장은 바로 여기에 있습니다."


def test_a_planted_copy_is_found_with_its_location_and_run():
    g = grams(SOURCE)
    planted = Text("notebooks/src/99_x.md", "첫 줄은 괜찮습니다.\n여기에 가나다 라마바사\n아자차카타파하 거너를 옮겼습니다.\n", first_line=1)
    (hit,) = copied_runs(planted, g)
    assert hit == "notebooks/src/99_x.md line 2: 가나다라마바사아자차카타파하거너"


def test_a_run_one_character_short_passes_and_two_runs_are_two_hits():
    g = grams(SOURCE)
    assert copied_runs(Text("a", "가나다라마바사아자차카타파 다른 말"), g) == []  # 13 characters
    two = copied_runs(Text("b", "가나다라마바사아자차카타파하 그리고\n\n두 번째 문장은 바로 여기에 있습니다"), g)
    assert two == ["b line 1: 가나다라마바사아자차카타파하", "b line 3: 두번째문장은바로여기에있습니다"]


def test_a_planted_copy_in_a_notebook_cell_and_in_coverage_prose(tmp_path):
    g = grams(SOURCE)
    cell = Text("notebooks/99.ipynb cell 7 (code)", "print('거너더러머버서어저처커터퍼허')  # 주석")
    assert copied_runs(cell, g) == ["notebooks/99.ipynb cell 7 (code) line 1: 거너더러머버서어저처커터퍼허"]
    table = ("# 표\n| C000-01 | 가나다라마바사아자차카타파하를 옮긴 설명 | `가나다라마` · `바사아자` | - | q |\n"
             "| C000-02 | 제 말로 쓴 설명 | `거너더러머버서어저처커터퍼허` | - | q |\n")
    prose, markers = coverage_parts(table)
    assert markers == [(2, "가나다라마"), (2, "바사아자"), (3, "거너더러머버서어저처커터퍼허")]
    assert "가나다라마`" not in prose.text and "거너더러" not in prose.text  # the markers are left out of the prose
    assert [h.split(": ")[1] for h in copied_runs(prose, g)] == ["가나다라마바사아자차카타파하"]


def test_a_planted_reference_is_found_and_a_random_seed_is_not():
    t = Text("quizzes/99.yaml", "prompt: 첫 글에 따르면 무엇인가요?\n난수 시드(seed)를 0으로 고정합니다.\n"
                                 "시드 글의 설명과 두 번째 글, 그리고 둘째글과 원문과 CNBC 기사\n")
    found = references(t)
    assert [f.split(": ")[1].split(" in ")[0] for f in found] == ["'첫 글'", "'시드 글'", "'두 번째 글'", "'두 번째 글'",
                                                                  "'원문'", "'기사'"]
    assert all(f.startswith("quizzes/99.yaml line ") for f in found)
    assert found[0].startswith("quizzes/99.yaml line 1:") and found[1].startswith("quizzes/99.yaml line 3:")
    assert references(Text("x", "난수 시드(seed)는 같은 값을 씁니다. 시드를 바꾸면 다른 결과가 나옵니다. 첫 글자와 두 글자")) == []


def test_the_real_articles_are_caught_when_planted(source_grams):
    one = sorted(SEEDS.glob("*.txt"))[0].read_text(encoding="utf-8")
    sentence = max(re.split(r"(?<=[.?!])\s+", one), key=len)
    planted = Text("README.md", "소개\n\n" + sentence[: WINDOW + 10] + " 그리고 제 말\n")
    (hit,) = copied_runs(planted, source_grams)
    assert hit.startswith("README.md line 3: ") and len(hit.split(": ", 1)[1]) >= WINDOW
