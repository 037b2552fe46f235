"""Answer normalization: Korean short answers, numbers with units.

A Korean answer typed on macOS arrives decomposed (NFD: 한 = ᄒ + ᅡ + ᆫ), one typed on Windows or
Linux composed (NFC). Full-width digits come from Korean IMEs. Spacing (띄어쓰기) varies from person
to person. :func:`normalize_text` folds all of these so that the same answer compares equal.

Numbers: :func:`parse_quantity` reads ``"150"``, ``"150 s"``, ``"2.5분"``, ``"1,000 tokens/s"``,
``"1.5e3 ms"``, ``"약 22ms"``, ``"75%"``, ``"22."``, ``"21.9ms입니다"``, ``"22 ms 정도"``, ``"3333 ns"``,
``"512 MiB"``, a simple fraction ``"2/7"`` and converts the value into the question's unit.
"""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = [
    "ResponseError",
    "UNITS",
    "normalize_text",
    "normalize_unit",
    "parse_quantity",
    "strip_korean_ending",
]


class ResponseError(ValueError):
    """A response that cannot be graded as given (wrong type, not a number, unknown unit).

    The message is Korean and says what to change; the student's input is never discarded because
    of it (the widget keeps and saves the raw text).
    """


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Fold a short answer for comparison.

    Steps: Unicode NFKC (composes NFD Hangul from macOS, turns full-width ``１２`` and ``Ａ`` into
    ASCII), case folding, then removal of every whitespace, punctuation (Unicode category ``P*``)
    and invisible format character (``Cf``: zero-width space, BOM), and a final NFC.

    Args:
        text: any string.

    Returns:
        The folded string, e.g. ``normalize_text(" 한 번에, 한 토큰씩!\\n") == "한번에한토큰씩"``.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"normalize_text: str가 필요합니다 (받은 값의 형식: {type(text).__name__}).")
    s = unicodedata.normalize("NFKC", text).casefold()
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch.isspace() or cat.startswith("P") or cat in ("Cf", "Cc", "Zs", "Zl", "Zp"):
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


# Polite / plain sentence endings a student may add to a noun answer ("디코드 단계입니다").
_ENDINGS = ("입니다", "이에요", "예요", "이요", "이다", "임", "요")


def strip_korean_ending(folded: str) -> str:
    """Remove one sentence ending (``입니다``, ``이에요``, ``예요``, ``이다``, ``임``, ``요``) from a folded
    answer. Used only as an extra way to match, never to reject: ``"메모리대역폭입니다"`` ->
    ``"메모리대역폭"``."""
    for end in _ENDINGS:
        if folded.endswith(end) and len(folded) > len(end):
            return folded[: -len(end)]
    return folded


# --------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------

# alias (folded: NFKC, casefold, no spaces) -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {}


def _add(dimension: str, factor: float, *aliases: str) -> None:
    for a in aliases:
        UNITS[normalize_unit(a)] = (dimension, factor)


def normalize_unit(unit: str) -> str:
    """Fold a unit string: NFKC (``µ`` and ``μ`` both become ``μ``), case folding, no spaces."""
    s = unicodedata.normalize("NFKC", unit).casefold()
    s = s.replace("µ", "μ")
    return "".join(ch for ch in s if not ch.isspace())


_add("ratio", 1.0, "", "배", "x", "×", "times")
_add("ratio", 0.01, "%", "퍼센트", "percent")
_add("count", 1.0, "개", "토큰", "tokens", "token", "tok", "번", "회", "명")
_add("time", 1.0, "s", "sec", "secs", "second", "seconds", "초")
_add("time", 1e-3, "ms", "msec", "밀리초")
_add("time", 1e-6, "μs", "us", "마이크로초")
_add("time", 1e-9, "ns", "nsec", "나노초")
_add("time", 60.0, "min", "mins", "minute", "minutes", "분")
_add("time", 3600.0, "h", "hour", "hours", "시간")
_add("rate", 1.0, "tokens/s", "token/s", "tok/s", "토큰/초", "토큰/s", "tokens/sec", "tok/sec", "t/s", "초당토큰")
_add("bytes", 1.0, "B", "byte", "bytes", "바이트")
_add("bytes", 1e3, "KB", "kB")
_add("bytes", 1e6, "MB")
_add("bytes", 1e9, "GB")
_add("bytes", 1e12, "TB")
_add("bytes", 2.0**10, "KiB")
_add("bytes", 2.0**20, "MiB")
_add("bytes", 2.0**30, "GiB")
_add("bytes", 2.0**40, "TiB")
_add("bandwidth", 1e9, "GB/s")
_add("bandwidth", 1e12, "TB/s")
_add("bandwidth", 1e6, "MB/s")
_add("bandwidth", 2.0**30, "GiB/s")
_add("intensity", 1.0, "FLOP/byte", "FLOP/B", "FLOPs/byte", "플롭/바이트")
_add("flop", 1.0, "FLOP", "FLOPs")
_add("flop", 1e12, "TFLOP")
_add("flop", 1e15, "PFLOP")

_NUMBER = re.compile(
    r"""^\s*(?:약|대략|~|≈|about)?\s*
        (?P<num>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d+)?|[+-]?\.\d+(?:e[+-]?\d+)?)\.?
        (?:\s*/\s*(?P<den>\d+(?:\.\d+)?|\.\d+))?
        \s*(?P<unit>.*?)\s*\Z""",
    re.VERBOSE | re.IGNORECASE,
)


_TAIL_WORDS = ("입니다", "이에요", "예요", "이요", "이다", "정도", "가량", "내외", "남짓", "안팎", "걸립니다", "걸려요",
               "걸린다", "걸림", "쯤", "임", "요", "이")
"""Korean words a student may write after a number and its unit ("21.9ms입니다", "22 ms 정도",
"3초쯤 걸립니다"); they are dropped before the unit is read. Comparisons ("보다 작다") are not."""


def _drop_tail(unit_text: str) -> str:
    """``unit_text`` without the trailing words of :data:`_TAIL_WORDS` (and a final dot)."""
    s = unit_text.strip().rstrip(".").strip()
    changed = True
    while changed and s:
        changed = False
        folded = s.replace(" ", "")
        if normalize_unit(folded) in UNITS and normalize_unit(folded) != "":
            break
        for w in _TAIL_WORDS:
            if folded.endswith(w) and len(folded) >= len(w):
                s = folded[: -len(w)].rstrip(".").strip()
                changed = True
                break
    return s


def parse_quantity(response: object, unit: str) -> float:
    """Read a numeric answer and return its value in ``unit``.

    Args:
        response: an ``int``/``float``, or a string such as ``"150"``, ``"150 s"``, ``"2.5분"``,
            ``"1,000"``, ``"1.5e2"``, ``"약 22 ms"``, ``"75%"``, ``"22."``, a number followed by Korean
            words such as ``입니다``, ``정도``, ``쯤`` (``"21.9ms입니다"``, ``"22 ms 정도"``), or a simple fraction ``"2/7"`` /
            ``"3/4 s"`` (numerator as above, denominator a plain non-zero decimal number). A number
            with no unit is taken to be in the question's unit. A unit of the same kind (time,
            bytes, ...) is converted: ``parse_quantity("2.5분", "s") == 150.0``.
        unit: the question's unit, a key of :data:`UNITS` (``"s"``, ``"ms"``, ``"토큰"``, ``""``...).

    Returns:
        float, finite.

    Raises:
        ResponseError: (Korean message) not a number, not finite or too large for a float (an
            ``int`` with hundreds of digits), a boolean, a fraction with denominator 0, or a unit that
            does not fit the question (``"kg"`` for a time question).
        KeyError: ``unit`` itself is unknown (a quiz authoring error; the schema rejects it first).
    """
    qdim, qfactor = UNITS[normalize_unit(unit)]
    if isinstance(response, bool):
        raise ResponseError("숫자를 입력하세요 (참/거짓 값은 숫자 답으로 쓸 수 없습니다).")
    if isinstance(response, (int, float)):
        try:
            value = float(response)
        except (OverflowError, ValueError):  # an int too large for a float (e.g. 401 digits)
            raise ResponseError("숫자가 너무 큽니다: 유한한 숫자를 입력하세요.") from None
        if not math.isfinite(value):
            raise ResponseError("유한한 숫자를 입력하세요 (무한대나 NaN은 쓸 수 없습니다).")
        return value
    if not isinstance(response, str):
        raise ResponseError("숫자를 입력하세요 (예: 150 또는 150 s).")
    text = unicodedata.normalize("NFKC", response).replace("\u2212", "-")
    if len(text) > 100:
        raise ResponseError("답이 너무 깁니다: 숫자와 단위만 입력하세요 (예: 150 s).")
    m = _NUMBER.fullmatch(text)
    if not m:
        raise ResponseError(
            f"숫자로 읽을 수 없습니다: {response.strip()[:30]!r}. 숫자를 입력하세요 "
            f"(예: 150, 1,000, 0.75, 2.5e3{', 단위 ' + unit if unit else ''})."
        )
    try:
        value = float(m.group("num").replace(",", ""))
        den = float(m.group("den")) if m.group("den") is not None else None
    except (OverflowError, ValueError):  # pragma: no cover - the regex only lets floats through
        raise ResponseError(f"숫자로 읽을 수 없습니다: {response.strip()[:30]!r}.") from None
    if den is not None:
        if den == 0:
            raise ResponseError(f"분모가 0인 분수는 쓸 수 없습니다: {response.strip()[:30]!r}. 분모를 0이 아닌 수로 고치세요.")
        value = value / den
    if not math.isfinite(value):
        raise ResponseError("숫자가 너무 큽니다: 유한한 숫자를 입력하세요.")
    unit_text = m.group("unit")
    if normalize_unit(unit_text) not in UNITS:
        unit_text = _drop_tail(unit_text)
    given = normalize_unit(unit_text)
    if given == "" or given == normalize_unit(unit):
        return value
    if given not in UNITS:
        raise ResponseError(
            f"단위 {unit_text!r}을(를) 알 수 없습니다. 이 문항의 단위는 {unit or '(단위 없음)'}입니다: "
            f"숫자만 입력하거나 {unit or '단위 없이'} 로 쓰세요."
        )
    gdim, gfactor = UNITS[given]
    if gdim != qdim:
        raise ResponseError(
            f"단위 {unit_text!r}은(는) 이 문항에 맞지 않습니다. 이 문항의 단위는 "
            f"{unit or '(단위 없음)'}입니다."
        )
    return value * gfactor / qfactor
