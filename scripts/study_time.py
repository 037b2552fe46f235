"""docs/study.md "얼마나 걸리나" 표의 어림 시간을 노트북과 문항 파일에서 다시 세어 냅니다.

공식 (docs/study.md와 같음): 설명 글의 글자 수(마크다운 셀만, 공백 제외) ÷ 분당 400자
+ 코드 셀 하나에 0.5분 + 확인 문제 하나에 1분 + 예측 하나에 1분
+ 코드 바꾸기 실습 하나에 5분 + 서술 답 하나에 5분.

사용: ``python scripts/study_time.py`` (저장소 폴더에서) 가 노트북마다 센 값과 분을 출력합니다.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHARS_PER_MIN = 400


@dataclass(frozen=True)
class Counts:
    """노트북 하나에서 센 값. minutes는 위 공식의 분(반올림 전)."""

    notebook: str
    chars: int
    code_cells: int
    questions: int
    predictions: int
    tasks: int
    written: int

    @property
    def minutes(self) -> float:
        return (self.chars / CHARS_PER_MIN + 0.5 * self.code_cells + self.questions
                + self.predictions + 5 * self.tasks + 5 * self.written)


def count(notebook: str, root: Path = ROOT) -> Counts:
    """``notebook`` ("01"…"07", "04b")의 글자 수·코드 셀·문항·예측·실습·서술 수를 셉니다.

    Raises FileNotFoundError: 그 번호의 .ipynb가 ``root/notebooks``에 없을 때.
    """
    paths = sorted((root / "notebooks").glob(f"{notebook}_*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"notebooks/{notebook}_*.ipynb가 없습니다")
    cells = json.loads(paths[0].read_text(encoding="utf-8"))["cells"]
    chars = sum(len(re.sub(r"\s", "", "".join(c["source"]))) for c in cells if c["cell_type"] == "markdown")
    code = sum(1 for c in cells if c["cell_type"] == "code")
    quiz = root / "quizzes" / f"{notebook}.yaml"
    questions = len(yaml.safe_load(quiz.read_text(encoding="utf-8"))["questions"]) if quiz.exists() else 0
    ex_path = root / "quizzes" / "exercises" / f"{notebook}.yaml"
    ex = yaml.safe_load(ex_path.read_text(encoding="utf-8")) if ex_path.exists() else {}
    return Counts(notebook, chars, code, questions, len(ex.get("predictions", [])),
                  len(ex.get("tasks", [])), len(ex.get("written", [])))


if __name__ == "__main__":
    for n in ["01", "02", "03", "04", "04b", "05", "06", "07"]:
        c = count(n)
        print(f"{n}: {c.chars:,}자 · {c.code_cells} · {c.questions} · {c.predictions} · {c.tasks} · {c.written}  → {c.minutes:.0f}분")
