"""The lecturer's view of the class poll (:mod:`decodelab.classroom.polls`): an ipywidgets widget
for the lecturer's own notebook or jupyterlab-deck slide (ipywidgets 8, plain HTML, no custom JS).

In the lecturer's notebook on the course's hub::

    from decodelab.classroom.polls_view import class_poll
    class_poll("03-predict-faster-chip")     # before the measuring cell: the room's answers, live

It shows the question, whether answers are taken (받는 중 / 마감됨), how many students answered,
a histogram of the numbers (bins on a log scale when the answers span 10x or more) or a bar per
choice, and, once revealed, the measured value marked in it. Buttons: 받기 시작 (open), 마감
(close), 초기화 (reset: press twice), 새로 고침. Names appear only when the lecturer ticks 이름 보기.
The measured value comes from the service, or from the lecturer's own reveal of the same item
(``ex.reveal`` in the lecturer's notebook, saved in the lecturer's answers) made after the view was
shown, which is then sent to the service (closing the item); a reveal from before (preparing the
lesson) is not sent, nor sent again after 초기화. Requests go with the lecturer's own hub token (the kernel's
``$JUPYTERHUB_API_TOKEN``); the service answers only an admin or a member of the hub group
``instructors``.
"""

from __future__ import annotations

import html
import math
import threading
from typing import Any
from urllib.parse import quote

from ..assess.exercises import classpoll

__all__ = ["ClassPollView", "class_poll", "histogram"]

_BAR = "#5c6bc0"
_HIT = "#ef6c00"


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1e5 else f"{x:.2e}"


def histogram(values: list[float], max_bins: int = 10) -> tuple[list[float], list[int], bool]:
    """Bins of ``values`` for the lecturer's histogram: ``(edges, counts, log)``.

    ``len(edges) == len(counts) + 1``; at most ``max_bins`` equal-width bins (at most the number of
    distinct values), on a log10 scale when every value is positive and max/min >= 10 (speed-ups
    and latencies spread over orders of magnitude); all equal values give one bin ``[v, v]``.
    The last bin includes its right edge (numpy.histogram's rule).

    Raises:
        ValueError: ``values`` is empty.
    """
    import numpy as np

    if not values:
        raise ValueError("values is empty")
    v = np.asarray(values, dtype=float)
    lo, hi = float(v.min()), float(v.max())
    if lo == hi:
        return [lo, hi], [len(values)], False
    log = lo > 0 and hi / lo >= 10
    k = max(1, min(max_bins, len(set(values))))
    x = np.log10(v) if log else v
    counts, edges = np.histogram(x, bins=k)
    if log:
        edges = 10.0 ** edges
        edges[0], edges[-1] = lo, hi  # exact ends despite the round trip through log10
    return [float(e) for e in edges], [int(c) for c in counts], bool(log)


def _bin_of(x: float, edges: list[float]) -> int | None:
    if x < edges[0] or x > edges[-1]:
        return None
    for i in range(len(edges) - 1):
        if x < edges[i + 1] or i == len(edges) - 2:
            return i
    return None


def render(data: dict, *, names: bool = False) -> str:
    """The HTML of the distribution in ``data`` (an answer of ``GET items/ITEM``)."""
    unit = data.get("unit") or ""
    count = int(data.get("count", 0))
    revealed = data.get("revealed")
    if count == 0:
        body = '<div class="decodelab-poll-empty" style="color:#777">아직 받은 예측이 없습니다.</div>'
    elif data.get("kind") == "number":
        body = _number_chart(data["values"], revealed, unit)
    else:
        body = _choice_chart(data["choices"], data["counts"], revealed, count)
    if revealed is not None:
        shown = f"{_num(revealed)} {unit}".strip() if data.get("kind") == "number" else revealed
        body += (f'<div class="decodelab-poll-revealed" style="margin-top:6px;color:{_HIT}"><b>실제 값: '
                 f'{_esc(shown)}</b></div>')
    if names and data.get("names") is not None:
        rows = "".join(f"<tr><td>{_esc(n)}</td><td style='padding-left:12px'>{_esc(_shown(v, data))}</td></tr>"
                       for n, v in data["names"].items())
        body += f'<table class="decodelab-poll-names" style="margin-top:6px;font-size:90%">{rows}</table>'
    return body


def _shown(v: Any, data: dict) -> str:
    return f"{_num(v)} {data.get('unit') or ''}".strip() if data.get("kind") == "number" else str(v)


def _number_chart(values: list[float], revealed: float | None, unit: str) -> str:
    edges, counts, log = histogram(values)
    top = max(counts)
    hit = _bin_of(revealed, edges) if revealed is not None else None
    cols = []
    for i, c in enumerate(counts):
        h = 4 + int(140 * c / top)
        color = _HIT if i == hit else _BAR
        label = (f"{_num(edges[i])}" if edges[i] == edges[i + 1] else f"{_num(edges[i])}–{_num(edges[i + 1])}")
        cols.append(f'<div class="decodelab-poll-bin" data-count="{c}" style="display:flex;flex-direction:column;'
                    f'align-items:center;justify-content:flex-end;min-width:52px;flex:1">'
                    f'<div style="font-size:90%">{c}</div>'
                    f'<div style="width:80%;height:{h}px;background:{color};border-radius:2px 2px 0 0"></div>'
                    f'<div style="font-size:75%;color:#555;white-space:nowrap">{_esc(label)}</div></div>')
    median = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    note = f"중앙값 {_num(median)} {_esc(unit)}".strip() + (" · 구간은 로그 눈금" if log else "")
    if revealed is not None and hit is None:
        side = "모든 예측보다 큽니다" if revealed > edges[-1] else "모든 예측보다 작습니다"
        note += f" · 실제 값은 {side}"
    return (f'<div class="decodelab-poll-hist" style="display:flex;align-items:flex-end;gap:4px;height:190px;'
            f'border-bottom:1px solid #999;max-width:720px">{"".join(cols)}</div>'
            f'<div class="decodelab-poll-note" style="font-size:85%;color:#555;margin-top:2px">{note}</div>')


def _choice_chart(choices: list[dict], counts: dict, revealed: str | None, total: int) -> str:
    rows = []
    top = max(max(counts.values()), 1)
    for c in choices:
        n = int(counts.get(c["id"], 0))
        color = _HIT if c["id"] == revealed else _BAR
        width = int(360 * n / top)
        share = 100.0 * n / total if total else 0.0
        rows.append(f'<div class="decodelab-poll-choice" data-choice="{_esc(c["id"])}" data-count="{n}" '
                    f'style="display:flex;align-items:center;gap:8px;margin:3px 0">'
                    f'<div style="width:260px;font-size:90%">{_esc(c["id"])}. {_esc(c["text"])}</div>'
                    f'<div style="width:{width}px;height:18px;background:{color};border-radius:2px"></div>'
                    f'<div style="font-size:90%">{n}명 ({share:.0f}%)</div></div>')
    return "".join(rows)


class ClassPollView:
    """The widget of :func:`class_poll` (``view``: an ``ipywidgets.VBox``); ``refresh()``,
    ``act("open"|"close"|"reset")`` and ``reveal(value)`` do what its buttons do.

    Args:
        item_id: a prediction id of ``quizzes/exercises/NN.yaml``.
        live: refresh every ``interval_s`` seconds in a background thread while the box is ticked.
        endpoint: ``(service_url, token)``; default the kernel's hub (:func:`classpoll.hub_endpoint`).
        answers_dir: the lecturer's answers folder (where their own reveal of the item is looked up).
    """

    def __init__(self, item_id: str, *, live: bool = True, interval_s: float = 2.0,
                 endpoint: tuple[str, str] | None = None, answers_dir=None):
        import ipywidgets as W

        self.item_id = item_id
        self.endpoint = endpoint or classpoll.hub_endpoint()
        self.answers_dir = answers_dir
        self.interval_s = float(interval_s)
        self.data: dict | None = None
        self.title = W.HTML(f"<b>📊 수업 예측 집계</b> <code>{_esc(item_id)}</code>")
        self.status = W.HTML("")
        self.chart = W.HTML("")
        self.message = W.HTML("")
        self.names = W.Checkbox(value=False, description="이름 보기", indent=False, layout=W.Layout(width="110px"))
        self.live = W.Checkbox(value=bool(live), description="실시간", indent=False, layout=W.Layout(width="90px"))
        self.open_button = W.Button(description="받기 시작", layout=W.Layout(width="100px"))
        self.close_button = W.Button(description="마감", button_style="warning", layout=W.Layout(width="80px"))
        self.reset_button = W.Button(description="초기화", button_style="danger", layout=W.Layout(width="110px"))
        self.refresh_button = W.Button(description="새로 고침", layout=W.Layout(width="100px"))
        self.open_button.on_click(lambda _b: self.act("open"))
        self.close_button.on_click(lambda _b: self.act("close"))
        self.reset_button.on_click(lambda _b: self._reset_clicked())
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.names.observe(lambda _c: self.refresh(), names="value")
        self.live.observe(lambda c: self._live_changed(c["new"]), names="value")
        buttons = W.HBox([self.open_button, self.close_button, self.reset_button, self.refresh_button,
                          self.names, self.live])
        self.view = W.VBox([self.title, self.status, self.chart, buttons, self.message],
                           layout=W.Layout(border="1px solid #ddd", padding="6px", margin="6px 0"))
        self.view.add_class("decodelab-poll")
        self._armed_reset = False
        # the lecturer's own reveal when the view began (a reveal from preparing the lesson is not sent)
        self._own_seen = self._own_reveal()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        if self.endpoint is None:
            self.status.value = ("이 커널은 JupyterHub 강좌 서버에서 돌지 않아 수업 집계를 볼 수 없습니다 "
                                 "(강의자 계정으로 허브에 로그인한 노트북에서 쓰세요).")
            for b in (self.open_button, self.close_button, self.reset_button, self.refresh_button):
                b.disabled = True
            return
        self.refresh()
        if live:
            self._live_changed(True)

    # ---- talking to the service

    def _call(self, method: str, path: str, body: dict | None = None) -> dict | None:
        try:
            r = classpoll.request(method, path, body, endpoint=self.endpoint, timeout_s=5.0)
        except classpoll.PollUnavailable as e:
            self.message.value = f"<span style='color:#b71c1c'>⚠️ {_esc(e)}</span>"
            return None
        if not r.ok:
            self.message.value = (f"<span style='color:#b71c1c'>⚠️ {_esc(r.body.get('error') or r.status)} "
                                  f"(HTTP {r.status})</span>")
            return None
        return r.body

    def _own_reveal(self) -> tuple[Any, Any]:
        """``(value, when)`` of the lecturer's own reveal of this item in their answers (the value
        None if not revealed; ``when`` the record's ``updated_at``, so a rerun of the same value counts)."""
        from ..assess.quiz.store import AnswerStore

        try:
            rec = AnswerStore("course", self.answers_dir).get(self.item_id) or {}
        except Exception:  # noqa: BLE001 - an unreadable answers file only means: no reveal known
            return None, None
        return rec.get("revealed"), rec.get("updated_at")

    def refresh(self) -> None:
        """Fetch the distribution and redraw (what the live thread does every ``interval_s``)."""
        with self._lock:
            q = "?names=1" if self.names.value else ""
            data = self._call("GET", f"items/{quote(self.item_id, safe='')}{q}")
            own = self._own_reveal()
            if data is not None and own[0] is not None and own != self._own_seen:
                # the lecturer opened the result in their notebook after this view began: the room sees it now
                self._own_seen = own
                data = self._call("POST", f"items/{quote(self.item_id, safe='')}/reveal", {"value": own[0]}) or data
                if self.names.value:
                    data = self._call("GET", f"items/{quote(self.item_id, safe='')}{q}") or data
            if data is None:
                return
            self.data = data
            self._draw(data)

    def _draw(self, data: dict) -> None:
        state = "받는 중" if data.get("state") == "open" else "마감됨"
        self.title.value = (f"<b>📊 수업 예측 집계</b> <code>{_esc(self.item_id)}</code><br>"
                            f"<span style='font-size:95%'>{_esc(data.get('prompt', ''))}</span>")
        self.status.value = (f'<span class="decodelab-poll-status" data-state="{_esc(data.get("state"))}" '
                             f'data-count="{int(data.get("count", 0))}">상태: <b>{state}</b> · 답한 학생 '
                             f'<b>{int(data.get("count", 0))}명</b></span>')
        self.chart.value = render(data, names=self.names.value)
        self.open_button.disabled = data.get("state") == "open"
        self.close_button.disabled = data.get("state") != "open"

    def act(self, action: str) -> None:
        """``open`` (take answers), ``close`` (stop taking them) or ``reset`` (delete them)."""
        if action not in ("open", "close", "reset"):
            raise ValueError(f"action={action!r}: open, close, reset 중 하나")
        if action == "reset":  # the reveal already in the lecturer's notebook is not sent again
            self._own_seen = self._own_reveal()
        if self._call("POST", f"items/{quote(self.item_id, safe='')}/{action}") is not None:
            self.message.value = {"open": "예측을 받기 시작했습니다.", "close": "예측 받기를 마감했습니다.",
                                  "reset": "이 질문의 예측을 모두 지웠습니다."}[action]
            self.refresh()

    def reveal(self, value: Any) -> None:
        """Record the measured value with the service (closes the item) and show it."""
        if self._call("POST", f"items/{quote(self.item_id, safe='')}/reveal", {"value": value}) is not None:
            self.refresh()

    def _reset_clicked(self) -> None:
        if not self._armed_reset:
            self._armed_reset = True
            self.reset_button.description = "정말 초기화?"
            self.message.value = "한 번 더 누르면 이 질문의 예측을 모두 지웁니다."
            return
        self._armed_reset = False
        self.reset_button.description = "초기화"
        self.act("reset")

    # ---- live refresh

    def _live_changed(self, on: bool) -> None:
        if not on:
            self._stop.set()
            return
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop = threading.Event()
        stop = self._stop

        def loop() -> None:
            while not stop.wait(self.interval_s):
                try:
                    self.refresh()
                except Exception:  # noqa: BLE001 - a failed refresh shows in message; the loop goes on
                    pass

        self._thread = threading.Thread(target=loop, name=f"decodelab-poll-view-{self.item_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the live refresh."""
        self.live.value = False
        self._stop.set()


def class_poll(item_id: str, *, live: bool = True, interval_s: float = 2.0) -> None:
    """Show the class's answers to prediction ``item_id`` (the lecturer's view; see the module
    docstring). On a kernel without the course's hub it says so and shows no answers.

    Raises:
        ValueError: ``interval_s`` is not a positive finite number.
    """
    if not (isinstance(interval_s, (int, float)) and math.isfinite(interval_s) and interval_s > 0):
        raise ValueError(f"interval_s={interval_s!r}: 0보다 큰 초 수를 주세요 (예: 2).")
    view = ClassPollView(item_id, live=live, interval_s=interval_s)
    from IPython.display import display

    display(view.view)
