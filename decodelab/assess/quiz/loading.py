"""Finding and loading the quiz files, with errors that name the file, the question and the field.

Where the quizzes are (first that applies):

1. the ``path`` argument of the loading functions;
2. the environment variable ``DECODELAB_QUIZZES`` (a folder);
3. the practice quiz bank bundled in the package (:data:`decodelab._paths.QUIZZES_DIR`, read with
   ``importlib.resources``): the same files in a checkout, an editable install and a wheel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml
from pydantic import TypeAdapter, ValidationError

from ..._paths import QUIZZES_DIR
from .schema import (
    NOTEBOOK_FILE_GLOB,
    NOTEBOOK_IDS,
    PublicQuestion,
    Question,
    QuizFile,
    QuizHeader,
)

__all__ = [
    "QUIZZES_ENV",
    "QuizError",
    "QuizProblem",
    "QuizSetView",
    "error_message",
    "get_question",
    "load_public",
    "load_quiz_file",
    "load_quiz_files",
    "load_quizzes",
    "public_question",
    "quizzes_dir",
    "read_yaml",
    "select_notebook",
]

QUIZZES_ENV = "DECODELAB_QUIZZES"
_QUESTION_ADAPTER: TypeAdapter = TypeAdapter(Question)


@dataclass(frozen=True)
class QuizProblem:
    """One problem in a quiz file: ``file``, the question id (or ``#n`` when it has none), the field
    path (``choices.2.explanation``), and a message."""

    file: str
    question: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        parts = [self.file]
        if self.question is not None:
            parts.append(f"문항 {self.question}")
        if self.field:
            parts.append(f"필드 {self.field}")
        return ": ".join(parts) + f": {self.message}"


class QuizError(ValueError):
    """A quiz file (or folder) is invalid. ``problems`` lists every problem found; ``str()`` gives one
    line per problem, each naming file, question and field."""

    def __init__(self, problems: Iterable[QuizProblem]):
        self.problems = list(problems)
        super().__init__("퀴즈 파일 오류:\n" + "\n".join(f"  - {p}" for p in self.problems))


# --------------------------------------------------------------------------------------------
# YAML with duplicate-key detection
# --------------------------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    out: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"키 {key!r}가 두 번 나옵니다", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: Path) -> Any:
    """A YAML file read with duplicate-key detection; QuizError (Korean, with line and column) if it
    is not UTF-8 or not valid YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise QuizError([QuizProblem(path.name, None, None, f"UTF-8 텍스트가 아닙니다 ({e.reason})")]) from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" ({mark.line + 1}행 {mark.column + 1}열)" if mark is not None else ""
        msg = getattr(e, "problem", None) or str(e)
        raise QuizError([QuizProblem(path.name, None, None, f"YAML 문법 오류{where}: {msg}")]) from None


# --------------------------------------------------------------------------------------------
# Validation with readable locations
# --------------------------------------------------------------------------------------------

_KINDS = "single, multiple, short, numeric, ordering"


def error_message(err: dict) -> tuple[str | None, str]:
    """(field override, Korean message) for one pydantic error dict (``ValidationError.errors()``):
    the Korean text every quiz, exercise and submission error shows."""
    typ = err.get("type", "")
    ctx = err.get("ctx") or {}
    if typ == "quiz_field":
        return ctx.get("field"), str(ctx.get("message", err.get("msg", "")))
    if typ == "missing":
        return None, "필수 필드가 없습니다"
    if typ == "extra_forbidden":
        return None, "알 수 없는 필드입니다 (철자를 확인하세요)"
    if typ == "union_tag_not_found":
        return "kind", f"kind가 없습니다 ({_KINDS} 중 하나)"
    if typ == "union_tag_invalid":
        return "kind", f"알 수 없는 kind {ctx.get('tag')!r} ({_KINDS} 중 하나)"
    if typ == "string_type":
        return None, f"문자열이어야 합니다 (받은 값: {err.get('input')!r}; YAML에서는 따옴표로 감싸세요)"
    if typ in ("float_parsing", "float_type"):
        return None, f"숫자여야 합니다 (받은 값: {err.get('input')!r})"
    if typ == "value_error":
        msg = str(err.get("msg", ""))
        return None, msg.removeprefix("Value error, ")
    if typ == "literal_error":
        return None, f"허용되지 않는 값 {err.get('input')!r} (허용: {ctx.get('expected', '')})"
    if typ in ("too_short", "string_too_short"):
        n = ctx.get("min_length")
        return None, f"너무 짧습니다 (최소 {n}{'자' if typ == 'string_too_short' else '개'})"
    if typ in ("too_long", "string_too_long"):
        n = ctx.get("max_length")
        return None, f"너무 깁니다 (최대 {n}{'자' if typ == 'string_too_long' else '개'})"
    if typ == "string_pattern_mismatch":
        return None, f"형식이 맞지 않습니다 (받은 값: {err.get('input')!r}, 형식: {ctx.get('pattern', '')})"
    if typ in ("list_type", "tuple_type"):
        return None, f"목록이어야 합니다 (받은 값: {err.get('input')!r})"
    if typ in ("dict_type", "model_type", "model_attributes_type"):
        return None, "매핑(키: 값)이어야 합니다"
    if typ in ("bool_type", "bool_parsing"):
        return None, f"true 또는 false여야 합니다 (받은 값: {err.get('input')!r})"
    if typ in ("int_type", "int_parsing"):
        return None, f"정수여야 합니다 (받은 값: {err.get('input')!r})"
    if typ.startswith(("greater_than", "less_than")):
        bound = next(iter(ctx.values()), "")
        rel = {"greater_than": "보다 커야", "greater_than_equal": "이상이어야", "less_than": "보다 작아야",
               "less_than_equal": "이하여야"}.get(typ, "범위 밖")
        return None, f"{bound}{rel} 합니다 (받은 값: {err.get('input')!r})"
    return None, f"값이 잘못됐습니다 ({typ})"


def _loc_to_field(loc: tuple, drop_tag: bool) -> str:
    parts = list(loc)
    if drop_tag and parts and isinstance(parts[0], str) and parts[0] in _KINDS.split(", "):
        parts = parts[1:]
    return ".".join(str(p) for p in parts)


def _problems_from(err: ValidationError, file: str, question: str | None, drop_tag: bool) -> list[QuizProblem]:
    out = []
    for e in err.errors():
        override, msg = error_message(e)
        field = ".".join(x for x in (_loc_to_field(tuple(e.get("loc", ())), drop_tag), override) if x)
        out.append(QuizProblem(file, question, field or None, msg))
    return out


def _question_label(raw: Any, index: int, section: str = "") -> str:
    if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"].strip():
        return raw["id"].strip()
    return f"{section}#{index + 1} (id 없음)"


def notebook_id(nb: Any) -> Any:
    """A file's ``notebook`` as the two-digit id when YAML read it as a number (``1`` -> ``"01"``)."""
    return f"{nb:02d}" if isinstance(nb, int) and not isinstance(nb, bool) else nb


def validate_entries(name: str, entries: list, validate: Callable[[dict], Any],
                     problems_of: Callable[[ValidationError, str], list[QuizProblem]], *, notebook: Any,
                     seen: dict[str, str], place: str | None = None, what: str = "문항") -> list[QuizProblem]:
    """The problems of a quiz or exercise file's entries, each validated with ``validate``.

    An entry that is not a mapping, its schema errors (``problems_of(error, label)``), an id whose
    prefix is not ``notebook`` (when that is a str), an id already in ``seen`` (id -> where it
    stood: ``place``, or the entry's ordinal ``N번째 문항`` when ``place`` is None; updated).
    """
    problems: list[QuizProblem] = []
    for i, entry in enumerate(entries):
        label = _question_label(entry, i, place or "")
        if not isinstance(entry, dict):
            problems.append(QuizProblem(name, label, None, f"{what}은 매핑(키: 값)이어야 합니다"))
            continue
        try:
            obj = validate(entry)
        except ValidationError as e:
            problems += problems_of(e, label)
            continue
        if isinstance(notebook, str) and obj.notebook != notebook[:2]:  # 04b.yaml holds 04- ids
            problems.append(QuizProblem(name, obj.id, "id", f"id는 이 파일의 notebook {notebook!r}로 시작해야 합니다"))
        if obj.id in seen:
            problems.append(QuizProblem(name, obj.id, "id", f"같은 id가 {seen[obj.id]}에도 있습니다"))
        seen[obj.id] = place or f"{i + 1}번째 문항"
    return problems


def load_quiz_file(path: str | os.PathLike) -> QuizFile:
    """Load and validate one quiz file.

    Raises:
        QuizError: every problem found, each naming file, question id and field.
        FileNotFoundError: no such file.
    """
    path = Path(path)
    name = path.name
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise QuizError([QuizProblem(name, None, None, "최상위는 notebook, title, questions 키를 가진 매핑이어야 합니다")])
    problems: list[QuizProblem] = []
    header = {k: v for k, v in raw.items() if k != "questions"}
    questions = raw.get("questions")
    try:
        QuizHeader.model_validate(header)
    except ValidationError as e:
        problems += _problems_from(e, name, None, drop_tag=False)
    if not isinstance(questions, list) or not questions:
        problems.append(QuizProblem(name, None, "questions", "문항 목록(비어 있지 않은 리스트)이 필요합니다"))
        raise QuizError(problems)
    nb = notebook_id(header.get("notebook"))
    if isinstance(nb, str) and nb in NOTEBOOK_IDS and path.stem != nb:
        problems.append(QuizProblem(name, None, "notebook", f"파일 이름 {name}과 notebook {nb!r}이 다릅니다"))
    problems += validate_entries(name, questions, _QUESTION_ADAPTER.validate_python,
                                 lambda e, label: _problems_from(e, name, label, drop_tag=True), notebook=nb, seen={})
    if problems:
        raise QuizError(problems)
    return QuizFile.model_validate(raw)


# --------------------------------------------------------------------------------------------
# Folders
# --------------------------------------------------------------------------------------------


def quizzes_dir(path: str | os.PathLike | None = None) -> Path:
    """The quiz folder: ``path``, else ``$DECODELAB_QUIZZES``, else the bundled practice quiz bank.

    Raises:
        FileNotFoundError: (Korean message) the folder does not exist.
    """
    if path is not None:
        p, how = Path(path), "인자 path"
    elif os.environ.get(QUIZZES_ENV):
        p, how = Path(os.environ[QUIZZES_ENV]), f"환경 변수 {QUIZZES_ENV}"
    else:
        p, how = QUIZZES_DIR, "패키지에 든 연습 퀴즈"
    if not p.is_dir():
        raise FileNotFoundError(
            f"퀴즈 폴더를 찾을 수 없습니다: {p} ({how}). 있는 퀴즈 폴더를 지정하세요 "
            f"(환경 변수 {QUIZZES_ENV} 또는 --quizzes)."
        )
    return p


def _quiz_paths(folder: Path) -> list[Path]:
    paths = sorted(p for p in folder.glob(NOTEBOOK_FILE_GLOB) if p.is_file() and p.stem in NOTEBOOK_IDS)
    if not paths:
        raise FileNotFoundError(f"퀴즈 파일(01.yaml ... 07.yaml)이 없습니다: {folder}")
    return paths


_CACHE: dict[tuple, list] = {}


def _load_folder(folder: Path) -> list[QuizFile]:
    paths = _quiz_paths(folder)
    key = (str(folder.resolve()),) + tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    if key in _CACHE:
        return list(_CACHE[key])
    files: list[QuizFile] = []
    problems: list[QuizProblem] = []
    for p in paths:
        try:
            files.append(load_quiz_file(p))
        except QuizError as e:
            problems += e.problems
    if problems:
        raise QuizError(problems)
    owner: dict[str, str] = {}
    for f in files:
        for q in f.questions:
            if q.id in owner:
                problems.append(QuizProblem(f"{f.notebook}.yaml", q.id, "id", f"{owner[q.id]}에도 같은 id가 있습니다"))
            owner[q.id] = f"{f.notebook}.yaml"
    if problems:
        raise QuizError(problems)
    _CACHE.clear()
    _CACHE[key] = files
    return list(files)


def load_quiz_files(path: str | os.PathLike | None = None) -> list[QuizFile]:
    """All quiz files (with keys), sorted by notebook.

    Raises:
        QuizError: an invalid file (every problem, naming file/question/field).
        FileNotFoundError: no quiz folder / no quiz files.
    """
    return _load_folder(quizzes_dir(path))


def select_notebook(notebook: str | int | None) -> str | None:
    """Normalize a notebook selector: ``"01"``/``1`` -> ``"01"``; ``None``, ``"all"``, ``"06"`` -> ``None``
    (every question: the review notebook 06 uses them all).

    Raises:
        ValueError: (Korean) anything else.
    """
    if notebook is None:
        return None
    if isinstance(notebook, int) and not isinstance(notebook, bool):
        notebook = f"{notebook:02d}"
    if isinstance(notebook, str):
        nb = notebook.strip().lower()
        if nb in ("all", "06", "전체"):
            return None
        if nb in NOTEBOOK_IDS:
            return nb
    raise ValueError(f"notebook={notebook!r}: 노트북 번호는 '01'~'07', '04b' 또는 'all'(06 복습: 전체 문항)이어야 합니다.")


def load_quizzes(path: str | os.PathLike | None = None, notebook: str | int | None = None) -> list:
    """Every question with its key, in file order (notebook 01 first).

    Args:
        path: quiz folder (default: see module docstring).
        notebook: ``"01"``...``"07"`` for one notebook's questions; ``None``/``"all"``/``"06"`` for all.

    Returns:
        list of question objects (:class:`~decodelab.assess.quiz.schema.SingleChoice`, ``MultipleChoice``,
        ``ShortAnswer``, ``NumericQuestion``, ``OrderingQuestion``), each with ``id``, ``kind``,
        ``prompt``, ``answer``, ``explanation``, ``source``, ``points``.

    Raises:
        QuizError, FileNotFoundError: see :func:`load_quiz_files`. ValueError: bad ``notebook``.
    """
    nb = select_notebook(notebook)
    return [q for f in load_quiz_files(path) for q in f.questions if nb is None or f.notebook == nb]


def get_question(question_id: str, path: str | os.PathLike | None = None):
    """The question with this id (with its key).

    Raises:
        KeyError: (Korean) no such question id.
    """
    for q in load_quizzes(path):
        if q.id == question_id:
            return q
    raise KeyError(f"문항 id {question_id!r}을(를) 찾을 수 없습니다.")


# --------------------------------------------------------------------------------------------
# The student's view
# --------------------------------------------------------------------------------------------


def public_question(q) -> PublicQuestion:
    """What a student may see of a question: id, kind, prompt, points, choices (without their
    explanations), ordering items, and the unit. Works on keyed questions and (unchanged) on
    :class:`PublicQuestion`.

    Args:
        q: a keyed question (or a :class:`PublicQuestion`, returned as is). The file's ids and order
            are kept (the widget shuffles them per student, see :mod:`decodelab.assess.quiz.shuffle`).
    """
    return q if isinstance(q, PublicQuestion) else q.public()


@dataclass
class QuizSetView:
    """What the widget shows: ``questions`` (student view, in order), ``keys`` (id -> keyed question),
    ``quiz_set`` (``"course"``), ``titles`` (notebook -> title)."""

    questions: list[PublicQuestion]
    keys: dict[str, Any] = field(default_factory=dict)
    quiz_set: str = "course"
    titles: dict[str, str] = field(default_factory=dict)


def load_public(path: str | os.PathLike | None = None, notebook: str | int | None = None) -> QuizSetView:
    """Load a quiz folder for display: what the student sees of each question, and its key.

    Raises:
        QuizError, FileNotFoundError, ValueError: as :func:`load_quizzes`.
    """
    nb = select_notebook(notebook)
    files = _load_folder(quizzes_dir(path))
    files = [f for f in files if nb is None or f.notebook == nb]
    if not files:
        raise ValueError(f"notebook={notebook!r}: 노트북 {nb}의 퀴즈 파일({nb}.yaml)이 없습니다 (있는 노트북: "
                         f"{', '.join(sorted({f.notebook for f in _load_folder(quizzes_dir(path))}))}).")
    titles = {f.notebook: f.title for f in files}
    keyed = [q for f in files for q in f.questions]
    return QuizSetView([public_question(q) for q in keyed], {q.id: q for q in keyed}, "course", titles)

