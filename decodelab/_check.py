"""Argument checks shared by the public functions: one message shape, one exception rule.

Messages read ``name=value: 설명 (허용: ...)``, Korean first, e.g. ``gamma=0: 초안 토큰 수는 1 이상의
정수여야 합니다 (허용: 1 이상의 정수)``. A value of the wrong type raises ``TypeError``; a value of
the right type outside its range raises ``ValueError``. Pure Python (no torch, no numpy).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["fail", "integer", "number"]


def fail(name: str, value, why: str, allowed: str, kind: type[Exception] = ValueError) -> Exception:
    """The exception ``kind`` with the message ``name=value: why (허용: allowed)``, to raise."""
    return kind(f"{name}={value!r}: {why} (허용: {allowed})")


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
