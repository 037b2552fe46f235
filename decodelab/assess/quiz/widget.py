"""The quiz widget at the end of each notebook (ipywidgets; a view over the quiz modules).

``quiz_widget("01")`` shows notebook 01's questions; ``quiz_widget("all")`` (or ``"06"``) every
question, for the review notebook. Each question: answer, **제출** (submit) -> right/wrong at once
with an explanation, **다시 풀기** (retry), **해설 보기** (show the answer after a wrong try), and a
running score at the top. Every submitted answer is saved at once to the student's answer folder
(:class:`~decodelab.assess.quiz.store.AnswerStore`), so reopening the notebook shows previous answers and
results. **제출 파일 내보내기** writes one submission file for the lecturer's grader. On a JupyterHub
(``$JUPYTERHUB_USER``) the id box shows the hub login, locked: the file goes out under that name.

Choices and ordering items appear in a per-student order under positional labels (``1``, ``2``, ...;
``가``, ``나``, ...), see :mod:`decodelab.assess.quiz.shuffle`; what is saved is the option's id. A short answer
the rules cannot decide is saved (it counts in no score until the lecturer reviews it); the student
is not left waiting: the model answer, the explanation and the key ideas a right
answer states are shown at once with a "맞았는지 스스로 확인" row (**맞았다** / **틀렸다**), whose choice
is saved in the record (``self_check``: ``"right"`` or ``"wrong"``) and never changes a score.

Nothing is printed: all messages, including unexpected errors, appear inside the widget.
"""

from __future__ import annotations

import functools
import html
import os
from pathlib import Path
from typing import Any, Callable

import ipywidgets as W

from .grading import check, parse_response
from .loading import load_public
from .normalize import ResponseError
from .shuffle import choice_order
from .store import AnswerStore, hub_user
from .submission import answer_problem

__all__ = ["QuestionView", "QuizWidget", "quiz_widget"]

_OK = "#e8f5e9"
_BAD = "#ffebee"
_INFO = "#e3f2fd"
_WARN = "#fff8e1"


def _box(color: str, body: str) -> str:
    return f'<div style="background:{color};padding:6px 10px;border-radius:4px;line-height:1.5">{body}</div>'


def _esc(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def _fmt(x: float) -> str:
    return f"{x:g}"


#: One stylesheet for every quiz on the page (each question's box has a ``decodelab-quiz-<id>``
#: class): the chosen option of a single-choice question is a filled dark-blue button with white
#: bold text and a ring, a ticked checkbox's label turns bold blue, so the selection reads from
#: the back of a lecture room (JupyterLab's own selected toggle button is only a slightly darker grey).
QUIZ_STYLE = """<style>
[class*="decodelab-quiz-"] .widget-toggle-button.mod-active {
  background: #1d4ed8 !important; color: #ffffff !important; font-weight: 700;
  box-shadow: 0 0 0 2px #93c5fd; }
[class*="decodelab-quiz-"] .widget-checkbox input:checked { accent-color: #1d4ed8; transform: scale(1.25); }
[class*="decodelab-quiz-"] .widget-checkbox:has(input:checked) { color: #1d4ed8; font-weight: 700; }
</style>"""


class _Input:
    """How a student answers one kind of question in the widget: ``control`` (the input widget, or a
    list of them), ``rows`` (what the question box shows), :meth:`get` and :meth:`set` (the response
    as the grader reads it), ``hint`` (what to do, under the prompt) and ``fix`` (added to the message
    about an answer over the submission limits)."""

    hint = ""
    fix = ""

    def __init__(self, question, order: list[str], labels: dict[str, str]):
        self.order = order
        self.control: Any = W.Text(placeholder="짧게 답하세요", layout=W.Layout(width="70%"))
        self.rows: list = [self.control]

    def get(self) -> Any:
        """The raw text, or None when blank."""
        text = self.control.value
        return text if text.strip() else None

    def set(self, response: Any) -> None:
        """Put ``response`` into the box (as text)."""
        self.control.value = "" if response is None else str(response)


class _Number(_Input):
    fix = " 숫자와 단위만 입력하세요 (예: 150 s)."

    def __init__(self, question, order: list[str], labels: dict[str, str]):
        self.order = order
        self.control = W.Text(placeholder="숫자 (예: 150)", layout=W.Layout(width="220px"))
        self.rows = [W.HBox([self.control, W.HTML(f"&nbsp;{_esc(question.unit or '')}")])]


class _OneChoice(_Input):
    hint = "하나를 고르세요"

    def __init__(self, question, order: list[str], labels: dict[str, str]):
        self.order = order
        self.control = W.ToggleButtons(options=[(labels[c], c) for c in order], value=None,
                                       style={"button_width": "48px"})
        self.rows = [self.control]

    def get(self) -> Any:
        """The chosen id, or None."""
        return self.control.value

    def set(self, response: Any) -> None:
        """Select ``response`` when it is one of the ids (else nothing)."""
        self.control.value = response if isinstance(response, str) and response in self.order else None


class _Ticks(_Input):
    hint = "맞는 것을 모두 고르세요"

    def __init__(self, question, order: list[str], labels: dict[str, str]):
        self.order = order
        self.control = [W.Checkbox(value=False, description=labels[c], indent=False, layout=W.Layout(width="70px"))
                        for c in order]
        self.rows = [W.HBox(self.control)]

    def get(self) -> Any:
        """The ticked ids in shown order, or None."""
        return [c for c, box in zip(self.order, self.control) if box.value] or None

    def set(self, response: Any) -> None:
        """Tick the ids in ``response`` (a list), untick the rest."""
        chosen = set(response or []) if isinstance(response, list) else set()
        for c, box in zip(self.order, self.control):
            box.value = c in chosen


class _Slots(_Input):
    hint = "일어나는 순서대로 칸마다 항목을 고르세요"

    def __init__(self, question, order: list[str], labels: dict[str, str]):
        self.order = order
        opts = [("—", None)] + [(labels[i], i) for i in order]
        self.control = [W.Dropdown(options=opts, value=None, description=f"{k + 1}번째", layout=W.Layout(width="150px"))
                        for k in range(len(order))]
        self.rows = [W.HBox(self.control)]

    def get(self) -> Any:
        """The ids slot by slot (``""`` for an empty slot), or None when every slot is empty."""
        seq = [d.value or "" for d in self.control]
        return seq if any(seq) else None

    def set(self, response: Any) -> None:
        """Fill the slots from ``response`` (a list of ids; unknown ids leave a slot empty)."""
        seq = list(response or [])
        for k, d in enumerate(self.control):
            v = seq[k] if k < len(seq) else None
            d.value = v if v in self.order else None


_INPUTS: dict[str, type[_Input]] = {"single": _OneChoice, "multiple": _Ticks, "ordering": _Slots, "numeric": _Number,
                                    "short": _Input}
"""The input of each question kind (the one place the widget looks at ``kind``)."""


class QuestionView:
    """One question: its input widgets, buttons and feedback.

    Programmatic use (tests, scripts): :meth:`set_response` then :meth:`submit`; :meth:`retry`;
    :meth:`reveal`. ``score`` is the last graded score in [0, 1] (None if not graded); ``number`` is
    the number shown in front of the question (its position in this widget, from 1), which every
    message about the question uses instead of the internal question id.
    """

    def __init__(self, question, key, store: AnswerStore, on_change: Callable[[], None], number: int,
                 shuffle_key: str = ""):
        self.q = question
        self.key = key
        self.store = store
        self._on_change = on_change
        self.score: float | None = None
        self.review = False
        self.saved = False
        self.message = ""
        self.number = number
        qid = question.id
        # the shown order and labels (decodelab.assess.quiz.shuffle): option id -> label
        opts = {o.id: o for o in question.options}
        self.order: list[str] = choice_order(qid, shuffle_key, list(opts)) if opts else []
        self.labels: dict[str, str] = {oid: question.option_labels[k] for k, oid in enumerate(self.order)}
        self._input = _INPUTS[question.kind](question, self.order, self.labels)
        self.input: Any = self._input.control
        inputs = self._input.rows
        lines = [f"<b>{number}. {_esc(question.prompt)}</b>"]
        if self.order:
            lines.append(f"<i>({self._input.hint})</i><ul style='list-style:none;padding-left:8px;margin:4px 0'>")
            lines += [f"<li><b>{self.labels[o]}.</b> {_esc(opts[o].text)}</li>" for o in self.order]
            lines.append("</ul>")
        self.prompt = W.HTML("".join(lines))
        self.submit_button = W.Button(description="제출", button_style="primary", layout=W.Layout(width="90px"))
        self.retry_button = W.Button(description="다시 풀기", disabled=True, layout=W.Layout(width="90px"))
        self.reveal_button = W.Button(description="해설 보기", disabled=True, layout=W.Layout(width="90px"),
                                      tooltip="정답과 해설을 봅니다")
        self.feedback = W.HTML("")
        # an answer the rules cannot decide: the student judges it against the model answer, in a
        # row built the first time it is needed (:meth:`_self_check_row`): notebook 06's quiz holds
        # every question, and each widget is a message to the browser
        self.self_check: str | None = None
        self.self_row: W.VBox | None = None
        self.self_right: W.Button | None = None
        self.self_wrong: W.Button | None = None
        self.self_note: W.HTML | None = None
        self.submit_button.on_click(lambda _b: self._guard(self.submit))
        self.retry_button.on_click(lambda _b: self._guard(self.retry))
        self.reveal_button.on_click(lambda _b: self._guard(self.reveal))
        buttons = [self.submit_button, self.retry_button, self.reveal_button]
        self.box = W.VBox([self.prompt, *inputs, W.HBox(buttons), self.feedback],
                          layout=W.Layout(border="1px solid #ddd", padding="6px", margin="6px 0"))
        self.box.add_class(f"decodelab-quiz-{qid}")

    # ---------------------------------------------------------------- input <-> response

    def _widgets(self) -> list:
        return self.input if isinstance(self.input, list) else [self.input]

    def get_response(self) -> Any:
        """What the student entered: a choice id, a list of ids, an ordering (``""`` for an empty
        slot), or the raw text (short and numeric). None when nothing was entered."""
        return self._input.get()

    def set_response(self, response: Any) -> None:
        """Put a response into the input widgets (restoring a saved answer, or from a test)."""
        self._input.set(response)

    def _lock(self, locked: bool) -> None:
        for w in self._widgets():
            w.disabled = locked
        self.submit_button.disabled = locked
        self.retry_button.disabled = not locked

    # ---------------------------------------------------------------- actions

    def _guard(self, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - never let a traceback escape the widget
            self._show(_BAD, f"예상하지 못한 오류가 났습니다: {_esc(type(e).__name__)}: {_esc(str(e)[:200])}")

    def _show(self, color: str, body: str) -> None:
        self.feedback.value = _box(color, body)

    def submit(self, *, save: bool = True) -> None:
        """Grade the current input, save it, and show the result.

        Bad input (empty, letters in a numeric answer, an ordering with a slot left empty or an item
        twice) shows a Korean message; the input stays in the box, and non-empty input is saved so
        that it survives a restart. An answer over the submission limits (a text over 2,000
        characters, see :func:`decodelab.assess.quiz.submission.answer_problem`) is never saved, so it can
        never block the export: the message names the question by its number, the text stays in the
        box, and any answer saved before stays saved."""
        response = self.get_response()
        if response is None:
            self.message = "답이 비어 있습니다: 답을 입력하거나 고르세요."
            self._show(_BAD, "⚠️ " + _esc(self.message))
            return
        problem = answer_problem(response)
        if problem is not None:
            hint = self._input.fix
            if save:
                kept = " 전에 저장한 답은 그대로 남아 있고, 제출 파일에는 그 답이 들어갑니다." if self.saved else ""
                self.message = f"{self.number}번 문항: {problem}.{hint} 이 답은 저장하지 않았습니다.{kept}"
                note = "입력한 내용은 그대로 두었습니다. 고친 뒤 다시 제출하세요."
            else:  # a record saved by an older version of the widget
                self.saved = False
                self.score = None
                self.review = False
                self.message = (f"{self.number}번 문항: 저장된 답을 제출 파일에 넣을 수 없습니다: {problem}.{hint}")
                note = "제출 파일을 내보낼 때 이 답은 빠집니다. 고친 뒤 다시 제출하세요."
            self._show(_BAD, "⚠️ " + _esc(self.message) + f"<br><small>{note}</small>")
            self._on_change()
            return
        try:
            parse_response(self.key, response)
        except ResponseError as e:
            self.message = str(e)
            self.score = None
            self.review = False
            if save:
                self._save(response, None)
            self._show(_BAD, "⚠️ " + _esc(self.message) + "<br><small>입력한 내용은 그대로 두었습니다. 고친 뒤 다시 제출하세요.</small>")
            self._on_change()
            return
        result = check(self.key, response, labels=self.labels)
        self._hide_self_check()
        self.score = result.score
        self.review = result.review
        if save:
            self._save(response, result.score)
        if result.review:
            self.message = "검토 필요"
            self._show(_WARN, "📝 <b>답을 저장했습니다.</b> 자동 채점 규칙으로는 맞는지 틀렸는지 정할 수 없는 "
                              "답입니다. 아래 모범 답안과 핵심 개념을 내 답과 견주어 <b>맞았는지 스스로 확인</b>해 "
                              "보세요.<br>" + self._rubric_html() +
                              "<small>제출 파일을 내면 강사도 읽고 확인합니다. 그때까지 이 문항은 점수에 들어가지 "
                              "않습니다. '다시 풀기'로 답을 고쳐 쓸 수 있습니다.</small>")
            self.reveal_button.disabled = True  # everything it would show is shown
            self._show_self_check(None if save else self.self_check)
        elif result.correct:
            self.message = "정답"
            self._show(_OK, f"✅ <b>정답입니다.</b> {_esc(result.explanation)}")
            self.reveal_button.disabled = True
        else:
            self.message = "오답"
            part = f" (부분 점수 {_fmt(result.score)})" if result.score > 0 else ""
            extra = "".join(f"<br>• {_esc(f)}" for f in result.feedback)
            self._show(_BAD, f"❌ <b>틀렸습니다{part}.</b>{extra}<br><small>'다시 풀기'로 다시 답하거나 "
                             "'해설 보기'로 정답과 해설을 보세요.</small>")
            self.reveal_button.disabled = False
        self._lock(True)
        self._on_change()

    def _rubric_html(self) -> str:
        """The model answer, the explanation and (a short answer) the key ideas a right answer states:
        each concept group's stems, any one of which states it."""
        from .grading import answer_text

        parts = [f"<b>모범 답안:</b> {_esc(answer_text(self.key, labels=self.labels))}"]
        groups = getattr(self.key, "concepts", None) or []
        if groups:
            items = "".join(f"<li>{_esc(' / '.join(g))}</li>" for g in groups)
            parts.append(f"<b>맞는 답에 들어 있는 생각</b> (묶음마다 이 가운데 하나의 뜻이 내 답에 있어야 합니다):"
                         f"<ul style='margin:2px 0'>{items}</ul>")
        if getattr(self.key, "explanation", None):
            parts.append(f"<b>해설:</b> {_esc(self.key.explanation)}")
        return "<br>".join(parts) + "<br>"

    def _self_check_row(self) -> W.VBox:
        """The '맞았는지 스스로 확인' row (맞았다 / 틀렸다 and a note), added to the box at its first use."""
        if self.self_row is None:
            self.self_right = W.Button(description="맞았다", icon="check", layout=W.Layout(width="90px"),
                                       tooltip="모범 답안과 핵심 개념이 내 답에 모두 있습니다")
            self.self_wrong = W.Button(description="틀렸다", icon="times", layout=W.Layout(width="90px"),
                                       tooltip="빠진 개념이 있거나 다른 말을 했습니다")
            self.self_right.on_click(lambda _b: self._guard(lambda: self.judge_self(True)))
            self.self_wrong.on_click(lambda _b: self._guard(lambda: self.judge_self(False)))
            self.self_note = W.HTML("")
            self.self_row = W.VBox([W.HBox([W.HTML("<b>맞았는지 스스로 확인:</b>&nbsp;"), self.self_right,
                                            self.self_wrong]), self.self_note])
            self.box.children = (*self.box.children, self.self_row)
        return self.self_row

    def _hide_self_check(self) -> None:
        if self.self_row is not None:
            self.self_row.layout.display = "none"
            self.self_note.value = ""

    def _show_self_check(self, verdict: str | None) -> None:
        self._self_check_row().layout.display = None
        self.self_check = verdict
        if verdict is None:
            self.self_note.value = ""
        elif verdict == "right":
            self.self_note.value = _box(_OK, "✅ 스스로 확인: <b>맞았다</b>고 기록했습니다. 다른 판단이 들면 다시 고를 수 있습니다.")
        else:
            self.self_note.value = _box(_INFO, "🔁 스스로 확인: <b>틀렸다</b>고 기록했습니다. 빠진 생각을 넣어 '다시 풀기'로 "
                                               "고쳐 써 보세요.")

    def judge_self(self, right: bool) -> None:
        """The student's own verdict on an answer the rules could not decide: saved
        in the record as ``self_check`` (``"right"`` / ``"wrong"``); no score changes (the lecturer
        still reviews the answer)."""
        if not self.review:
            return
        verdict = "right" if right else "wrong"
        self.store.update(self.q.id, self_check=verdict)
        self._show_self_check(verdict)
        self._on_change()

    def _save(self, response: Any, score: float | None) -> None:
        try:
            self.store.save(self.q.id, response, score=score)
            self.saved = True
        except OSError as e:
            self.saved = False
            raise OSError(f"답을 저장하지 못했습니다 ({self.store.dir}): {e.strerror or e}") from None

    def retry(self) -> None:
        """Unlock the inputs to answer again (the saved answer stays until the next submit)."""
        self._lock(False)
        self.reveal_button.disabled = True
        self.feedback.value = ""
        self._hide_self_check()

    def reveal(self) -> None:
        """Show the right answer and the explanation."""
        from .grading import answer_text

        self._show(_INFO, f"정답: <b>{_esc(answer_text(self.key, labels=self.labels))}</b><br>{_esc(self.key.explanation)}")

    def restore(self, record: dict) -> None:
        """Show a saved record: its response, and its grade against the current key."""
        response = record.get("response")
        self.set_response(response)
        if response is None:
            return
        self.saved = True
        self.self_check = record.get("self_check") if record.get("self_check") in ("right", "wrong") else None
        self.submit(save=False)


class QuizWidget:
    """The whole quiz: a header with the score, one :class:`QuestionView` per question, and the
    export row. Display it as the last expression of a cell (it renders its ``view``).

    Attributes:
        views: question id -> :class:`QuestionView`, in order.
        left_out: after :meth:`export`, the questions (as the student sees them: ``"3번 문항"``, or
            ``"노트북 03의 2번 문항"`` for one outside this widget) whose saved answers were left out
            of the submission file because they break its limits.
        store: the :class:`~decodelab.assess.quiz.store.AnswerStore` it saves into.
        view: the ``ipywidgets.VBox`` shown in the notebook.
    """

    def __init__(self, notebook_id: str | int = "all", *, quizzes_dir: str | os.PathLike | None = None,
                 answers_dir: str | os.PathLike | None = None, export_dir: str | os.PathLike | None = None,
                 student_id: str | None = None):
        qs = load_public(quizzes_dir, notebook_id)
        self._quizzes_dir = quizzes_dir
        self.left_out: list[str] = []
        self.store = AnswerStore(qs.quiz_set, answers_dir)
        self.shuffle_key = self.store.shuffle_key(student_id)
        self.export_dir = Path(export_dir) if export_dir is not None else None
        if len(qs.titles) == 1:
            nb, title = next(iter(qs.titles.items()))
            heading = f"확인 퀴즈 · 노트북 {nb}: {title}"
        else:
            heading = f"복습 퀴즈 · 전체 {len(qs.questions)}문항"
        self.title = W.HTML(QUIZ_STYLE + f"<h3 style='margin:4px 0'>{_esc(heading)}</h3>")
        self.score_label = W.HTML("")
        self.views: dict[str, QuestionView] = {}
        for n, q in enumerate(qs.questions, start=1):
            self.views[q.id] = QuestionView(q, qs.keys[q.id], self.store, self._update_score, n,
                                            self.shuffle_key)
        on_hub = hub_user()
        self.student = W.Text(value=on_hub or student_id or self.store.student_id(), placeholder="학번 또는 이름",
                              description="JupyterHub" if on_hub else "학번", disabled=bool(on_hub),
                              tooltip="JupyterHub에 로그인한 이름으로 냅니다" if on_hub else None,
                              layout=W.Layout(width="300px"))
        self.export_button = W.Button(description="제출 파일 내보내기", icon="download",
                                      layout=W.Layout(width="180px"))
        self.status = W.HTML("")
        self.export_button.on_click(lambda _b: self._export_clicked())
        footer = W.VBox([W.HTML("<b>제출 파일</b>: 강사에게 낼 파일 하나를 만듭니다 (지금까지 저장된 모든 답)."),
                         W.HBox([self.student, self.export_button]), self.status])
        self.view = W.VBox([self.title, self.score_label, *(v.box for v in self.views.values()), footer])
        self._restoring = True
        try:
            for qid, rec in self.store.load().items():
                if qid in self.views:
                    self.views[qid]._guard(functools.partial(self.views[qid].restore, rec))
        finally:
            self._restoring = False
        if self.store.problems:
            lines = []
            for qid, text in zip(self.store.problem_ids, self.store.problems):
                if qid in self.views:
                    text = text.replace(f"문항 {qid}", f"{self.views[qid].number}번 문항", 1)
                lines.append(text)
            self.status.value = _box(_BAD, "⚠️ 읽지 못한 저장된 답이 있습니다:<br>• " + "<br>• ".join(_esc(t) for t in lines[:5]))
        self._update_score()

    # ---------------------------------------------------------------- score and export

    def score(self) -> tuple[float, float]:
        """(points earned, points possible) over this widget's questions."""
        earned = sum((v.score or 0.0) * v.q.points for v in self.views.values())
        return earned, sum(v.q.points for v in self.views.values() if not v.review)

    def _update_score(self) -> None:
        n = len(self.views)
        earned, total = self.score()
        graded = sum(1 for v in self.views.values() if v.score is not None)
        pending = sum(1 for v in self.views.values() if v.review)
        text = f"점수: <b>{_fmt(round(earned, 2))} / {_fmt(total)}</b> (채점된 문항 {graded} / {n})"
        if pending:
            mine = sum(1 for v in self.views.values() if v.review and v.self_check == "right")
            text += f" · 규칙으로 채점하지 못한 문항 {pending}개"
            text += f" (스스로 확인: 맞음 {mine}개)" if mine else " (문항 아래에서 스스로 확인해 보세요)"
        self.score_label.value = text

    def export(self, student_id: str | None = None, out_dir: str | os.PathLike | None = None) -> Path:
        """Write the submission file (every saved answer of this quiz set) and return its path.

        Args:
            student_id: default: the text in the widget's 학번 box.
            out_dir: default: ``export_dir`` given to the widget, else the current folder (the
                notebook's folder in JupyterLab, so the file shows in the file browser).

        A saved answer that breaks the submission limits is left out (the export still succeeds
        with every other answer) and listed in :attr:`left_out` by question number.

        Raises:
            ValueError: (Korean) empty/bad student id, no saved answers, or none that can be
                submitted (the message names those questions by number). FileNotFoundError: no ``out_dir``.
        """
        sid = self.student.value if student_id is None else student_id
        out = out_dir if out_dir is not None else (self.export_dir or Path.cwd())
        self.left_out = []
        try:
            path = self.store.export(sid, out)
        except ValueError as e:
            if self.store.left_out:
                raise ValueError(f"{e} {self._left_out_text()}") from None
            raise
        self.left_out = [label for label, _ in self._left_out_labels()]
        return path

    def _left_out_labels(self) -> list[tuple[str, str]]:
        """(question as the student sees it, reason) for each answer the last export left out,
        in question order."""
        left = self.store.left_out
        others: dict[str, tuple[str, int]] = {}
        if any(qid not in self.views for qid in left):
            try:
                every = load_public(self._quizzes_dir, "all").questions
            except Exception:  # noqa: BLE001 - only used for labels
                every = []
            counter: dict[str, int] = {}
            for q in every:
                counter[q.notebook] = counter.get(q.notebook, 0) + 1
                others[q.id] = (q.notebook, counter[q.notebook])
        order = {qid: k for k, qid in enumerate(self.views)}
        rows = []
        for qid, why in left.items():
            if qid in self.views:
                rows.append(((0, order[qid]), f"{self.views[qid].number}번 문항", why))
            elif qid in others:
                nb, k = others[qid]
                rows.append(((1, int(nb), k), f"노트북 {nb}의 {k}번 문항", why))
            else:
                rows.append(((2, 0), "지금 퀴즈에 없는 문항", why))
        rows.sort(key=lambda r: r[0])
        return [(label, why) for _, label, why in rows]

    def _left_out_text(self) -> str:
        return "; ".join(f"{label}: {why}" for label, why in self._left_out_labels())

    def _export_clicked(self) -> None:
        try:
            path = self.export()
        except (ValueError, OSError) as e:
            self.status.value = _box(_BAD, "⚠️ " + _esc(str(e)))
            return
        except Exception as e:  # noqa: BLE001
            self.status.value = _box(_BAD, f"예상하지 못한 오류: {_esc(type(e).__name__)}: {_esc(str(e)[:200])}")
            return
        done = (f"✅ 제출 파일을 만들었습니다: <code>{_esc(str(path))}</code><br>"
                "JupyterLab 파일 브라우저에서 이 파일을 오른쪽 클릭 → Download 로 받아 강사에게 내세요.")
        if not self.store.left_out:
            self.status.value = _box(_OK, done)
            return
        lines = "".join(f"<br>• {_esc(label)}: {_esc(why)}" for label, why in self._left_out_labels())
        self.status.value = _box(_WARN, done + "<br><br>⚠️ <b>주의: 다음 문항의 답은 제출 한도를 넘어 빼고 내보냈습니다</b>"
                                 f"{lines}<br><small>저장된 답은 지우지 않았습니다. 그 문항의 답을 고쳐 다시 제출한 뒤 "
                                 "다시 내보내세요.</small>")

    # ---------------------------------------------------------------- display

    def _repr_mimebundle_(self, **kwargs):
        return self.view._repr_mimebundle_(**kwargs)


def quiz_widget(notebook_id: str | int = "all", *, quizzes_dir: str | os.PathLike | None = None,
                answers_dir: str | os.PathLike | None = None,
                export_dir: str | os.PathLike | None = None, student_id: str | None = None) -> QuizWidget:
    """The quiz widget for one notebook.

    Args:
        notebook_id: ``"01"``...``"05"`` (or 1...5) for that notebook's questions; ``"all"`` or
            ``"06"`` for every question (the review notebook).
        quizzes_dir: quiz folder (default: ``$DECODELAB_QUIZZES``, else the repo's ``quizzes/``).
        answers_dir: where answers are saved (default: ``$DECODELAB_ANSWERS_DIR``, else
            ``~/.decodelab/answers``).
        export_dir: where the export button writes the submission (default: current folder).
        student_id: fills the 학번 box, and seeds the order of the choices the first time this
            computer shows the quizzes (see :meth:`decodelab.assess.quiz.store.AnswerStore.shuffle_key`).

    Returns:
        :class:`QuizWidget` (displays itself when it is the last expression of a cell).

    Raises:
        ValueError: (Korean) bad ``notebook_id``. QuizError / FileNotFoundError: quiz files invalid or
            missing.
    """
    return QuizWidget(notebook_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir, export_dir=export_dir,
                      student_id=student_id)
