"""Exam release: a student copy of the quizzes with no answer keys and no explanations.

Design: the release holds **no key material at all**, not even hashes. Salted hashes of normalized
answers would work for choice ids and exact short answers, but not for numeric answers with a
tolerance (any hash of "150" is defeated by hashing 0..1000 in a loop) nor for keyword-graded
short answers; a four-option choice question is likewise defeated by trying four hashes. So keys
stay with the lecturer: the canonical ``quizzes/`` folder is the key file, and the lecturer grades
the students' exported submissions with ``decodelab grade``.

What a release file keeps for each question: id, kind, prompt, points, the choice texts (without
their explanations), the ordering items, and the unit of numeric questions. Choices and items get
**opaque ids** (:func:`decodelab.quiz.loading.release_ids`: 6 hex digits derived from the whole
keyed question and a salt computed from all the keyed questions (:func:`release_salt`: the first
salt with which every blind rule on the file, such as "the smallest id", scores within a point of
chance), so only the lecturer's files map them back) and are listed sorted by those ids, so neither
the file order nor the ids say anything about the key; the grader maps a submission's
opaque ids back to the quiz file's ids. The widget then shows each student their own order under
positional labels (:mod:`decodelab.quiz.shuffle`). What it drops: ``answer``, ``accepted``, ``keywords``, ``forbidden``,
``tolerance``, every ``explanation``, and ``source`` (a passage reference can point at the
answer). Question ids appear as they are, so quiz authors keep ids neutral (the topic, never the
answer).

Students open it with ``quiz_widget("01", quizzes_dir="<release folder>")`` (or by setting
``DECODELAB_QUIZZES``): the widget then runs in exam mode (answers are saved and exported, nothing
is graded on the student's machine).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from itertools import combinations
from math import factorial
from pathlib import Path

import yaml

from .._atomic import atomic_write_text, os_reason
from .grading import score_response
from .loading import load_quiz_files, public_question, quizzes_dir, release_ids
from .schema import ReleaseFile, ReleaseInfo

__all__ = ["MARKER", "ReleaseResult", "build_release", "fixed_rule_scores", "release_salt"]

MARKER = "release.json"

_README = """# 연습 퀴즈 배포본 (release {rid})

이 폴더에는 문항만 있고 정답과 해설은 없습니다. 채점은 강사가 합니다.

풀이 방법 (JupyterLab 노트북 셀에서):

```python
from decodelab.quiz import quiz_widget
quiz_widget("01", quizzes_dir="이 폴더의 경로")   # "01"~"05", 또는 "all"
```

답은 입력하는 대로 내 컴퓨터에 저장됩니다(커널을 다시 시작해도 남습니다). 다 풀면 위젯 아래의
**제출 파일 내보내기** 버튼으로 파일 하나를 만들어 강사에게 내세요.

강사: `decodelab grade 제출폴더 -o gradebook.csv` (정답 파일은 강사의 quizzes/ 폴더입니다).
"""


def fixed_rule_scores(questions, salt: str) -> dict[str, tuple[float, float]]:
    """Rule name -> (score, chance) of the blind rules that read the release file itself (the same
    answer for every student), for the opaque ids made with ``salt``: single ``sorted-first`` /
    ``sorted-last`` (the smallest / largest id), multiple ``sorted-first-two``, ordering ``sorted``.
    The chance is the expected score of a uniformly random answer of the same form."""
    out = {"single sorted-first": [0.0, 0.0], "single sorted-last": [0.0, 0.0],
           "multiple sorted-first-two": [0.0, 0.0], "ordering sorted": [0.0, 0.0]}
    for q in questions:
        if q.kind not in ("single", "multiple", "ordering"):
            continue
        ids = release_ids(q, salt)
        by_opaque = sorted(ids, key=lambda k: ids[k])  # the file's ids, in the release's sorted order
        if q.kind == "single":
            out["single sorted-first"][0] += by_opaque[0] == q.answer
            out["single sorted-last"][0] += by_opaque[-1] == q.answer
            out["single sorted-first"][1] += 1 / len(ids)
            out["single sorted-last"][1] += 1 / len(ids)
        elif q.kind == "multiple":
            out["multiple sorted-first-two"][0] += score_response(q, by_opaque[:2])
            pairs = [score_response(q, list(c)) for c in combinations(list(ids), 2)]
            out["multiple sorted-first-two"][1] += sum(pairs) / len(pairs)
        else:
            out["ordering sorted"][0] += by_opaque == list(q.answer)
            out["ordering sorted"][1] += 1 / factorial(len(ids))
    return {k: (v[0], v[1]) for k, v in out.items()}


_WINDOW = {"single sorted-first": 1.0, "single sorted-last": 1.0, "multiple sorted-first-two": 0.75,
           "ordering sorted": 0.5}
"""How far above or below chance each file rule may score for a salt to be accepted (points)."""


def release_salt(questions) -> str:
    """The salt of the opaque ids of a release made from these keyed questions (all of them, in
    file order): the first of ``"0"``, ``"1"``, ... whose :func:`fixed_rule_scores` all lie within
    :data:`_WINDOW` of chance, on both sides (so no rule on the release file scores above chance,
    and none scores notably below it, which would be a hint too); the closest one if none of the
    first 2,000 does. Deterministic: the grader recomputes it from the lecturer's files.
    """
    questions = list(questions)
    best, best_dev = "0", float("inf")
    for n in range(2000):
        salt = str(n)
        scores = fixed_rule_scores(questions, salt)
        devs = [abs(sc - ch) / _WINDOW[k] for k, (sc, ch) in scores.items()]
        if max(devs) <= 1.0:
            return salt
        if max(devs) < best_dev:
            best, best_dev = salt, max(devs)
    return best


@dataclass(frozen=True)
class ReleaseResult:
    """``out_dir``, ``release_id`` (12 hex digits), ``quiz_set`` (``"exam-<id>"``), ``files`` written."""

    out_dir: Path
    release_id: str
    files: list[Path]

    @property
    def quiz_set(self) -> str:
        """The quiz set of this release, ``"exam-<release_id>"``: the folder students' answers are saved
        in (see :class:`decodelab.quiz.store.AnswerStore`) and the ``quiz_set`` of their submissions."""
        return f"exam-{self.release_id}"


def _is_within(child: Path, parent: Path) -> bool:
    try:
        child.relative_to(parent)
        return True
    except ValueError:
        return False


def build_release(out_dir: str | os.PathLike, *, quizzes: str | os.PathLike | None = None) -> ReleaseResult:
    """Write the student version of every quiz file into ``out_dir``.

    Args:
        out_dir: target folder. It must not exist, be empty, or hold a previous release (a
            ``release.json`` made by this function), whose files are replaced.
        quizzes: the canonical quiz folder (default: see :func:`decodelab.quiz.loading.quizzes_dir`).

    Returns:
        :class:`ReleaseResult`.

    Raises:
        ValueError: (Korean) ``out_dir`` is the quiz folder itself or inside it / contains it, or is a
            non-empty folder that is not a previous release, or is a file.
        OSError: (same subclass as the system's error, Korean message saying what to change) the
            folder or a file in it cannot be created there (no such parent, a file in the way, no
            permission, read-only, disk full), e.g. ``/proc/x``.
        QuizError: the canonical quiz files are invalid.
    """
    src = quizzes_dir(quizzes).resolve()
    out = Path(out_dir).expanduser().resolve()
    if _is_within(out, src) or _is_within(src, out):
        raise ValueError(f"배포 폴더 {out}가 정답이 든 퀴즈 폴더 {src}와 겹칩니다: 다른 폴더를 지정하세요.")
    if out.exists() and not out.is_dir():
        raise ValueError(f"배포 폴더 자리에 파일이 있습니다: {out}")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ValueError(f"배포 폴더 {out}가 비어 있지 않고 이전 배포본도 아닙니다: 빈 폴더나 새 폴더 이름을 지정하세요.")

    files = load_quiz_files(src)
    salt = release_salt(q for f in files for q in f.questions)
    public = [(f.notebook, f.title, [public_question(q, opaque=True, salt=salt).model_dump(exclude_none=True)
                                     for q in f.questions])
              for f in files]
    rid = hashlib.sha256(json.dumps(public, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:12]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise type(e)(
            f"배포 폴더 {out}을(를) 만들 수 없습니다 ({os_reason(e)}): 쓰기 권한이 있는 곳의 다른 폴더를 지정하세요 "
            "(예: decodelab quiz release ./exam-release)."
        ) from None
    try:
        written = _write_release(out, rid, public)
    except OSError as e:
        raise type(e)(
            f"배포 폴더 {out}에 파일을 만들 수 없습니다 ({os_reason(e)}): 쓰기 권한과 남은 디스크 공간을 확인하거나 "
            "다른 폴더를 지정하세요."
        ) from None
    return ReleaseResult(out, rid, written)


def _write_release(out: Path, rid: str, public: list) -> list[Path]:
    for old in out.glob("[0-9][0-9].yaml"):
        old.unlink()
    written = []
    for notebook, title, questions in public:
        doc = {"release": {"id": rid, "format": 1}, "notebook": notebook, "title": title, "questions": questions}
        ReleaseFile.model_validate(doc)  # what we write must load back
        text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=100)
        written.append(atomic_write_text(out / f"{notebook}.yaml", text))
    manifest = {"format": "decodelab-quiz-release", "release": ReleaseInfo(id=rid).model_dump(),
                "quiz_set": f"exam-{rid}", "notebooks": [n for n, _, _ in public],
                "question_ids": [q["id"] for _, _, qs in public for q in qs]}
    written.append(atomic_write_text(out / MARKER, json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"))
    written.append(atomic_write_text(out / "README.md", _README.format(rid=rid)))
    for p in written:
        os.chmod(p, 0o644)
    return written
