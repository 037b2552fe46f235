"""The argument check of the latency model and its profiles (numpy only): numbers or arrays.

One message shape, Korean first: ``name=value: what에 맞지 않는 값입니다 (허용: rule)``; a value of
the wrong type raises TypeError, a value outside what is allowed ValueError.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check"]


def check(name: str, value: Any, what: str, *, low: float = 0.0, strict: bool = False,
          high: float | None = None, integer: bool = False, inf: bool = False, array: bool = False):
    """``value`` checked as a real number (numpy scalars too, never a bool), or with ``array`` a
    number or array-like of them; returned as int/float, or a float array for array input.

    Raises TypeError (not a number) or ValueError (NaN, out of range, not whole), message
    ``name=value: what에 맞지 않는 값입니다 (허용: rule)``.
    """
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        v = float(value)  # one number: plain Python comparisons (fast; the widget calls this per redraw)
        if (v > low if strict else v >= low) and (inf or math.isfinite(v)) and (high is None or v <= high) and (
                not integer or v.is_integer()):
            return int(v) if integer else v
        raise ValueError(_message(name, value, what, low, strict, high, integer, inf, array))
    if array and not isinstance(value, (str, bytes, bool, np.bool_)) and value is not None:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(_message(name, value, what, low, strict, high, integer, inf, array)) from None
    else:
        raise TypeError(_message(name, value, what, low, strict, high, integer, inf, array))
    bad = np.isnan(arr) | ((arr <= low) if strict else (arr < low)) | (np.isinf(arr) & (not inf))
    if high is not None:
        bad |= arr > high
    if integer:
        bad |= np.isfinite(arr) & (arr != np.round(arr))
    if bad.any():
        raise ValueError(_message(name, value, what, low, strict, high, integer, inf, array))
    if arr.ndim:
        return arr
    return int(arr) if integer else float(arr)


def _message(name, value, what, low, strict, high, integer, inf, array) -> str:
    """The one message shape: ``name=value: what에 맞지 않는 값입니다 (허용: rule)``."""
    if high is not None:
        rng = f"{low:g}보다 크고 {high:g} 이하인" if strict else f"{low:g} 이상 {high:g} 이하인"
    else:
        rng = f"{low:g}보다 큰" if strict else f"{low:g} 이상의"
    rule = f"{rng} {'정수' if integer else ('수(inf 포함)' if inf else '유한한 수')}" + (" 또는 그 배열" if array else "")
    try:
        shown = repr(value) if np.size(value) <= 8 else f"array{np.shape(value)}"
    except ValueError:  # a ragged sequence
        shown = repr(value)
    return f"{name}={shown}: {what}에 맞지 않는 값입니다 (허용: {rule})"
