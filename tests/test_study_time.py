"""docs/study.md "얼마나 걸리나" 표가 노트북·문항 파일을 다시 센 값과 맞는지 확인합니다.

공식과 세는 법은 scripts/study_time.py에 있습니다. 표의 글자 수는 100자 단위, 어림 시간은 5분 단위 반올림입니다.
작은 글 수정마다 표를 고치지 않도록 글자 수는 5%, 어림 시간은 5분까지의 차이를 허용합니다. 셀·문항 수는 정확히 같아야 합니다.
"""
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("study_time", ROOT / "scripts" / "study_time.py")
study_time = importlib.util.module_from_spec(_spec)
sys.modules["study_time"] = study_time
_spec.loader.exec_module(study_time)


def _table():
    text = (ROOT / "docs" / "study.md").read_text(encoding="utf-8")
    rows = {}
    for m in re.finditer(r"^\| (0\d[a-z]?) [^|]*\| 약 (\d+)분[^|]*\| ([\d,]+)자 · ([^|]*)\|$", text, re.M):
        nums = [int(x) for x in re.findall(r"(?<![\d~])(\d+)(?![\d~])", m.group(4))]
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3).replace(",", "")), nums)
    return text, rows


def _chars_ok(table: int, actual: int) -> bool:
    return abs(table - actual) <= 0.05 * actual


def _minutes_ok(table: int, actual: float) -> bool:
    return abs(table - actual) <= 5


def test_table_has_every_notebook():
    _, rows = _table()
    assert sorted(rows) == ["01", "02", "03", "04", "04b", "05", "06", "07"]


@pytest.mark.parametrize("nb", ["01", "02", "03", "04", "04b", "05"])
def test_row_matches_recount(nb):
    minutes, chars, nums = _table()[1][nb]
    c = study_time.count(nb)
    assert _chars_ok(chars, c.chars), (chars, c.chars)
    assert nums == [c.code_cells, c.questions, c.predictions, c.tasks, c.written]
    assert minutes % 5 == 0 and _minutes_ok(minutes, c.minutes), (minutes, c.minutes)


def test_review_and_server_rows():
    _, rows = _table()
    c06, c07 = study_time.count("06"), study_time.count("07")
    minutes, chars, nums = rows["06"]
    assert _chars_ok(chars, c06.chars) and nums[0] == c06.code_cells and _minutes_ok(minutes, c06.minutes)
    minutes, chars, nums = rows["07"]
    assert _chars_ok(chars, c07.chars)
    assert nums == [c07.code_cells, c07.questions, c07.predictions, c07.tasks, c07.written]
    assert minutes >= c07.minutes  # 07의 시간에는 서버를 띄우는 시간이 더해집니다


def test_total_hours():
    text, _ = _table()
    hours = int(re.search(r"01~06을 모두 합쳐 약 (\d+)시간", text).group(1))
    total = sum(study_time.count(n).minutes for n in ["01", "02", "03", "04", "04b", "05", "06"])
    assert hours == round(total / 60)


def test_formula_by_hand():
    c = study_time.Counts("xx", chars=800, code_cells=4, questions=3, predictions=2, tasks=1, written=1)
    assert c.minutes == 2 + 2 + 3 + 2 + 5 + 5
