"""What the notebooks display for the exercises (ipywidgets 8, no custom JS): predict-then-run
(:func:`predict`, :func:`hold`, :func:`reveal`), written answers (:func:`written`) and task
checks (:func:`check`), each saved at once in the student's answers folder. The definitions come
from :mod:`.schema`.
"""

from __future__ import annotations

import html
import os
import weakref
from typing import Any, Callable

from ..quiz.store import AnswerStore, text_problem
from ..quiz.submission import MAX_ANSWER_TEXT
from . import classpoll
from .schema import (
    Prediction,
    Task,
    Written,
    as_real,
    evaluate,
    format_value,
    get_of_kind,
    parse_number,
    storable,
)

_OK = "#e8f5e9"
_BAD = "#ffebee"
_INFO = "#e3f2fd"
_WARN = "#fff8e1"


def _esc(text: Any) -> str:
    return html.escape(str(text)).replace("\n", "<br>")


def _box(color: str, body: str) -> str:
    return f'<div style="background:{color};padding:6px 10px;border-radius:4px;line-height:1.5">{body}</div>'


def _guarded(fn: Callable[[], None], target: Any) -> None:
    """Run a button or checkbox callback; an error shows as a red box in ``target`` (the widget's
    message area), never as a traceback in the cell."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - never a traceback in the widget
        target.value = _box(_BAD, f"⚠️ {_esc(e)}")


def _display(obj: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    display(obj)


def _corrupt_notice(store: AnswerStore, exercise_id: str) -> str | None:
    """The warning a widget shows when its own saved record cannot be read (None when it can):
    the store's Korean problem line, and that answering again replaces the record."""
    store.load()
    for qid, problem in zip(store.problem_ids, store.problems):
        if qid == exercise_id:
            return _box(_WARN, f"⚠️ {_esc(problem)}")
    return None


_LIVE_VIEWS: dict[str, "weakref.WeakSet[PredictView]"] = {}
"""Prediction widgets alive in this kernel, by exercise id (so that :func:`reveal` can lock them)."""


class PredictView:
    """The widget of :func:`predict` (``view``: an ``ipywidgets.VBox``). ``set_value(x)`` then
    ``commit()`` does programmatically what the student does."""

    def __init__(self, exercise_id: str, *, quizzes_dir=None, answers_dir=None):
        import ipywidgets as W

        self.ex: Prediction = get_of_kind(exercise_id, Prediction, quizzes_dir)
        self.store = AnswerStore("course", answers_dir)
        ex = self.ex
        self.prompt = W.HTML(f"<b>🔮 예측해 보세요:</b> {_esc(ex.prompt)}<br><small>예측을 정하고 '예측 확정'을 "
                             "누르세요. 아래 결과 셀은 예측을 확정하거나 '예측 없이 보기'를 누를 때까지 값을 숨겨 둡니다. "
                             "예측은 채점하지 않습니다.</small>")
        if ex.kind == "number":
            self.input: Any = W.Text(placeholder="숫자 (예: 12.5)", layout=W.Layout(width="200px"))
            row = [self.input, W.HTML(f"&nbsp;{_esc(ex.unit or '')}")]
        else:
            self.input = W.RadioButtons(options=[(f"{c.id}. {c.text}", c.id) for c in ex.choices], value=None,
                                        layout=W.Layout(width="auto"))
            row = [self.input]
        self.button = W.Button(description="예측 확정", button_style="primary", layout=W.Layout(width="110px"))
        self.button.on_click(lambda _b: _guarded(self.commit, self.feedback))
        self.feedback = W.HTML("")
        self.view = W.VBox([self.prompt, W.HBox(row), self.button, self.feedback],
                           layout=W.Layout(border="1px solid #ddd", padding="6px", margin="6px 0"))
        self.view.add_class(f"decodelab-exercise-{ex.id}")
        self.sending = None  # the thread sending the last commit to the class poll (hub only)
        _LIVE_VIEWS.setdefault(ex.id, weakref.WeakSet()).add(self)
        rec = self.store.get(ex.id)
        corrupt = _corrupt_notice(self.store, ex.id)
        if corrupt is not None:
            self.feedback.value = corrupt
        elif rec and rec.get("response") is None and rec.get("revealed") is not None:
            self.closed_without_prediction()
        elif rec and rec.get("response") is not None:
            self.set_value(rec["response"])
            if rec.get("revealed") is not None:
                self._lock()
                self.feedback.value = _box(_INFO, f"저장된 예측: <b>{_esc(self._shown(rec['response']))}</b>. 이미 결과를 "
                                                  "확인해서 예측은 바꿀 수 없습니다.")
            else:
                self.feedback.value = _box(_INFO, f"💾 저장된 예측: <b>{_esc(self._shown(rec['response']))}</b>. 바꾸려면 "
                                                  "새 값을 넣고 다시 '예측 확정'을 누르세요.")

    def _shown(self, v: Any) -> str:
        if self.ex.kind == "number":
            return format_value(v, self.ex.unit)
        text = {c.id: c.text for c in self.ex.choices}
        return f"{v}. {text.get(v, '')}"

    def _lock(self) -> None:
        self.input.disabled = True
        self.button.disabled = True

    def closed_without_prediction(self) -> None:
        """The value was revealed before any prediction was committed: lock the input and say so
        (a prediction made after seeing the value would tell the lecturer nothing)."""
        self._lock()
        self.feedback.value = _box(_WARN, "⚠️ 예측 없이 결과를 보았으므로 이 예측은 닫혔습니다. 다음 예측부터는 결과를 "
                                          "열기 전에 예측을 확정하세요.")

    def revealed(self, rec: dict) -> None:
        """Called when a result opens in the same kernel: lock this (already displayed) widget."""
        if rec.get("response") is None:
            self.closed_without_prediction()
        else:
            self._lock()
            self.feedback.value = _box(_INFO, f"저장된 예측: <b>{_esc(self._shown(rec['response']))}</b>. 결과를 "
                                              "확인했으므로 예측은 더 이상 바꿀 수 없습니다.")

    def set_value(self, value: Any) -> None:
        """Put a prediction into the input (a number or its text; a choice id)."""
        if self.ex.kind == "number":
            self.input.value = "" if value is None else (format_value(value) if isinstance(value, float) else str(value))
        else:
            self.input.value = value if value in [c.id for c in self.ex.choices] else None

    def _poll_done(self, saved: str, result, error) -> None:
        note = classpoll.failure_note(result, error)
        if note is not None and self.feedback.value == saved:  # not over a newer message
            self.feedback.value = saved + f'<div style="color:#777;font-size:85%;margin-top:2px">{_esc(note)}</div>'

    def commit(self) -> Any:
        """Save the prediction now and return it (float, or choice id).

        On the course's JupyterHub (:func:`.classpoll.hub_endpoint`) the saved prediction is also
        sent to the class poll in a background thread (``self.sending``, None without a hub); if
        that fails, a quiet Korean line says so and the saved prediction stays as it is.

        Raises:
            ValueError: (Korean) empty or not a number; already revealed.
        """
        rec = self.store.get(self.ex.id)
        if rec and rec.get("revealed") is not None:
            raise ValueError(f"연습 {self.ex.id}: 이미 결과를 확인해서 예측을 바꿀 수 없습니다.")
        if self.ex.kind == "number":
            if not str(self.input.value).strip():
                raise ValueError("예측이 비어 있습니다: 숫자를 입력하세요.")
            value: Any = parse_number(self.input.value, self.ex.unit)
        else:
            if self.input.value is None:
                raise ValueError("예측이 비어 있습니다: 하나를 고르세요.")
            value = self.input.value
        self.store.save(self.ex.id, value, extra={"kind": "prediction"})
        saved = _box(_OK, f"✅ 예측을 저장했습니다: <b>{_esc(self._shown(value))}</b>. 이제 다음 셀을 "
                          "실행해 실제 값을 확인하세요.")
        self.feedback.value = saved
        # on the course's hub, also to the class poll (a daemon thread: the saved answer never waits
        # for the network); a failure adds one quiet line under the saved message
        self.sending = classpoll.send_in_background(self.ex.id, value, lambda res, err: self._poll_done(saved, res, err))
        for gate in list(_LIVE_GATES.get(self.ex.id, ())):
            if gate.store.dir == self.store.dir:  # a result cell already ran (Run All): it opens now
                gate.prediction_committed()
        return value


def predict(exercise_id: str, *, quizzes_dir: str | os.PathLike | None = None,
            answers_dir: str | os.PathLike | None = None) -> None:
    """Show a prediction question with an input and a '예측 확정' (commit) button; the prediction is
    saved at once and survives a kernel restart. Call it in the cell BEFORE the measuring cell.

    Args:
        exercise_id: a ``predictions`` id of ``quizzes/exercises/NN.yaml``.
        quizzes_dir: the quiz folder (default: :func:`decodelab.assess.quiz.loading.quizzes_dir`).
        answers_dir: the answers folder (default: ``$DECODELAB_ANSWERS_DIR``, else ``~/.decodelab/answers``).

    Raises:
        KeyError: (Korean) unknown id. ValueError: the id is not a prediction. ExerciseError: bad definitions.
    """
    _display(PredictView(exercise_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir).view)


def reveal_record(exercise_id: str, value: Any, *, quizzes_dir=None, answers_dir=None) -> tuple[dict, str]:
    """Record ``value`` with the prediction and return ``(record, html)`` (what :func:`reveal` shows).

    Raises:
        TypeError / ValueError: (Korean) ``value`` is not a finite number (``number``) or not a choice
            id (``choice``); KeyError: unknown id.
    """
    ex: Prediction = get_of_kind(exercise_id, Prediction, quizzes_dir)
    value = _checked_value(ex, value)
    store = AnswerStore("course", answers_dir)
    rec = store.get(ex.id)
    pred = rec.get("response") if rec else None
    rec = store.update(ex.id, kind="prediction", revealed=value)

    def shown(v: Any) -> str:
        if ex.kind == "number":
            return format_value(v, ex.unit)
        return f"{v}. {next(c.text for c in ex.choices if c.id == v)}"

    lines = [f"<b>실제 값: {_esc(shown(value))}</b>"]
    if pred is None:
        lines.insert(0, "⚠️ 예측을 확정하지 않았습니다 (위의 '예측 확정'을 누르지 않았습니다).")
        color = _WARN
    else:
        lines.insert(0, f"내 예측: <b>{_esc(shown(pred))}</b>")
        if ex.kind == "number" and isinstance(pred, (int, float)):
            if value != 0 and pred != 0 and (pred > 0) == (value > 0):
                ratio = pred / value
                # "0.88배" reads better than "1/1.1" near 1; "1/20" better than "0.05배" far below
                how = f"실제의 {ratio:.2g}배" if ratio >= 0.5 else f"실제의 1/{1 / ratio:.2g}"
                lines.append(f"예측은 {how}입니다.")
            color = _INFO
        else:
            color = _OK if pred == value else _INFO
            lines.append("예측이 맞았습니다." if pred == value else "예측과 다릅니다.")
    lines.append(f"💡 {_esc(ex.why)}")
    return rec, _box(color, "<br>".join(lines))


def _checked_value(ex: Prediction, value: Any) -> Any:
    if ex.kind == "number":
        return as_real(value, "value")
    ids = [c.id for c in ex.choices]
    if not isinstance(value, str) or value not in ids:
        raise ValueError(f"value={value!r}: 연습 {ex.id}의 선택지 id {ids} 중 하나여야 합니다")
    return value


_LIVE_GATES: dict[str, "weakref.WeakSet[RevealView]"] = {}
"""Result widgets alive in this kernel, by exercise id (so that a committed prediction opens them)."""

_HOLDING: dict[str, list["RevealView"]] = {}
"""Result widgets made by :func:`hold` that wait for their value, by exercise id, in cell order."""

_HOOKED: list = []  # the IPython shell whose post_run_cell event ends the cells' captures


class RevealView:
    """The result widget of :func:`reveal` (``view``: an ``ipywidgets.VBox``): the measured value stays
    hidden until the student commits the prediction or presses '예측 없이 보기' (skip).

    States (``state``): ``"waiting"`` (made by :func:`hold`, no value yet), ``"hidden"`` (a value, no
    prediction yet: a notice and the skip button show, the value and the held output do not),
    ``"open"`` (the held output shows; the result widget of the :func:`reveal` cell also shows the
    prediction beside the value, with the why). A value opens at once when the prediction was
    committed before, or when this result was opened before (a rerun). Only opening the reveal
    cell's widget records the value (``revealed``) and locks the prediction widgets; every widget of
    the same exercise opens together (a committed prediction or one skip opens them all).

    ``until`` (a :func:`hold` of two predictions on one measurement, where each value follows from
    the other by a division): the output also stays hidden until each of those predictions is
    committed or opened without one.

    ``set_value(v)``, ``prediction_committed()`` and ``skip()`` drive it programmatically.
    """

    def __init__(self, exercise_id: str, *, quizzes_dir=None, answers_dir=None, shows_result: bool = True,
                 until: tuple[str, ...] = ()):
        import ipywidgets as W

        self.ex: Prediction = get_of_kind(exercise_id, Prediction, quizzes_dir)
        self.until = tuple(get_of_kind(u, Prediction, quizzes_dir).id for u in until)
        self.quizzes_dir = quizzes_dir
        self.store = AnswerStore("course", answers_dir)
        self.shows_result = shows_result
        self.state = "waiting"
        self.value: Any = None
        self.capturing = False
        self._figures_before: set[int] = set()
        self.held = W.Output(layout=W.Layout(display="none"))  # what the measuring cell printed
        self.notice = W.HTML("")
        self.skip_button = W.Button(description="예측 없이 보기", layout=W.Layout(width="130px", display="none"))
        self.skip_button.on_click(lambda _b: _guarded(self.skip, self.notice))
        self.result = W.HTML("")
        self.view = W.VBox([self.notice, self.skip_button, self.held, self.result])
        self.view.add_class(f"decodelab-result-{self.ex.id}")
        for other in self.until:  # a commit of one of those predictions may open this output too
            self.view.add_class(f"decodelab-until-{other}")
            _LIVE_GATES.setdefault(other, weakref.WeakSet()).add(self)
        _LIVE_GATES.setdefault(self.ex.id, weakref.WeakSet()).add(self)

    def start_capture(self) -> None:
        """From now on what this cell prints, displays or plots goes into the held output."""
        import sys

        plt = sys.modules.get("matplotlib.pyplot")
        self._figures_before = set(plt.get_fignums()) if plt is not None else set()
        self.held.__enter__()
        self.capturing = True

    def stop_capture(self) -> None:
        """End the capture; pyplot figures made since it started are shown in the held output and closed."""
        if not self.capturing:
            return
        try:
            for fig in _new_figures(self._figures_before):
                _display(fig)
                import matplotlib.pyplot as plt

                plt.close(fig)
        finally:
            self.capturing = False
            self.held.__exit__(None, None, None)

    def _siblings(self) -> list["RevealView"]:
        return [g for g in list(_LIVE_GATES.get(self.ex.id, ())) if g.store.dir == self.store.dir and g.ex.id == self.ex.id]

    def _waiting_for(self) -> list[str]:
        """The ``until`` predictions neither committed nor opened yet."""
        out = []
        for other in self.until:
            rec = self.store.get(other) or {}
            if rec.get("response") is None and rec.get("revealed") is None:
                out.append(other)
        return out

    def _hide(self) -> None:
        self.state = "hidden"
        waiting = self._waiting_for()
        if waiting:
            names = ", ".join(f"'{w}'" for w in waiting)
            self.notice.value = _box(_WARN, f"🔒 결과를 숨겨 두었습니다. 이 결과에서 {names} 예측의 답도 나오므로, 위의 예측 칸에서 "
                                            "두 예측을 모두 확정하면 여기에 실제 값이 열립니다. '예측 없이 보기'는 두 예측을 "
                                            "모두 닫고 엽니다.")
        else:
            self.notice.value = _box(_WARN, "🔒 결과를 숨겨 두었습니다. 위의 예측 칸에서 '예측 확정'을 누르면 여기에 "
                                            "실제 값이 열립니다. 예측하지 않으려면 '예측 없이 보기'를 누르세요.")
        self.skip_button.layout.display = None

    def set_value(self, value: Any) -> None:
        """Give the measured value: it opens now if a prediction (or an earlier opening) is saved,
        otherwise it is kept hidden.

        Raises:
            TypeError / ValueError: (Korean) not a finite number (``number``) or not a choice id.
        """
        self.value = _checked_value(self.ex, value)
        rec = self.store.get(self.ex.id) or {}
        if (rec.get("response") is not None or rec.get("revealed") is not None) and not self._waiting_for():
            self.open()
            return
        self._hide()

    def prediction_committed(self) -> None:
        """A prediction was just committed (this one, or one of ``until``): a hidden value opens once
        this prediction is saved and none of ``until`` is still open (else the notice says which)."""
        if self.state != "hidden":
            return
        rec = self.store.get(self.ex.id) or {}
        if (rec.get("response") is not None or rec.get("revealed") is not None) and not self._waiting_for():
            self.open()
        else:
            self._hide()

    def skip(self) -> None:
        """Open the value without a prediction, here and in every other result widget of this
        exercise (the prediction then closes); the ``until`` predictions still open are skipped
        first the same way (this output gives their answers too)."""
        if self.state != "hidden":
            return
        for other in self._waiting_for():
            for gate in list(_LIVE_GATES.get(other, ())):
                if gate.ex.id == other and gate.store.dir == self.store.dir:
                    gate._open_all()
                    break
        self._open_all()

    def _open_all(self) -> None:
        order = sorted(self._siblings(), key=lambda g: not g.shows_result)  # the recording one first
        for gate in order:
            if gate.state == "hidden":
                gate.open()

    def open(self) -> None:
        """Show the held output; the reveal cell's widget also records the value with the prediction,
        shows both and locks the prediction widgets."""
        self.state = "open"
        self.notice.value = ""
        self.skip_button.layout.display = "none"
        self.held.layout.display = None
        if not self.shows_result:
            return
        rec, body = reveal_record(self.ex.id, self.value, quizzes_dir=self.quizzes_dir, answers_dir=self.store.root)
        self.result.value = body
        for view in list(_LIVE_VIEWS.get(self.ex.id, ())):
            if view.store.dir == self.store.dir:  # the predict widgets shown above lock at once
                view.revealed(rec)


def _new_figures(before: set[int]) -> list:
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    return [plt.figure(n) for n in plt.get_fignums() if n not in before]


def _end_of_cell(result: Any = None) -> None:
    """IPython ``post_run_cell``: a cell with :func:`hold` but no :func:`reveal` (the value comes in a
    later cell, or the cell failed) stops capturing at its end. When the cell failed, its held
    output (with the error message) is shown at once: an error is never hidden."""
    failed = result is not None and not getattr(result, "success", True)
    for gates in _HOLDING.values():
        for gate in gates:
            if gate.capturing and failed:
                gate.held.layout.display = None
                gate.notice.value = _box(_BAD, "⚠️ 이 셀에서 오류가 나서 숨겨 둔 출력을 보여 줍니다. 오류를 고치고 셀을 다시 실행하세요.")
            gate.stop_capture()


def _hook_cells() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    ip = get_ipython()
    if ip is not None and not any(h is ip for h in _HOOKED):
        ip.events.register("post_run_cell", _end_of_cell)
        _HOOKED.append(ip)


def hold(exercise_id: str, *, until: tuple[str, ...] | list[str] = (), quizzes_dir: str | os.PathLike | None = None,
         answers_dir: str | os.PathLike | None = None) -> None:
    """Put on the first line of a measuring cell: what the cell prints, displays or plots from here
    to its end (or to its :func:`reveal`) is held back and shows only once the exercise's value
    opens. Cells between the prediction and the :func:`reveal` cell may each start with it, and so
    may a cell after the reveal that shows the same result again (a figure of it): in a Run All it
    runs before the student commits, so it stays hidden until the same commit or skip; when the
    prediction was committed (or the value opened) before the cell runs, its output shows at once.

    Args:
        until: other prediction ids whose answer this output also gives (two predictions on one
            measurement, each one division from the other: throughput and one request's TPOT):
            it stays hidden until each of them is committed too ('예측 없이 보기' closes them all).

    Raises:
        KeyError: (Korean) unknown id. ValueError: the id is not a prediction.
    """
    if isinstance(until, str):
        until = (until,)
    gate = RevealView(exercise_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir, shows_result=False,
                      until=tuple(until))
    queue = _HOLDING.setdefault(exercise_id, [])
    for old in queue:  # a rerun: any earlier capture of this exercise has ended
        old.stop_capture()
    queue[:] = [g for g in queue if g.store.dir == gate.store.dir and g.state in ("waiting", "hidden")]
    rec = gate.store.get(gate.ex.id) or {}
    if (rec.get("response") is not None or rec.get("revealed") is not None) and not gate._waiting_for():
        gate.open()  # committed (or opened) before this cell ran: nothing to hide
    elif any(g.shows_result and g.value is not None for g in gate._siblings()):
        gate._hide()  # a cell after the reveal (Run All): hidden like the result, opened by the same commit or skip
    _display(gate.view)
    _hook_cells()
    gate.start_capture()
    queue.append(gate)


def reveal(exercise_id: str, value: Any, *, quizzes_dir: str | os.PathLike | None = None,
           answers_dir: str | os.PathLike | None = None) -> None:
    """Show the committed prediction beside the measured/computed ``value``, with the one-line why,
    and record the value with the prediction. If no prediction is committed yet the value stays
    hidden (with what the cells printed since :func:`hold`) until the student commits one above or
    presses '예측 없이 보기'. After the value opens the prediction cannot be changed.

    Args:
        exercise_id: a ``predictions`` id.
        value: a float for ``kind: number`` (in the prediction's ``unit``), a choice id for ``choice``.

    Raises:
        TypeError / ValueError: (Korean) a wrong ``value``. KeyError: unknown id.
    """
    store_dir = AnswerStore("course", answers_dir).dir
    waiting = [g for g in _HOLDING.pop(exercise_id, []) if g.store.dir == store_dir]
    here = waiting[-1] if waiting and waiting[-1].capturing else None  # this cell's hold
    for gate in waiting:
        gate.stop_capture()
    if here is None:
        here = RevealView(exercise_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir)
        _display(here.view)
        waiting.append(here)
    here.shows_result = True
    _checked_value(here.ex, value)  # a wrong value raises before anything changes
    for gate in waiting:
        gate.set_value(value)


class WrittenView:
    """The widget of :func:`written`; ``text.value = ...`` then ``submit()`` programmatically."""

    def __init__(self, exercise_id: str, *, quizzes_dir=None, answers_dir=None):
        import ipywidgets as W

        self.ex: Written = get_of_kind(exercise_id, Written, quizzes_dir)
        self.store = AnswerStore("course", answers_dir)
        self.prompt = W.HTML(f"<b>✍️ 내 말로 설명해 보세요:</b> {_esc(self.ex.prompt)}<br><small>자동으로 채점하지 않습니다. "
                             "제출하면 모범 답안과 채점 기준이 보입니다.</small>")
        self.text = W.Textarea(placeholder="여기에 설명을 쓰세요", layout=W.Layout(width="95%", height="90px"))
        self.button = W.Button(description="제출", button_style="primary", layout=W.Layout(width="90px"))
        self.button.on_click(lambda _b: _guarded(self.submit, self.feedback))
        self.feedback = W.HTML("")
        # "맞았는지 스스로 확인": one box per rubric point, ticked by the student (saved as self_check)
        self.points = [W.Checkbox(value=False, description=p, indent=False, layout=W.Layout(width="95%"))
                       for p in self.ex.rubric]
        self.tally = W.HTML("")
        self.check_box = W.VBox([W.HTML("<b>맞았는지 스스로 확인:</b> 내 답에 들어 있는 기준에 표시하세요 "
                                        "(기록만 하고 점수는 매기지 않습니다)."), *self.points, self.tally],
                                layout=W.Layout(display="none"))
        self.view = W.VBox([self.prompt, self.text, self.button, self.feedback, self.check_box],
                           layout=W.Layout(border="1px solid #ddd", padding="6px", margin="6px 0"))
        self.view.add_class(f"decodelab-exercise-{self.ex.id}")
        rec = self.store.get(self.ex.id)
        corrupt = _corrupt_notice(self.store, self.ex.id)
        if corrupt is not None:
            self.feedback.value = corrupt
        elif rec and isinstance(rec.get("response"), str):
            self.text.value = rec["response"]
            self._show_model("💾 저장된 답입니다. 고쳐 쓰고 다시 제출할 수 있습니다.")
            ticked = rec.get("self_check") if isinstance(rec.get("self_check"), list) else []
            for i, box in enumerate(self.points):
                box.value = i in ticked
            self._tally()
        for box in self.points:
            box.observe(lambda _c: _guarded(self._ticked, self.feedback), names="value")

    def _tally(self) -> None:
        n, done = len(self.points), sum(1 for p in self.points if p.value)
        word = "모든 기준을 채웠습니다." if done == n else "빠진 기준을 넣어 고쳐 쓰고 다시 제출해 보세요."
        self.tally.value = f"<small>기준 {done} / {n}: {word}</small>"

    def _ticked(self) -> None:
        """Save which rubric points the student ticked (``self_check``: their indices)."""
        if getattr(self, "_resetting", False) or not (self.store.get(self.ex.id) or {}).get("response"):
            return
        self.store.update(self.ex.id, self_check=[i for i, p in enumerate(self.points) if p.value])
        self._tally()

    def _show_model(self, head: str) -> None:
        rubric = "".join(f"<li>{_esc(p)}</li>" for p in self.ex.rubric)
        self.feedback.value = _box(_OK, f"{head}<br><b>모범 답안:</b> {_esc(self.ex.model_answer)}<br>"
                                        f"<b>채점 기준</b> (아래 '맞았는지 스스로 확인'에서 내 답에 있는 것에 표시하세요):"
                                        f"<ul style='margin:2px 0'>{rubric}</ul>")
        self.check_box.layout.display = None

    def submit(self) -> str:
        """Save the text and show the model answer and the rubric.

        Raises:
            ValueError: (Korean) empty, longer than 2,000 characters, or holding a NUL or a lone
                surrogate (the text stays in the box; nothing is saved).
        """
        text = self.text.value
        if not text.strip():
            raise ValueError("답이 비어 있습니다: 설명을 쓰고 제출하세요.")
        why = text_problem(text)
        if why is not None:
            raise ValueError(f"연습 {self.ex.id}: {why}. 저장하지 않았습니다.")
        if len(text) > MAX_ANSWER_TEXT:
            raise ValueError(f"연습 {self.ex.id}: 답이 너무 깁니다 ({len(text):,}자): {MAX_ANSWER_TEXT:,}자 이내로 줄이세요. "
                             "저장하지 않았습니다.")
        self.store.save(self.ex.id, text, extra={"kind": "written"})
        self._resetting = True  # a new text: the ticks start over (the new record has none)
        try:
            for box in self.points:
                box.value = False
        finally:
            self._resetting = False
        self._show_model("✅ 저장했습니다. 모범 답안과 견주어 맞았는지 스스로 확인해 보세요 (강사도 읽습니다).")
        self._tally()
        return text


def written(exercise_id: str, *, quizzes_dir: str | os.PathLike | None = None,
            answers_dir: str | os.PathLike | None = None) -> None:
    """Show a text box and a '제출' (submit) button for an explanation in the student's own words; the
    text is saved (never scored automatically) and, after submitting, the model answer and the rubric
    are shown.

    Raises:
        KeyError: (Korean) unknown id. ValueError: the id is not a written exercise.
    """
    _display(WrittenView(exercise_id, quizzes_dir=quizzes_dir, answers_dir=answers_dir).view)


def check_record(exercise_id: str, value: Any, *, quizzes_dir=None, answers_dir=None) -> tuple[bool, str]:
    """Decide a task, record it, and return ``(passed, html)`` (what :func:`check` shows).

    Raises:
        TypeError: (Korean) the task compares numbers and ``value`` is not one. KeyError: unknown id.
    """
    ex: Task = get_of_kind(exercise_id, Task, quizzes_dir)
    passed = evaluate(ex.check, value)
    AnswerStore("course", answers_dir).save(ex.id, storable(value), extra={"kind": "task", "passed": passed})
    if passed:
        return True, _box(_OK, f"✅ <b>목표 달성!</b> {_esc(ex.success)}")
    return False, _box(_WARN, f"🔧 <b>아직 목표에 이르지 못했습니다</b> (지금 값: {_esc(format_value(storable(value)))}). "
                              f"목표: {_esc(ex.goal)}<br>💡 {_esc(ex.hint)}")


def check(exercise_id: str, value: Any, *, quizzes_dir: str | os.PathLike | None = None,
          answers_dir: str | os.PathLike | None = None) -> bool:
    """Whether a change-the-code task's goal is reached with ``value``: shows the success text or the
    hint (never the solution), records the result, and returns it.

    Args:
        exercise_id: a ``tasks`` id.
        value: what the student's edited cell produced (a number for ``<``, ``<=``, ``>``, ``>=``,
            ``between``; a number or a text for ``==``, ``!=``, ``in``).

    Raises:
        TypeError: (Korean) a number was needed. KeyError: unknown id. ValueError: not a task.
    """
    import ipywidgets as W

    passed, body = check_record(exercise_id, value, quizzes_dir=quizzes_dir, answers_dir=answers_dir)
    _display(W.HTML(body))
    return passed
