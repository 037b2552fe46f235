"""Argument checks shared by every public function: one message shape, one exception rule.

Messages read ``name=value: 설명 (허용: ...)``, Korean first, e.g. ``num_speculative_tokens=0: 초안 토큰 수(gamma)에
맞지 않는 값입니다 (허용: 1 이상의 정수; 예: 4)``. A value of the wrong type raises ``TypeError``; a value of
the right type outside its range raises ``ValueError``. Numpy only (no torch). Two functions, one shape:
:func:`check` validates a number (or an array of them) against a rule it spells out itself;
:func:`fail` builds the same message for every other check (a name, a path, a shape).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check", "check_gamma", "fail"]


def fail(name: str, value, why: str, allowed: str, kind: type[Exception] = ValueError, *,
         shape: bool = False) -> Exception:
    """The exception ``kind`` with the message ``name=value: why (허용: allowed)``, to raise;
    ``shape`` shows an array as ``array(shape)`` whatever its size (for a wrong shape)."""
    return kind(f"{name}={_shown(value, shape)}: {why} (허용: {allowed})")


def _shown(value, shape: bool = False) -> str:
    """``repr(value)``, or ``array(shape)`` for a list/tuple/array of more than 8 items."""
    if shape and np.ndim(value):
        return f"array{np.shape(value)}"
    if not isinstance(value, (list, tuple, np.ndarray)):
        return repr(value)
    try:
        return repr(value) if np.size(value) <= 8 else f"array{np.shape(value)}"
    except (ValueError, TypeError):  # a ragged sequence, an odd object
        return repr(value)


def check(name: str, value: Any, what: str, *, low: float = 0.0, strict: bool = False,
          high: float | None = None, integer: bool = False, inf: bool = False, array: bool = False,
          hint: str | None = None):
    """``value`` checked as a real number (numpy scalars too, never a bool), or with ``array`` a
    number or array-like of them; returned as int (``integer``) or float, or a float array for
    array input.

    The rule: at least ``low`` (above it with ``strict``), at most ``high`` if given, a whole
    number with ``integer`` (4.0 is taken as 4), finite unless ``inf``.

    Raises:
        TypeError: not a number (a str, None, a bool, an array where one number is expected).
        ValueError: NaN, out of range, not whole. Message ``name=value: what에 맞지 않는 값입니다
        (허용: rule)``, the rule built from the keywords, ``hint`` (e.g. ``"예: 4"``) after it.
    """
    def bad(kind=ValueError):
        rule = _rule(low, strict, high, integer, inf, array)
        return fail(name, value, f"{what}에 맞지 않는 값입니다", f"{rule}; {hint}" if hint else rule, kind)

    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        try:
            v = float(value)  # one number: plain Python comparisons (fast; the widget calls this per redraw)
        except OverflowError:  # an int beyond float's range
            v = math.inf if value > 0 else -math.inf
        if (v > low if strict else v >= low) and (inf or math.isfinite(v)) and (high is None or v <= high) and (
                not integer or v.is_integer()):
            if integer:  # an int as given (a float would round a seed of 2**70)
                return int(value) if isinstance(value, (int, np.integer)) else int(v)
            return v
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


def check_gamma(value, *, name: str = "gamma", array: bool = False):
    """The one rule for gamma (``num_speculative_tokens``, draft tokens per round): a whole
    number >= 1 (or, with ``array``, an array of them), as :func:`check` raises."""
    return check(name, value, "초안 토큰 수(gamma, num_speculative_tokens)", low=1, integer=True, array=array,
                 hint="예: 4")
