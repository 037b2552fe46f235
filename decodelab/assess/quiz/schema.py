"""The quiz file schema (pydantic v2): five question kinds, their sources, and the student view.

Each kind is a class with its own rules, so nothing else switches on ``kind``: ``parse`` (read a
response, or a Korean :class:`~decodelab.assess.quiz.normalize.ResponseError` saying what to change),
``score`` (score in [0, 1] or ``None`` for review, and the feedback lines), ``answer_text`` (the
right answer, readable), ``options`` / ``option_labels`` (what a student picks or orders, and the
positional labels the widget shows them under) and ``public`` (what a student sees).

A quiz file (``quizzes/NN.yaml``) looks like::

    notebook: "01"
    title: 디코드 단계
    questions:
      - id: 01-decode-definition
        kind: single            # single | multiple | short | numeric | ordering
        prompt: ...
        choices:
          - {id: a, text: ..., explanation: 왜 틀렸는지}
          - {id: b, text: ...}
        answer: b
        explanation: 왜 맞는지
        source: {seed: "000", passage: 한 문장으로 이해하기}

Kinds and their answer fields:

- ``single``: ``choices`` (>= 2), ``answer`` = one choice id.
- ``multiple``: ``choices``, ``answer`` = list of choice ids (partial credit, see grading).
- ``short``: ``answer`` (Korean text), ``accepted`` (other whole answers), ``concepts`` (required
  concept groups of alternative stems), ``neutral`` (stems a right answer may add),
  ``misconceptions`` (``{match, explanation, within, decisive}``: wrong ideas that score 0).
  Undecided answers go to the lecturer's review (see :class:`ShortAnswer`).
- ``numeric``: ``answer`` (number), ``tolerance`` (absolute, in ``unit``), ``unit`` (a key of
  :data:`decodelab.assess.quiz.normalize.UNITS`).
- ``ordering``: ``items`` (>= 3, with ids), ``answer`` = the item ids in the right order.

Every wrong choice needs its own ``explanation``. Unknown fields are errors (typos such as
``explantion`` are caught). :class:`PublicQuestion` is what the widget shows of a question: no
answer, no explanation, no source.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .matching import SHORT_REASONS, misconception_of, short_verdict, states
from .normalize import UNITS, ResponseError, normalize_text, normalize_unit, parse_quantity

__all__ = [
    "CHOICE_LABELS",
    "ITEM_LABELS",
    "Choice",
    "Identified",
    "Item",
    "Misconception",
    "MultipleChoice",
    "NOTEBOOK_IDS",
    "NumericQuestion",
    "OrderingQuestion",
    "QUESTION_ID",
    "QUIZ_SET",
    "PublicChoice",
    "PublicItem",
    "PublicQuestion",
    "Question",
    "QuizFile",
    "QuizHeader",
    "ShortAnswer",
    "SingleChoice",
    "Source",
    "Strict",
]

NOTEBOOK_IDS = ("01", "02", "03", "04", "04b", "05", "06", "07")
"""Notebooks that may have quiz and exercise files (06 = review, 07 = real-server measurement). ``04b`` is
the second part of notebook 04 (speculative decoding: alpha, speedup and EAGLE): its questions and
exercises keep the ``04-`` prefix of their ids (saved answers and the exam name them), so an item's
:attr:`Identified.notebook` is ``"04"`` while its file is ``04b.yaml``."""
NOTEBOOK_FILE_GLOB = "[0-9][0-9]*.yaml"
"""Quiz and exercise files: ``NN.yaml`` and ``04b.yaml`` (filter the stems with :data:`NOTEBOOK_IDS`)."""
QUESTION_ID = re.compile(r"(0[1-7])-[a-z0-9]+(?:-[a-z0-9]+)*")
"""A question (or exercise) id: ``NN-name`` (NN = 01..07; lowercase letters, digits, hyphens). Also the
file name of a saved answer and a key of a submission's ``answers``. Always matched whole
(``fullmatch``; a trailing newline is not allowed)."""
QUIZ_SET = re.compile(r"course")
"""The quiz set of saved answers and submissions: ``course`` (the practice quizzes); matched whole."""
SEEDS = ("000", "001")
CHOICE_LABELS = ("1", "2", "3", "4", "5", "6", "7", "8")
"""Labels of the shown choices, by position (see :mod:`decodelab.assess.quiz.shuffle`)."""
ITEM_LABELS = ("가", "나", "다", "라", "마", "바", "사", "아")
"""Labels of the shown ordering items, by position."""
MAX_TEXT = 2000
"""The longest short answer :meth:`ShortAnswer.parse` reads (characters)."""
_SEPARATORS = re.compile(r"[\s,;/>→·\-]+")


def field_error(field: str, message: str) -> PydanticCustomError:
    """A validation error that names the offending field (cross-field checks in model validators)."""
    return PydanticCustomError("quiz_field", "{field}: {message}", {"field": field, "message": message})


class Strict(BaseModel):
    """Base of every quiz and exercise model: unknown fields are errors, frozen, strings stripped."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Identified(Strict):
    """A quiz question or exercise: an ``id`` ``NN-이름`` whose prefix is its notebook."""

    id: str

    @field_validator("id")
    @classmethod
    def _id_form(cls, v: str) -> str:
        if not QUESTION_ID.fullmatch(v):
            raise ValueError(
                "형식은 'NN-이름' (NN = 01..07, 이름은 소문자/숫자/하이픈)이어야 합니다, 예: 01-decode-definition"
            )
        return v

    @property
    def notebook(self) -> str:
        """The notebook this question belongs to (``"01"``...), from the id prefix."""
        return self.id[:2]


class Option(Strict):
    """One option of a choice: ``id`` ``a``..``h`` and its ``text``."""

    id: str = Field(pattern=r"^[a-h]\z")
    text: str = Field(min_length=1)


class Source(Strict):
    """Where a question comes from: a seed article, a notebook section, or a facts file row.

    At least one of ``seed`` (``"000"`` or ``"001"``), ``notebook`` (``"01"``-``"07"``), ``facts``
    (a file in ``facts/``) is given, plus ``passage``: the section, paragraph or table row.
    """

    seed: Literal["000", "001"] | None = None
    notebook: Literal["01", "02", "03", "04", "04b", "05", "06", "07"] | None = None
    facts: Literal["hardware.md", "speculative.md", "tiny-model-feasibility.md"] | None = None
    passage: str = Field(min_length=2)

    @model_validator(mode="after")
    def _one_origin(self) -> "Source":
        if self.seed is None and self.notebook is None and self.facts is None:
            raise field_error("seed", "seed, notebook, facts 중 하나는 있어야 합니다")
        return self


class Choice(Option):
    """One option of a single/multiple choice question; ``explanation`` says why it is right or
    wrong (required for wrong options)."""

    explanation: str | None = None


class Item(Strict):
    """One element of an ordering question."""

    id: str = Field(pattern=r"^[A-H]\z")
    text: str = Field(min_length=1)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _label(labels: dict[str, str] | None, oid: str) -> str:
    return labels.get(oid, oid) if labels else oid


def _split_ids(response: Any, valid: list[str], upper: bool) -> list[str]:
    if isinstance(response, str):
        s = response.strip()
        s = s.upper() if upper else s.lower()
        parts = [p for p in _SEPARATORS.split(s) if p]
        if len(parts) == 1 and len(parts[0]) > 1 and all(ch in valid for ch in parts[0]):
            parts = list(parts[0])
        return parts
    if isinstance(response, (list, tuple)) and all(isinstance(x, str) for x in response):
        return [x.strip().upper() if upper else x.strip().lower() for x in response]
    raise ResponseError("선택한 항목의 id 목록을 주세요 (예: ['a', 'c']).")


class _Base(Identified):
    """What every kind has (prompt, explanation, source, points) and does (the kind's rules)."""

    prompt: str = Field(min_length=5)
    explanation: str = Field(min_length=5)
    source: list[Source] = Field(min_length=1)
    points: float = Field(default=1.0, gt=0, le=100)

    option_labels: ClassVar[tuple[str, ...]] = ()
    """The positional labels the widget shows the options under (empty: a question without options)."""

    @field_validator("source", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    @property
    def options(self) -> list:
        """The options a student picks or orders (``choices`` or ``items``), in file order; ``[]`` for none."""
        return []

    def parse(self, response: Any) -> Any:
        """``response`` read for this kind (see :func:`decodelab.assess.quiz.grading.parse_response`).

        Raises:
            ResponseError: (Korean) empty, or not an answer of this kind; the message says what to change.
        """
        if response is None or (isinstance(response, str) and not response.strip()):
            raise ResponseError("답이 비어 있습니다: 답을 입력하거나 고르세요.")
        return self._parse(response)

    def _parse(self, response: Any) -> Any:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def score(self, value: Any, labels: dict[str, str] | None = None) -> tuple[float | None, list[str]]:
        """``(score, feedback)`` for a parsed ``value``: score in [0, 1] (``None``: the lecturer's review),
        feedback lines that name options under ``labels`` (option id -> shown label)."""
        raise NotImplementedError  # pragma: no cover - every kind overrides it

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """The right answer, readable by a student (options under ``labels``)."""
        raise NotImplementedError  # pragma: no cover - every kind overrides it

    def public(self) -> "PublicQuestion":
        """What a student sees of this question: no key, no explanation, no source."""
        return PublicQuestion(id=self.id, kind=self.kind, prompt=self.prompt, points=self.points,  # type: ignore[attr-defined]
                              **self._public_fields())

    def _public_fields(self) -> dict[str, Any]:
        return {}


def _check_choices(choices: list[Choice], answer_ids: list[str]) -> None:
    ids = [c.id for c in choices]
    if len(set(ids)) != len(ids):
        raise field_error("choices", f"선택지 id가 겹칩니다: {ids}")
    for a in answer_ids:
        if a not in ids:
            raise field_error("answer", f"정답 {a!r}이(가) 선택지 id {ids}에 없습니다")
    for c in choices:
        if c.id not in answer_ids and not c.explanation:
            raise field_error(f"choices.{c.id}.explanation", "오답 선택지마다 왜 틀렸는지 설명이 필요합니다")


class _Choices(_Base):
    """A question whose options are ``choices`` (labelled ``1``, ``2``, ... in the widget)."""

    option_labels: ClassVar[tuple[str, ...]] = CHOICE_LABELS

    @property
    def options(self) -> list:
        """The ``choices``, in file order."""
        return list(self.choices)  # type: ignore[attr-defined]

    def _public_fields(self) -> dict[str, Any]:
        return {"choices": [PublicChoice(id=c.id, text=c.text) for c in self.choices]}  # type: ignore[attr-defined]


class SingleChoice(_Choices):
    """One right option among ``choices``: 1 for it, else 0 (with the chosen option's explanation)."""

    kind: Literal["single"]
    choices: list[Choice] = Field(min_length=2, max_length=8)
    answer: str

    @model_validator(mode="after")
    def _answer_in_choices(self) -> "SingleChoice":
        _check_choices(self.choices, [self.answer])
        return self

    def _parse(self, response: Any) -> str:
        ids = [c.id for c in self.choices]
        if isinstance(response, (list, tuple)) and len(response) == 1:
            response = response[0]
        if not isinstance(response, str) or response.strip().lower() not in ids:
            raise ResponseError(f"선택지 {', '.join(ids)} 중 하나를 고르세요.")
        return response.strip().lower()

    def score(self, value: str, labels: dict[str, str] | None = None) -> tuple[float, list[str]]:
        """1 for the answer; else 0 and why the chosen option is wrong."""
        if value == self.answer:
            return 1.0, []
        c = next(c for c in self.choices if c.id == value)
        return 0.0, [f"{_label(labels, c.id)}: {c.explanation}"]

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """``"<label>. <text>"`` of the right option."""
        c = next(c for c in self.choices if c.id == self.answer)
        return f"{_label(labels, c.id)}. {c.text}"


class MultipleChoice(_Choices):
    """Several right options; the student picks all that apply:
    ``max(0, (right picks - wrong picks) / number of right options)``."""

    kind: Literal["multiple"]
    choices: list[Choice] = Field(min_length=3, max_length=8)
    answer: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _answers_in_choices(self) -> "MultipleChoice":
        if len(set(self.answer)) != len(self.answer):
            raise field_error("answer", "정답 id가 겹칩니다")
        _check_choices(self.choices, self.answer)
        return self

    def _parse(self, response: Any) -> list[str]:
        ids = [c.id for c in self.choices]
        picked = _split_ids(response, ids, upper=False)
        bad = [p for p in picked if p not in ids]
        if bad or not picked:
            raise ResponseError(f"선택지 {', '.join(ids)} 중에서 하나 이상 고르세요 (알 수 없는 선택: {bad}).")
        return sorted(set(picked))

    def score(self, value: list[str], labels: dict[str, str] | None = None) -> tuple[float, list[str]]:
        """Partial credit; why each wrongly picked option is wrong, and the right ones missed."""
        right, picked = set(self.answer), set(value)
        hits, wrong = len(picked & right), len(picked - right)
        feedback = [f"{_label(labels, c.id)} (고르지 말아야 할 것): {c.explanation}"
                    for c in self.choices if c.id in picked - right]
        missed = sorted(_label(labels, m) for m in right - picked)
        if missed:
            feedback.append(f"빠뜨린 정답: {', '.join(missed)}")
        return max(0.0, (hits - wrong) / len(right)), feedback

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """The right options, ``"<label>. <text>"`` joined by ``" / "`` in label order."""
        picked = sorted((_label(labels, c.id), c.text) for c in self.choices if c.id in self.answer)
        return " / ".join(f"{lab}. {text}" for lab, text in picked)


def _groups(v: Any) -> Any:
    """``[a, b]`` (one group of alternatives) or ``[[a, b], [c]]`` (several groups)."""
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return [v]
    return v


def _check_groups(field: str, groups: list[list[str]]) -> None:
    if not groups:
        raise field_error(field, "대안 목록이 하나 이상 있어야 합니다")
    for i, group in enumerate(groups):
        if not group:
            raise field_error(f"{field}.{i}", "빈 목록은 쓸 수 없습니다: 대안 표현을 하나 이상 적으세요")
        for j, k in enumerate(group):
            if not normalize_text(k):
                raise field_error(f"{field}.{i}.{j}", "정규화하면 빈 문자열이 됩니다: 글자가 있는 표현을 적으세요")


class Misconception(Strict):
    """A wrong idea a student may write; an answer that states it scores 0 with this explanation.

    ``match`` is a list of groups of alternative stems (written like ``concepts``); the answer
    states the misconception when every group has an alternative in it that is not negated
    (``"토큰을 지우는 게 아니라"`` does not state "지운다"), and with several groups all hits lie
    within ``within`` folded characters (default 10), so ``[[GPU, 칩], [커지, 커져]]`` catches
    "GPU가 커져서" but not "GPU를 여러 번 호출하면 지연이 커져서". A flat list is one group.

    An answer that states a misconception and also every concept goes to review (a mixed answer:
    "CPU보다 GPU"), unless the misconception is ``decisive``: a wrong cause or claim that the
    concept words do not make right ("메모리가 부족해서 시간이 늘어난다") scores 0 all the same.
    """

    match: list[list[str]]
    explanation: str = Field(min_length=5)
    within: int = Field(default=10, ge=1, le=200)
    decisive: bool = False

    @field_validator("match", mode="before")
    @classmethod
    def _flat(cls, v: Any) -> Any:
        return _groups(v)

    @model_validator(mode="after")
    def _nonempty(self) -> "Misconception":
        _check_groups("match", self.match)
        return self


class ShortAnswer(_Base):
    """A short Korean answer, graded by :func:`decodelab.assess.quiz.grading.grade_short` into 1, 0 or review.

    Fields (all compared after :func:`~decodelab.assess.quiz.normalize.normalize_text`: NFKC, case folded,
    no spaces or punctuation, so spacing never matters):

    - ``answer``: the model answer (shown to the student after grading; also an accepted form).
    - ``accepted``: other whole answers that are right as they stand (a polite ending such as
      ``입니다`` may follow).
    - ``concepts``: required concept groups; each group lists alternative *stems* (``쌓``,
      ``누적``, ``곱해``), so particles and endings do not matter. An answer that has a hit, not
      negated, for every group is right.
    - ``misconceptions``: wrong ideas (:class:`Misconception`), each with its explanation; an answer
      that states one scores 0.
    - ``neutral``: stems a right answer may add that neither state nor contradict the concept
      (``토큰``, ``모델``, ``계속``). An answer that states every concept gets full credit only when
      the rest of it is neutral stems, denied misconceptions, particles and endings; anything else
      goes to review (:func:`decodelab.assess.quiz.matching.short_verdict`).

    Everything else (an answer the rules cannot decide) goes to the lecturer's review. The old
    names ``keywords`` / ``forbidden`` are rejected with a message naming the new field.
    """

    kind: Literal["short"]
    answer: str = Field(min_length=1)
    accepted: list[str] = Field(default_factory=list)
    concepts: list[list[str]] = Field(default_factory=list)
    misconceptions: list[Misconception] = Field(default_factory=list)
    neutral: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "keywords" in data:
                raise field_error("keywords", "이름이 concepts로 바뀌었습니다 (필수 개념 묶음의 목록): keywords를 concepts로 고치세요")
            if "forbidden" in data:
                raise field_error(
                    "forbidden",
                    "misconceptions로 바뀌었습니다: 각 항목을 {match: [표현, ...], explanation: 왜 틀렸는지}로 적으세요",
                )
        return data

    @field_validator("concepts", mode="before")
    @classmethod
    def _flat(cls, v: Any) -> Any:
        return _groups(v)

    @model_validator(mode="after")
    def _forms(self) -> "ShortAnswer":
        if not normalize_text(self.answer):
            raise field_error("answer", "정규화하면 빈 문자열이 됩니다")
        for i, a in enumerate(self.accepted):
            if not normalize_text(a):
                raise field_error(f"accepted.{i}", "정규화하면 빈 문자열이 됩니다")
        if self.concepts:
            _check_groups("concepts", self.concepts)
        for i, k in enumerate(self.neutral):
            if not normalize_text(k):
                raise field_error(f"neutral.{i}", "정규화하면 빈 문자열이 됩니다: 글자가 있는 표현을 적으세요")
        for form in [self.answer, *self.accepted]:
            for i, m in enumerate(self.misconceptions):
                if states(m.match, form, m.within, contrast=True):
                    raise field_error(f"misconceptions.{i}.match", f"정답 형태 {form!r}도 이 오개념에 걸립니다: 표현을 좁히세요")
        return self

    def _parse(self, response: Any) -> str:
        if not isinstance(response, str):
            raise ResponseError("글로 답하세요 (문자열).")
        if len(response) > MAX_TEXT:
            raise ResponseError(f"답이 너무 깁니다 ({len(response)}자): {MAX_TEXT}자 이내로 짧게 쓰세요.")
        if not normalize_text(response):
            raise ResponseError("답이 비어 있습니다: 글자로 답하세요.")
        return response

    def score(self, value: str, labels: dict[str, str] | None = None) -> tuple[float | None, list[str]]:
        """:func:`~decodelab.assess.quiz.matching.short_verdict`'s score; the misconception's explanation, or
        the reason when not full credit."""
        score, reason = short_verdict(self, value)
        m = misconception_of(self, value) if reason == "misconception" else None
        if m is not None:
            return score, [m.explanation]
        return score, [] if score == 1.0 else [SHORT_REASONS[reason]]

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """The model answer."""
        return self.answer


class NumericQuestion(_Base):
    """A number with a unit; right when ``|response - answer| <= tolerance`` (both in ``unit``)."""

    kind: Literal["numeric"]
    answer: float
    tolerance: float = Field(ge=0)
    unit: str = ""

    @field_validator("answer")
    @classmethod
    def _finite(cls, v: float) -> float:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("유한한 수여야 합니다")
        return v

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, v: str) -> str:
        if normalize_unit(v) not in UNITS:
            raise ValueError(f"알 수 없는 단위 {v!r} (decodelab.assess.quiz.normalize.UNITS에 있는 것을 쓰세요)")
        return v

    def _parse(self, response: Any) -> float:
        return parse_quantity(response, self.unit or "")

    def score(self, value: float, labels: dict[str, str] | None = None) -> tuple[float, list[str]]:
        """1 within the tolerance (and a relative 1e-9 for rounding), else 0 and how far off."""
        diff = abs(value - self.answer)
        if diff <= self.tolerance + 1e-9 * max(1.0, abs(self.answer)):
            return 1.0, []
        return 0.0, [f"입력한 값 {_fmt(value)} {self.unit}".rstrip() + f"은(는) 정답과 {_fmt(diff)} {self.unit}".rstrip()
                     + " 차이가 납니다."]

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """``"<answer> <unit>"`` and the tolerance."""
        tol = f" (허용 오차 ±{_fmt(self.tolerance)})" if self.tolerance else ""
        return f"{_fmt(self.answer)} {self.unit}".rstrip() + tol

    def _public_fields(self) -> dict[str, Any]:
        return {"unit": self.unit}


class OrderingQuestion(_Base):
    """Put ``items`` in the right order; ``answer`` lists every item id once. 1 for exactly that order."""

    kind: Literal["ordering"]
    items: list[Item] = Field(min_length=3, max_length=8)
    answer: list[str]

    option_labels: ClassVar[tuple[str, ...]] = ITEM_LABELS

    @property
    def options(self) -> list:
        """The ``items``, in file order."""
        return list(self.items)

    def _parse(self, response: Any) -> list[str]:
        ids = [i.id for i in self.items]
        order = _split_ids(response, ids, upper=True)
        if sorted(order) != sorted(ids):
            raise ResponseError(f"항목 {', '.join(sorted(ids))}를 한 번씩 모두 써서 순서를 정하세요 (예: {' '.join(ids)}).")
        return order

    def score(self, value: list[str], labels: dict[str, str] | None = None) -> tuple[float, list[str]]:
        """1 for exactly the right order, else 0."""
        return (1.0 if list(value) == list(self.answer) else 0.0), []

    def answer_text(self, labels: dict[str, str] | None = None) -> str:
        """The items in the right order, ``"<label>. <text>"`` joined by arrows."""
        text = {i.id: i.text for i in self.items}
        return " → ".join(f"{_label(labels, a)}. {text[a]}" for a in self.answer)

    def _public_fields(self) -> dict[str, Any]:
        return {"items": [PublicItem(id=i.id, text=i.text) for i in self.items]}

    @model_validator(mode="after")
    def _permutation(self) -> "OrderingQuestion":
        ids = [i.id for i in self.items]
        if len(set(ids)) != len(ids):
            raise field_error("items", f"항목 id가 겹칩니다: {ids}")
        if sorted(self.answer) != sorted(ids):
            raise field_error("answer", f"정답은 항목 id {sorted(ids)}를 한 번씩 모두 나열해야 합니다")
        return self


Question = Annotated[
    Union[SingleChoice, MultipleChoice, ShortAnswer, NumericQuestion, OrderingQuestion],
    Field(discriminator="kind"),
]
"""Any question with its key (the lecturer's files in ``quizzes/``)."""


class QuizHeader(Strict):
    """The fields of a quiz file other than its questions (validated on their own so that a broken
    header and broken questions are all reported at once)."""

    notebook: Literal["01", "02", "03", "04", "04b", "05", "06", "07"]
    title: str = Field(min_length=1)

    @field_validator("notebook", mode="before")
    @classmethod
    def _int_notebook(cls, v: Any) -> Any:
        return f"{v:02d}" if isinstance(v, int) and not isinstance(v, bool) else v


class QuizFile(QuizHeader):
    """One canonical quiz file: ``notebook`` (``"01"``...), ``title``, ``questions``."""

    questions: list[Question] = Field(min_length=1)


# --------------------------------------------------------------------------------------------
# Student view: no answer, no explanation, no source
# --------------------------------------------------------------------------------------------


class PublicChoice(Strict):
    """A choice as a student sees it: the file's id (``a``..``h``) and its text."""

    id: str = Field(pattern=r"^[a-h]\z")
    text: str


class PublicItem(Strict):
    """An ordering item as a student sees it: the file's id (``A``..``H``) and its text."""

    id: str = Field(pattern=r"^[A-H]\z")
    text: str = Field(min_length=1)


class PublicQuestion(Identified):
    """A question as the widget shows it: no key, no explanation, no source.

    ``choices`` for single/multiple, ``items`` (shuffled) for ordering, ``unit`` for numeric.
    """

    kind: Literal["single", "multiple", "short", "numeric", "ordering"]
    prompt: str
    points: float = 1.0
    choices: list[PublicChoice] | None = None
    items: list[PublicItem] | None = None
    unit: str | None = None

    @property
    def options(self) -> list:
        """The ``choices`` or ``items`` shown, in file order; ``[]`` for none."""
        return list(self.choices or self.items or [])

    @property
    def option_labels(self) -> tuple[str, ...]:
        """The positional labels of :attr:`options` (choices ``1``.., items ``가``..)."""
        return ITEM_LABELS if self.items else CHOICE_LABELS if self.choices else ()

