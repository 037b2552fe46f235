"""The student's side of a graded exam notebook: whose numbers, and the item with them.

A parametric exam item shows every student other numbers. They are drawn from the item's
parameter space (which the notebook holds: it is no secret) with a seed made from the item id and
the student's id, so the lecturer's grader draws the same numbers again from the same two strings.
The answer is never here: it is computed on the lecturer's side from the exam bank
(:mod:`decodelab.classroom.bank`), which the student package does not carry. At autograde the
hidden test cells only :func:`record` each answer's value; nbgrader's process grades it afterwards
(:class:`decodelab.classroom.review.GradeAnswers`).

Identity is nbgrader's student id, never typed: on JupyterHub the login (``JUPYTERHUB_USER``), while
nbgrader autogrades the submission folder's owner (``autograded/<student>/<assignment>/``).
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path
from typing import Any, Mapping

__all__ = ["ANSWERS_FILE", "ANSWER_MIME", "answer_box", "draw", "read_answers", "record", "show", "student_id"]

ANSWERS_FILE = "answers.json"
"""Answers given in the widgets, next to the notebook; nbgrader submits it with the notebook."""

ANSWER_MIME = "application/vnd.decodelab.answer+json"
"""Output type of :func:`record`: ``{"id": item id, "value": the answer}``, read by the lecturer's grader."""

BOXES: dict[str, Any] = {}
"""item id -> the widget shown for it in this kernel."""


def student_id(cwd: str | os.PathLike | None = None) -> str:
    """nbgrader's id of the student this notebook belongs to.

    While nbgrader autogrades (``NBGRADER_EXECUTION`` set), the notebook runs in
    ``<course>/autograded/<student>/<assignment>/``: the folder names the student whose submission
    it is, whoever wrote the file. Otherwise the JupyterHub login (``JUPYTERHUB_USER``), else the
    operating system's user name (nbgrader's own default for a single-user setup).
    """
    if os.environ.get("NBGRADER_EXECUTION"):
        here = Path(cwd or os.getcwd()).resolve()
        if len(here.parts) >= 3 and here.parent.parent.name == "autograded":
            return here.parent.name
    hub = os.environ.get("JUPYTERHUB_USER")
    if hub:
        return hub
    import getpass

    return getpass.getuser()


def _rng(item_id: str, student: str) -> random.Random:
    digest = hashlib.sha256(f"decodelab-exam\0{item_id}\0{student}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def draw(item_id: str, params: Mapping[str, Any], student: str) -> dict[str, Any]:
    """One student's numbers for a parametric item.

    Args:
        item_id: the item's id (part of the seed).
        params: name -> a list of values (one is chosen), or ``{"range": [low, high], "step": s}``
            (an integer or float grid from low to high inclusive). Drawn in the mapping's order.
        student: nbgrader's student id (part of the seed).

    Returns:
        name -> value, in the order of ``params``.

    Raises:
        ValueError: (Korean) an empty list or a bad range.
    """
    rng, out = _rng(item_id, student), {}
    for name, spec in params.items():
        if isinstance(spec, Mapping):
            low, high = spec["range"]
            step = spec.get("step", 1)
            n = int(round((high - low) / step)) + 1
            if n < 1 or step <= 0:
                raise ValueError(f"{item_id}.{name}: 범위 {spec!r}가 비어 있습니다 (low <= high, step > 0로 고치세요)")
            value = low + rng.randrange(n) * step
            out[name] = int(value) if all(isinstance(v, int) for v in (low, step)) else round(value, 6)
        else:
            values = list(spec)
            if not values:
                raise ValueError(f"{item_id}.{name}: 고를 값이 없습니다 (값을 하나 이상 적으세요)")
            out[name] = values[rng.randrange(len(values))]
    return out


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def show(item: Mapping[str, Any], student: str | None = None) -> dict[str, Any]:
    """Print a parametric item with this student's numbers; returns them (name -> value).

    ``item``: ``{"id", "prompt", "params", "unit"}`` as the exam notebook holds it; ``prompt`` has
    ``{name}`` fields for the numbers (written with thousands separators).
    """
    sid = student or student_id()
    values = draw(item["id"], item["params"], sid)
    text = item["prompt"].format(**{k: _fmt(v) for k, v in values.items()})
    unit = item.get("unit") or ""
    print(f"[{sid}] {text}" + (f"\n(답의 단위: {unit})" if unit else ""))
    return values


def read_answers(folder: str | os.PathLike | None = None) -> dict[str, Any]:
    """The widget answers saved in ``folder`` (default: the current folder), item id -> value."""
    import json

    path = Path(folder or os.getcwd()) / ANSWERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_answer(folder: Path, item_id: str, value: Any) -> None:
    import json

    data = read_answers(folder)
    if value in (None, "", []):
        data.pop(item_id, None)
    else:
        data[item_id] = value
    from .._atomic import atomic_write_text

    atomic_write_text(folder / ANSWERS_FILE, json.dumps(data, ensure_ascii=False, indent=1))


def answer_box(item_id: str, kind: str, choices: list[str] | None = None):
    """The answer widget of an exam item: choice buttons (``single``), a multi-select list
    (``multiple``) or a text box (``short``, ``numeric``, ...). Each change is saved at once to
    :data:`ANSWERS_FILE` next to the notebook, which nbgrader submits with it; an answer written in
    the item's answer cell (``답[...] = ...``) takes precedence over the widget's.
    """
    import ipywidgets as w

    folder = Path(os.getcwd())
    saved = read_answers(folder).get(item_id)
    if kind == "single":
        box = w.RadioButtons(options=list(choices or []), index=None)
        if saved in (choices or []):
            box.value = saved
    elif kind == "multiple":
        box = w.SelectMultiple(options=list(choices or []),
                               value=tuple(v for v in (saved or []) if v in (choices or [])))
    else:
        box = w.Text(value=saved if isinstance(saved, str) else "", placeholder="답을 적으세요",
                     continuous_update=False)

    def changed(change) -> None:
        new = change["new"]
        _save_answer(folder, item_id, list(new) if isinstance(new, tuple) else new)

    box.observe(changed, names="value")
    BOXES[item_id] = box
    return box


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    try:
        return float(value)  # a numpy number, a fraction...
    except (TypeError, ValueError):
        return str(value)


def record(item_id: str, value: Any) -> int:
    """Record an answer's value for the lecturer's grader (the hidden test cell of an exam item).

    Emits one output of type :data:`ANSWER_MIME` (``{"id": item_id, "value": value}``, the value as
    JSON: tuples and sets become lists, other objects ``float`` or ``str``) and a Korean line. Decides
    nothing: the grader reads the value after the kernel has stopped and grades it with the bank.

    Returns 0, the cell's value: nbgrader reads it as partial credit, so a notebook autograded
    without decodelab's grading step scores 0, never full marks.
    """
    from IPython.display import display

    data = {"id": str(item_id), "value": _jsonable(value)}
    display({ANSWER_MIME: data, "text/plain": f"답을 기록했습니다 ({item_id}): 채점은 강의자 쪽에서 합니다"}, raw=True)
    return 0
