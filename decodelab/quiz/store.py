"""A student's answers on their own computer, saved as they are given.

Layout: ``<root>/<quiz set>/<question id>.json``, one small file per question, each written
atomically, so a kernel restart, a closed browser tab or two notebooks open at once lose nothing
(the last answer to a question wins). ``<root>`` is ``$DECODELAB_ANSWERS_DIR`` if set, else
``~/.decodelab/answers``. ``<quiz set>`` is ``course`` for the practice quizzes and
``exam-<release id>`` for an exam release, so the two never mix.

A record: ``{"question_id", "response", "saved_at" (UTC ISO 8601), "attempts", "score"}``;
``response`` is exactly what the student gave (a choice id, a list of ids, the raw text of a
short or numeric answer, even one that could not be read as a number); ``score`` is in [0, 1], or
``None`` when not graded (exam mode, or unreadable input).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._atomic import atomic_write_text
from .schema import QUESTION_ID, QUIZ_SET
from .submission import MAX_BYTES, answer_problem, make_submission, validate_student_id

__all__ = ["ANSWERS_ENV", "AnswerStore", "answers_root"]

ANSWERS_ENV = "DECODELAB_ANSWERS_DIR"
_MAX_RECORD = 64 * 1024


def answers_root(root: str | os.PathLike | None = None) -> Path:
    """``root``, else ``$DECODELAB_ANSWERS_DIR``, else ``~/.decodelab/answers`` (not created here)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(ANSWERS_ENV)
    return Path(env).expanduser() if env else Path.home() / ".decodelab" / "answers"


def _check_response(response: Any) -> Any:
    ok = (
        response is None
        or isinstance(response, str)
        or (isinstance(response, (int, float)) and not isinstance(response, bool))
        or (isinstance(response, list) and all(isinstance(x, str) for x in response))
    )
    if not ok:
        raise TypeError(f"저장할 수 없는 답 형식입니다: {type(response).__name__}")
    return response


class AnswerStore:
    """Answers of one quiz set on this computer.

    Args:
        quiz_set: ``"course"`` or ``"exam-<release id>"``.
        root: answers folder (default: see :func:`answers_root`).

    Attributes:
        dir: ``<root>/<quiz_set>``; created on the first save, never on reading.
        problems: unreadable record files met by :meth:`load` (they are skipped, not deleted).
        left_out: question id -> Korean reason, for each saved answer the last :meth:`export` left
            out of the submission file (see :meth:`submission_answers`); ``{}`` when none.
    """

    def __init__(self, quiz_set: str = "course", root: str | os.PathLike | None = None):
        if not QUIZ_SET.match(quiz_set):
            raise ValueError(f"quiz_set={quiz_set!r}: 'course' 또는 'exam-<12자리 16진수>'여야 합니다.")
        self.quiz_set = quiz_set
        self.root = answers_root(root)
        self.dir = self.root / quiz_set
        self.problems: list[str] = []
        self.left_out: dict[str, str] = {}

    def _path(self, question_id: str) -> Path:
        if not QUESTION_ID.match(question_id):
            raise ValueError(f"문항 id {question_id!r}의 형식이 잘못됐습니다.")
        return self.dir / f"{question_id}.json"

    def load(self) -> dict[str, dict]:
        """Every saved record, by question id. Unreadable files are skipped and listed in ``problems``."""
        self.problems = []
        out: dict[str, dict] = {}
        if not self.dir.is_dir():
            return out
        for p in sorted(self.dir.glob("*.json")):
            qid = p.stem
            if not QUESTION_ID.match(qid):
                continue
            try:
                if p.stat().st_size > _MAX_RECORD:
                    raise ValueError("너무 큼")
                rec = json.loads(p.read_text(encoding="utf-8"))
                if not isinstance(rec, dict) or rec.get("question_id") != qid:
                    raise ValueError("형식이 다름")
                _check_response(rec.get("response"))
            except (OSError, ValueError, TypeError) as e:
                self.problems.append(f"{p.name}: {e}")
                continue
            out[qid] = rec
        return out

    def get(self, question_id: str) -> dict | None:
        """The saved record of one question, or None."""
        return self.load().get(question_id)

    def save(self, question_id: str, response: Any, *, score: float | None = None) -> dict:
        """Save one answer now (atomic write). ``attempts`` counts the saves of this question.

        Raises:
            TypeError: ``response`` is not None, str, number, or list of str.
            OSError: the file could not be written (disk full, no permission).
        """
        _check_response(response)
        path = self._path(question_id)
        previous = 0
        if path.is_file():
            try:
                previous = int(json.loads(path.read_text(encoding="utf-8")).get("attempts", 0))
            except (OSError, ValueError, TypeError, AttributeError):
                previous = 0
        record = {
            "question_id": question_id,
            "response": response,
            "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "attempts": previous + 1,
            "score": score,
        }
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(record, ensure_ascii=False))
        return record

    # ---------------------------------------------------------------- student id and export

    @property
    def _student_file(self) -> Path:
        return self.root / "student.json"

    def student_id(self) -> str:
        """The student id remembered from the last export ("" if none)."""
        try:
            sid = json.loads(self._student_file.read_text(encoding="utf-8")).get("student_id", "")
            return sid if isinstance(sid, str) else ""
        except (OSError, ValueError, AttributeError):
            return ""

    def submission_answers(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The saved answers split into those a submission file can hold and those it cannot.

        Returns:
            ``(answers, left_out)``: question id -> response for every saved answer within the
            submission limits (:func:`decodelab.quiz.submission.answer_problem`), and question id ->
            Korean reason for each one that is not (e.g. a 2,500-character text saved by an older
            version of the widget). Nothing is deleted: the records stay on disk.
        """
        answers: dict[str, Any] = {}
        left_out: dict[str, str] = {}
        for qid, rec in self.load().items():
            response = rec.get("response")
            if response is None:
                continue
            why = answer_problem(response)
            if why is None:
                answers[qid] = response
            else:
                left_out[qid] = why
        return answers, left_out

    def export(self, student_id: str, out_dir: str | os.PathLike = ".") -> Path:
        """Write every saved answer of this quiz set as one submission file for the lecturer.

        The file is ``<out_dir>/decodelab-<quiz set>-<student id>.json`` (see
        :mod:`decodelab.quiz.submission` for its format), written atomically, and always passes
        the grader's checks: a saved answer that would not (over the length or size limits) is left
        out and reported in :attr:`left_out` instead of failing the whole export; when all answers
        together exceed :data:`~decodelab.quiz.submission.MAX_BYTES` (256 KiB), the longest are left
        out until the file fits. The saved records themselves are never changed.

        Raises:
            ValueError: (Korean) a bad student id, no answers saved yet, or no saved answer that
                can go into a submission (then :attr:`left_out` says which and why).
            FileNotFoundError: ``out_dir`` does not exist.
        """
        sid = validate_student_id(student_id)
        answers, left_out = self.submission_answers()
        self.left_out = left_out
        if not answers and not left_out:
            raise ValueError("저장된 답이 없습니다: 먼저 문항에 답하고 '제출'을 누르세요.")
        out = Path(out_dir).expanduser()
        if not out.is_dir():
            raise FileNotFoundError(f"내보낼 폴더가 없습니다: {out}")

        def render() -> str:
            return json.dumps(make_submission(sid, answers, self.quiz_set), ensure_ascii=False, indent=1)

        text = render() if answers else ""
        while answers and len(text.encode()) + 1 > MAX_BYTES:  # + 1: the final newline
            def size(qid: str) -> int:
                return len(json.dumps(answers[qid], ensure_ascii=False).encode())

            longest = max(answers, key=lambda qid: (size(qid), qid))
            del answers[longest]
            left_out[longest] = (f"모든 답을 합치면 제출 파일 크기 한도({MAX_BYTES:,}바이트)를 넘어 가장 긴 답부터 "
                                 "뺐습니다: 이 답을 짧게 줄이세요")
            text = render() if answers else ""
        if not answers:
            raise ValueError("내보낼 수 있는 답이 없습니다: 저장된 답이 모두 제출 한도를 넘습니다. "
                             "답을 줄여 다시 제출한 뒤 내보내세요.")
        safe = re.sub(r"[^\w.-]+", "_", sid).strip("._") or "student"
        path = atomic_write_text(out / f"decodelab-{self.quiz_set}-{safe}.json", text + "\n")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self._student_file, json.dumps({"student_id": sid}, ensure_ascii=False))
        except OSError:
            pass
        return path
