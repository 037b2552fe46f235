"""A student's answers on their own computer, saved as they are given.

Layout: ``<root>/<quiz set>/<question id>.json``, one small file per question, each written
atomically, so a kernel restart, a closed browser tab or two notebooks open at once lose nothing
(the last answer to a question wins). ``<root>`` is ``$DECODELAB_ANSWERS_DIR`` if set, else
``~/.decodelab/answers``. ``<quiz set>`` is ``course`` (the practice quizzes).

A record: ``{"question_id", "response", "saved_at" (UTC ISO 8601), "attempts", "score"}``;
``response`` is exactly what the student gave (a choice id, a list of ids, the raw text of a
short or numeric answer, even one that could not be read as a number); ``score`` is in [0, 1], or
``None`` when not graded (unreadable input, or a short answer sent to review).

The exercises of :mod:`decodelab.assess.exercises` are saved in the same folder (quiz set ``course``) with
a ``kind`` field (``prediction``, ``written``, ``task``) and their own fields (``revealed``,
``passed``); they go into the submission's ``exercises``, never into its ``answers``.

On a JupyterHub (``$JUPYTERHUB_USER`` set, see :func:`hub_user`) the student id is the hub login:
every record also carries ``"student": <hub name>``, the choice order and the submission file use
that name, and an export under another name is refused.

``<root>/student.json`` remembers the student id of the last export and the ``shuffle_key``: the key
of the order in which this student sees the choices (see :mod:`decodelab.assess.quiz.shuffle`), fixed the
first time a widget needs it (the student id if one is known, else a random key) and written into
every submission so that the lecturer can reproduce what the student saw.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..._atomic import atomic_write_text
from .schema import QUESTION_ID, QUIZ_SET
from .submission import EXERCISE_KINDS, MAX_BYTES, answer_problem, make_submission, validate_student_id

__all__ = ["ANSWERS_ENV", "HUB_USER_ENV", "AnswerStore", "answers_root", "hub_user", "text_problem"]

ANSWERS_ENV = "DECODELAB_ANSWERS_DIR"
#: set by JupyterHub in every single-user server: the name the student logged in with
HUB_USER_ENV = "JUPYTERHUB_USER"
_MAX_RECORD = 64 * 1024


def answers_root(root: str | os.PathLike | None = None) -> Path:
    """``root``, else ``$DECODELAB_ANSWERS_DIR``, else ``~/.decodelab/answers`` (not created here)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(ANSWERS_ENV)
    return Path(env).expanduser() if env else Path.home() / ".decodelab" / "answers"


def hub_user() -> str | None:
    """The student's JupyterHub name (``$JUPYTERHUB_USER``) when running on a hub, else None.

    On a hub this is the student id everywhere (choice order, saved records, submission file): the
    login decides it, never a typed id.
    """
    name = os.environ.get(HUB_USER_ENV, "").strip()
    return name or None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be saved as an answer, or None: a NUL character (it would end up raw in
    the practice report's CSV) or a lone surrogate (not encodable as UTF-8, e.g. half of an emoji
    pasted from a broken source). The reason is Korean and says what to change."""
    if "\x00" in text:
        return "답에 보이지 않는 NUL 문자(\\x00)가 들어 있습니다: 그 문자를 지우고 다시 입력하세요"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"답의 {e.start + 1}번째 글자가 깨진 문자(짝 없는 서로게이트 U+{ord(text[e.start]):04X})입니다: "
                "그 부분을 지우고 다시 입력하세요 (이모지나 특수 문자를 다시 붙여 넣어 보세요)")
    return None


def _check_response(response: Any) -> Any:
    """``response`` if it is a savable answer.

    Raises:
        TypeError: not None, str, number, or list of str.
        ValueError: a text holds a NUL or a lone surrogate (:func:`text_problem`).
    """
    ok = (
        response is None
        or isinstance(response, str)
        or (isinstance(response, (int, float)) and not isinstance(response, bool))
        or (isinstance(response, list) and all(isinstance(x, str) for x in response))
    )
    if not ok:
        raise TypeError(f"저장할 수 없는 답 형식입니다: {type(response).__name__}")
    for text in ([response] if isinstance(response, str) else response if isinstance(response, list) else []):
        why = text_problem(text)
        if why is not None:
            raise ValueError(why)
    return response


def _record_text(record: dict) -> str:
    """``record`` as the JSON text saved on disk, refused when :meth:`AnswerStore.load` could not read
    it back (over ``_MAX_RECORD`` bytes).

    Raises:
        ValueError: (Korean) the record is too big; nothing is written.
    """
    text = json.dumps(record, ensure_ascii=False)
    size = len(text.encode("utf-8"))
    if size > _MAX_RECORD:
        raise ValueError(f"문항 {record.get('question_id')}: 답이 너무 깁니다 (저장하면 {size:,}바이트, 한도 "
                         f"{_MAX_RECORD:,}바이트): 답을 줄이세요. 저장하지 않았습니다.")
    return text


class AnswerStore:
    """Answers of one quiz set on this computer.

    Args:
        quiz_set: ``"course"``.
        root: answers folder (default: see :func:`answers_root`).

    Attributes:
        dir: ``<root>/<quiz_set>``; created on the first save, never on reading.
        problems: unreadable record files met by :meth:`load` (they are skipped, not deleted).
        left_out: question id -> Korean reason, for each saved answer the last :meth:`export` left
            out of the submission file (see :meth:`submission_answers`); ``{}`` when none.
    """

    def __init__(self, quiz_set: str = "course", root: str | os.PathLike | None = None):
        if not QUIZ_SET.fullmatch(quiz_set):
            raise ValueError(f"quiz_set={quiz_set!r}: 'course'여야 합니다.")
        self.quiz_set = quiz_set
        self.root = answers_root(root)
        self.dir = self.root / quiz_set
        self.problems: list[str] = []
        self.problem_ids: list[str] = []
        self.left_out: dict[str, str] = {}

    def _path(self, question_id: str) -> Path:
        if not isinstance(question_id, str) or not QUESTION_ID.fullmatch(question_id):
            raise ValueError(f"문항 id {question_id!r}의 형식이 잘못됐습니다 (형식: NN-이름, NN = 01..07).")
        return self.dir / f"{question_id}.json"

    def load(self) -> dict[str, dict]:
        """Every saved record, by question id.

        Unreadable records (truncated or corrupted JSON, too big, another question's record) are
        skipped, left on disk, and listed in ``problems`` as Korean lines naming the question, e.g.
        ``"문항 01-decode-definition: 저장된 답을 읽을 수 없습니다 (파일이 잘렸거나 손상됨) ..."``;
        :attr:`problem_ids` holds their question ids.
        """
        self.problems = []
        self.problem_ids: list[str] = []
        out: dict[str, dict] = {}
        if not self.dir.is_dir():
            return out
        for p in sorted(self.dir.glob("*.json")):
            qid = p.stem
            if not QUESTION_ID.fullmatch(qid):
                continue
            try:
                if p.stat().st_size > _MAX_RECORD:
                    raise ValueError(f"파일이 너무 큽니다 (한도 {_MAX_RECORD:,}바이트)")
                try:
                    rec = json.loads(p.read_text(encoding="utf-8"))
                except UnicodeDecodeError:
                    raise ValueError("UTF-8 텍스트가 아닙니다 (파일이 손상됨)") from None
                except json.JSONDecodeError:
                    raise ValueError("파일이 잘렸거나 손상되었습니다") from None
                if not isinstance(rec, dict) or rec.get("question_id") != qid:
                    raise ValueError("다른 문항의 기록이거나 형식이 다릅니다")
                _check_response(rec.get("response"))
            except OSError as e:
                self.problems.append(f"문항 {qid}: 저장된 답을 읽을 수 없습니다 ({e.strerror or '읽기 오류'}).")
                self.problem_ids.append(qid)
                continue
            except (ValueError, TypeError) as e:
                self.problems.append(f"문항 {qid}: 저장된 답을 읽을 수 없습니다 ({e}). 파일 {p.name}은(는) 지우지 "
                                     "않았습니다: 이 문항에 다시 답하면 새 답으로 바뀝니다.")
                self.problem_ids.append(qid)
                continue
            out[qid] = rec
        return out

    def get(self, question_id: str) -> dict | None:
        """The saved record of one question, or None."""
        return self.load().get(question_id)

    def save(self, question_id: str, response: Any, *, score: float | None = None,
             extra: dict[str, Any] | None = None) -> dict:
        """Save one answer now (atomic write). ``attempts`` counts the saves of this question.

        Args:
            question_id: ``NN-name``.
            response: None, str, number, or list of str.
            score: in [0, 1] or None.
            extra: more fields of the record (the exercises' ``kind``, ``revealed``, ``passed``).

        Raises:
            TypeError: ``response`` is not None, str, number, or list of str.
            ValueError: (Korean) a text with a NUL or a lone surrogate, or a record over the size
                :meth:`load` reads back (64 KiB); nothing is written.
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
        if hub_user():
            record["student"] = hub_user()
        for k, v in (extra or {}).items():
            if k not in record:
                record[k] = v
        text = _record_text(record)
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return record

    def update(self, question_id: str, **fields: Any) -> dict:
        """Set fields of a saved record (creating ``{"response": None}`` if there is none), e.g. the
        value an exercise revealed; ``attempts`` and ``response`` stay as they were.

        Raises:
            ValueError: (Korean) the record would exceed the size :meth:`load` reads back.
            OSError: the file could not be written.
        """
        path = self._path(question_id)
        record = self.get(question_id) or {"question_id": question_id, "response": None, "attempts": 0,
                                           "score": None}
        record.update(fields)
        if hub_user():
            record["student"] = hub_user()
        record["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        text = _record_text(record)
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return record

    # ---------------------------------------------------------------- student id and export

    @property
    def _student_file(self) -> Path:
        return self.root / "student.json"

    def _student_info(self) -> dict:
        try:
            info = json.loads(self._student_file.read_text(encoding="utf-8"))
            return info if isinstance(info, dict) else {}
        except (OSError, ValueError):
            return {}

    def student_id(self) -> str:
        """The hub name on a JupyterHub (:func:`hub_user`), else the student id remembered from the
        last export ("" if none)."""
        if hub_user():
            return hub_user()
        sid = self._student_info().get("student_id", "")
        return sid if isinstance(sid, str) else ""

    def shuffle_key(self, student_id: str | None = None) -> str:
        """The key of the order in which this student sees choices (see :mod:`decodelab.assess.quiz.shuffle`).

        Fixed on first use and remembered in ``<root>/student.json``: ``student_id`` (or the one
        remembered from an export) when there is one, else a random ``anon-...`` key. If the file
        cannot be written, the key is still returned (the order then holds for this session).
        """
        info = self._student_info()
        key = info.get("shuffle_key")
        if hub_user():
            student_id = hub_user()
            if key != student_id:  # on a hub the order follows the login, not an earlier typed id
                key = None
        try:
            if isinstance(key, str) and key:
                return validate_student_id(key)
        except ValueError:
            pass
        sid = student_id or self.student_id()
        try:
            key = validate_student_id(sid) if sid else ""
        except ValueError:
            key = ""
        key = key or f"anon-{secrets.token_hex(6)}"
        info["shuffle_key"] = key
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self._student_file, json.dumps(info, ensure_ascii=False))
        except OSError:
            pass
        return key

    def exercise_entries(self) -> dict[str, dict]:
        """The saved exercise records as submission entries: id -> ``{"kind", "response", ...}``
        (see :class:`decodelab.assess.quiz.submission.ExerciseAnswer`); entries over the limits are left out
        (and added to :attr:`left_out`)."""
        out: dict[str, dict] = {}
        for qid, rec in self.load().items():
            kind = rec.get("kind")
            if kind not in EXERCISE_KINDS:
                continue
            entry: dict[str, Any] = {"kind": kind, "response": rec.get("response")}
            if kind == "prediction" and rec.get("revealed") is not None:
                entry["revealed"] = rec["revealed"]
            if kind == "task" and isinstance(rec.get("passed"), bool):
                entry["passed"] = rec["passed"]
            why = next((answer_problem(v) for v in (entry["response"], entry.get("revealed"))
                        if v is not None and answer_problem(v) is not None), None)
            if why is not None:
                self.left_out[qid] = why
                continue
            out[qid] = entry
        return out

    def submission_answers(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The saved answers split into those a submission file can hold and those it cannot.

        Returns:
            ``(answers, left_out)``: question id -> response for every saved answer within the
            submission limits (:func:`decodelab.assess.quiz.submission.answer_problem`), and question id ->
            Korean reason for each one that is not (e.g. a 2,500-character text saved by an older
            version of the widget). Nothing is deleted: the records stay on disk.
        """
        answers: dict[str, Any] = {}
        left_out: dict[str, str] = {}
        for qid, rec in self.load().items():
            response = rec.get("response")
            if response is None or rec.get("kind") in EXERCISE_KINDS:
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
        :mod:`decodelab.assess.quiz.submission` for its format), written atomically, and always passes
        the grader's checks: a saved answer that would not (over the length or size limits) is left
        out and reported in :attr:`left_out` instead of failing the whole export; when all answers
        together exceed :data:`~decodelab.assess.quiz.submission.MAX_BYTES` (256 KiB), the longest are left
        out until the file fits. The saved records themselves are never changed.

        On a JupyterHub the student id is the hub name (:func:`hub_user`); ``student_id`` must then
        be empty or that name.

        Raises:
            ValueError: (Korean) a bad student id, another name than the hub login, no answers saved
                yet, or no saved answer that can go into a submission (then :attr:`left_out` says
                which and why).
            FileNotFoundError: ``out_dir`` does not exist.
        """
        if hub_user():
            if student_id and student_id != hub_user():
                raise ValueError(f"JupyterHub에 {hub_user()}(으)로 로그인했으므로 그 이름으로만 낼 수 있습니다: "
                                 f"학번 칸을 비우거나 {hub_user()}(으)로 두세요.")
            student_id = hub_user()
        sid = validate_student_id(student_id)
        answers, left_out = self.submission_answers()
        unreadable = dict(zip(self.problem_ids, self.problems))
        self.left_out = left_out
        exercises = self.exercise_entries()
        for qid, problem in unreadable.items():  # corrupt records: reported, never silently dropped
            left_out[qid] = problem.split(": ", 1)[-1].rstrip(".") + " (이 기록은 제출 파일에서 뺐습니다)"
        key = self.shuffle_key(sid)
        if not answers and not left_out and not exercises:
            raise ValueError("저장된 답이 없습니다: 먼저 문항에 답하고 '제출'을 누르세요.")
        out = Path(out_dir).expanduser()
        if not out.is_dir():
            raise FileNotFoundError(f"내보낼 폴더가 없습니다: {out}")

        def render() -> str:
            return json.dumps(make_submission(sid, answers, self.quiz_set, shuffle_key=key, exercises=exercises),
                              ensure_ascii=False, indent=1)

        text = render() if answers or exercises else ""
        while answers and len(text.encode()) + 1 > MAX_BYTES:  # + 1: the final newline
            def size(qid: str) -> int:
                return len(json.dumps(answers[qid], ensure_ascii=False).encode())

            longest = max(answers, key=lambda qid: (size(qid), qid))
            del answers[longest]
            left_out[longest] = (f"모든 답을 합치면 제출 파일 크기 한도({MAX_BYTES:,}바이트)를 넘어 가장 긴 답부터 "
                                 "뺐습니다: 이 답을 짧게 줄이세요")
            text = render() if answers or exercises else ""
        if not answers and not exercises:
            raise ValueError("내보낼 수 있는 답이 없습니다: 저장된 답이 모두 제출 한도를 넘습니다. "
                             "답을 줄여 다시 제출한 뒤 내보내세요.")
        safe = re.sub(r"[^\w.-]+", "_", sid).strip("._") or "student"
        path = atomic_write_text(out / f"decodelab-{self.quiz_set}-{safe}.json", text + "\n")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            info = self._student_info()
            info["student_id"] = sid
            atomic_write_text(self._student_file, json.dumps(info, ensure_ascii=False))
        except OSError:
            pass
        return path
