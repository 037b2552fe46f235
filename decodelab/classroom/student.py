"""The student's side of a graded exam notebook: whose numbers, and the item with them.

A parametric exam item shows every student other numbers. They are drawn from the item's
parameter space (which the notebook holds: it is no secret) with a seed made from the item id and
the student's id, so the lecturer's grader draws the same numbers again from the same two strings.
The answer is never here: it is computed on the lecturer's side from the exam bank
(:mod:`decodelab.classroom.bank`), which the student package does not carry.

Identity is nbgrader's student id, never typed: on JupyterHub the login (``JUPYTERHUB_USER``), while
nbgrader autogrades the submission folder's owner (``autograded/<student>/<assignment>/``).
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path
from typing import Any, Mapping

__all__ = ["draw", "show", "student_id"]


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
