"""Argument checks shared by every public function: one message shape, one exception rule.

Messages read ``name=value: 설명 (허용: ...)``, Korean first, e.g. ``gamma=0: 초안 토큰 수는 1 이상의
정수여야 합니다 (허용: 1 이상의 정수)``. A value of the wrong type raises ``TypeError``; a value of
the right type outside its range raises ``ValueError``. Numpy only (no torch): the latency model,
its profiles and widgets use :func:`check` on numbers or arrays; the torch side uses
:func:`integer` and :func:`number`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["check", "fail", "integer", "number"]


def fail(name: str, value, why: str, allowed: str, kind: type[Exception] = ValueError) -> Exception:
    """The exception ``kind`` with the message ``name=value: why (허용: allowed)``, to raise."""
    return kind(f"{name}={_shown(value)}: {why} (허용: {allowed})")


def _shown(value) -> str:
    """``repr(value)``, or ``array(shape)`` for a list/tuple/array of more than 8 items."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return repr(value)
    try:
        return repr(value) if np.size(value) <= 8 else f"array{np.shape(value)}"
    except (ValueError, TypeError):  # a ragged sequence, an odd object
        return repr(value)


def integer(name: str, value, why: str, allowed: str, *, low: int | None = None) -> int:
    """``value`` as an int: an ``numbers.Integral`` that is not a bool, at least ``low`` if given.

    Raises:
        TypeError: not an integer. ValueError: below ``low``. Both with ``why`` and ``allowed``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise fail(name, value, why, allowed, TypeError)
    if low is not None and value < low:
        raise fail(name, value, why, allowed)
    return int(value)


def number(name: str, value, why: str, allowed: str, *, low: float | None = None) -> float:
    """``value`` as a float: a finite ``numbers.Real`` that is not a bool, at least ``low`` if given.

    Raises:
        TypeError: not a real number. ValueError: NaN, infinite or below ``low``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise fail(name, value, why, allowed, TypeError)
    if not math.isfinite(value) or (low is not None and value < low):
        raise fail(name, value, why, allowed)
    return float(value)


def check(name: str, value: Any, what: str, *, low: float = 0.0, strict: bool = False,
          high: float | None = None, integer: bool = False, inf: bool = False, array: bool = False):
    """``value`` checked as a real number (numpy scalars too, never a bool), or with ``array`` a
    number or array-like of them; returned as int/float, or a float array for array input.

    Raises TypeError (not a number) or ValueError (NaN, out of range, not whole), message
    ``name=value: what에 맞지 않는 값입니다 (허용: rule)``, the rule built from the keywords.
    """
    def bad(kind=ValueError):
        return fail(name, value, f"{what}에 맞지 않는 값입니다", _rule(low, strict, high, integer, inf, array), kind)

    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        v = float(value)  # one number: plain Python comparisons (fast; the widget calls this per redraw)
        if (v > low if strict else v >= low) and (inf or math.isfinite(v)) and (high is None or v <= high) and (
                not integer or v.is_integer()):
            return int(v) if integer else v
        raise bad()
    if not array or isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        raise bad(TypeError)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise bad(TypeError) from None
    wrong = np.isnan(arr) | ((arr <= low) if strict else (arr < low)) | (np.isinf(arr) & (not inf))
    if high is not None:
        wrong |= arr > high
    if integer:
        wrong |= np.isfinite(arr) & (arr != np.round(arr))
    if wrong.any():
        raise bad()
    if arr.ndim:
        return arr
    return int(arr) if integer else float(arr)


def _rule(low, strict, high, integer, inf, array) -> str:
    """The ``허용`` part of :func:`check`'s message, e.g. ``0 이상의 유한한 수 또는 그 배열``."""
    if high is not None:
        rng = f"{low:g}보다 크고 {high:g} 이하인" if strict else f"{low:g} 이상 {high:g} 이하인"
    else:
        rng = f"{low:g}보다 큰" if strict else f"{low:g} 이상의"
    return f"{rng} {'정수' if integer else ('수(inf 포함)' if inf else '유한한 수')}" + (" 또는 그 배열" if array else "")
