"""Matplotlib figures with Hangul: the bundled NanumGothic font, registered at import.

Importing this module (``import decodelab.plots``) makes every later matplotlib figure able to
draw Korean text, offline and on any Python the course supports (3.10-3.13):

* the bundled font ``decodelab/assets/fonts/NanumGothic.ttf`` (SIL Open Font License 1.1, text in
  ``OFL-NanumGothic.txt`` beside it) is added to matplotlib's font manager with
  ``matplotlib.font_manager.fontManager.addfont`` — no system font, no font cache rebuild, no
  network, no third-party helper such as koreanize-matplotlib;
* it becomes the first ``sans-serif`` family, with matplotlib's own DejaVu Sans named after it in
  ``font.family`` as a per-glyph fallback (matplotlib >= 3.6 draws each glyph missing from one
  family from the next family in ``font.family``);
* ``axes.unicode_minus`` is set from the font's own character map: NanumGothic has no
  U+2212 MINUS SIGN, so tick labels use the ASCII hyphen-minus, which it does have. Without this,
  negative ticks print the warning ``Glyph 8722 (\\N{MINUS SIGN}) missing from font(s) NanumGothic``.

Always create course figures through :func:`new_figure`, and close the figures you do not return
(``plt.close(fig)``) so that slider moves do not pile figures up.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib import font_manager

from ._paths import FONTS_DIR

__all__ = [
    "FONT_FAMILY",
    "FONT_PATH",
    "FONT_LICENSE_PATH",
    "font_has_char",
    "byte_pieces",
    "new_figure",
    "plot_label",
    "setup_korean_font",
]

FONT_DIR = FONTS_DIR
#: The bundled Hangul font (NanumGothic Regular, NAVER, SIL OFL 1.1).
FONT_PATH = FONT_DIR / "NanumGothic.ttf"
#: Its licence text, shipped beside it as the OFL requires.
FONT_LICENSE_PATH = FONT_DIR / "OFL-NanumGothic.txt"
#: The family name stored in the font's ``name`` table (what matplotlib matches on).
FONT_FAMILY = "NanumGothic"
#: Fallback for glyphs NanumGothic lacks; it ships inside matplotlib itself.
FALLBACK_FAMILY = "DejaVu Sans"

MINUS_SIGN = "\N{MINUS SIGN}"  # U+2212, what matplotlib draws for negative ticks by default


@lru_cache(maxsize=None)
def _font_codepoints(path: str) -> frozenset[int]:
    """Code points present in a TrueType font's best Unicode cmap (read with fontTools)."""
    from fontTools.ttLib import TTFont  # a matplotlib dependency, always installed with it

    font = TTFont(path, lazy=True)
    try:
        return frozenset(font.getBestCmap() or ())
    finally:
        font.close()


def font_has_char(char: str, path: str | Path = FONT_PATH) -> bool:
    """Whether the font at ``path`` has a glyph for every character of ``char``.

    Args:
        char: one or more characters, e.g. ``"\\N{MINUS SIGN}"`` or ``"가"``.
        path: a .ttf/.otf file; defaults to the bundled NanumGothic.

    Returns:
        True when each code point of ``char`` is in the font's Unicode character map.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"글꼴 파일이 없습니다: {path} (path 인자에 .ttf 파일 경로를 주세요)")
    codepoints = _font_codepoints(str(path))
    return all(ord(c) in codepoints for c in char)


def _is_registered(path: Path) -> bool:
    target = str(path)
    return any(entry.fname == target for entry in font_manager.fontManager.ttflist)


def setup_korean_font() -> str:
    """Register the bundled NanumGothic with matplotlib and make it the default sans-serif font.

    Idempotent (safe to call again, e.g. after ``plt.rcdefaults()`` or a style change). Puts
    ``"NanumGothic"`` first in ``font.sans-serif``, sets ``font.family = ["sans-serif",
    "DejaVu Sans"]`` (the second entry is matplotlib's per-glyph fallback for the rare symbol
    NanumGothic lacks), and sets ``axes.unicode_minus`` to whether NanumGothic has U+2212 (it
    does not, so ``False``: negative numbers are drawn with ``-``, U+002D).

    Returns:
        The registered family name, ``"NanumGothic"``.

    Raises:
        FileNotFoundError: if the bundled font file is missing from the installed package
            (the Korean message says how to reinstall decodelab: ``pip install --force-reinstall
            --no-deps decodelab``, or ``pip install -e .`` in a checkout of the repository).
    """
    if not FONT_PATH.is_file():
        raise FileNotFoundError(
            f"번들 한글 글꼴이 없습니다: {FONT_PATH}. decodelab 패키지를 다시 설치하세요: "
            "pip install --force-reinstall --no-deps decodelab (저장소를 내려받아 설치했다면 저장소 폴더에서 pip install -e .)."
        )
    fm = font_manager.fontManager
    if not _is_registered(FONT_PATH):
        fm.addfont(str(FONT_PATH))
    if fm.ttflist and fm.ttflist[0].fname != str(FONT_PATH):
        # A system copy of NanumGothic (Debian's fonts-nanum) scores the same as ours and, listed
        # first, would win the tie in findfont: put the bundled file first so every computer
        # draws with the same file, the one whose character map set axes.unicode_minus.
        fm.ttflist.sort(key=lambda entry: entry.fname != str(FONT_PATH))
        cached = getattr(fm, "_findfont_cached", None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    rc = matplotlib.rcParams
    others = [f for f in rc["font.sans-serif"] if f not in (FONT_FAMILY, FALLBACK_FAMILY)]
    rc["font.sans-serif"] = [FONT_FAMILY, FALLBACK_FAMILY, *others]
    # matplotlib falls back glyph by glyph along ``font.family`` (it does not expand the generic
    # "sans-serif" into its list for fallback), so DejaVu Sans is named there explicitly too.
    rc["font.family"] = ["sans-serif", FALLBACK_FAMILY]
    rc["axes.unicode_minus"] = font_has_char(MINUS_SIGN)
    return FONT_FAMILY


def new_figure(nrows: int = 1, ncols: int = 1, *, pyplot: bool = True, **kwargs: Any):
    """Create a figure and its axes with the Hangul font in place.

    A thin wrapper over :func:`matplotlib.pyplot.subplots` (``pyplot=True``, the default) or
    over :class:`matplotlib.figure.Figure` + ``Figure.subplots`` (``pyplot=False``: a figure
    pyplot does not track, which never needs ``plt.close`` and suits a figure reused across
    slider moves; show it with ``IPython.display.display(fig)``).

    Args:
        nrows, ncols: grid of axes, as in ``plt.subplots``.
        pyplot: whether pyplot manages the figure (see above).
        **kwargs: passed on: ``figsize`` (inches), ``dpi``, ``layout``, ``sharex``, ``sharey``,
            ``squeeze``, ``subplot_kw``, ``gridspec_kw``, ``width_ratios``, ``height_ratios``, and
            any other ``Figure`` keyword.

    Returns:
        ``(fig, ax)`` exactly as ``plt.subplots`` returns it: one ``Axes`` for a 1x1 grid,
        otherwise a numpy array of ``Axes`` of shape ``(nrows, ncols)`` squeezed.

    Raises:
        ValueError / TypeError: from matplotlib for invalid grid sizes or keywords.
    """
    setup_korean_font()
    if pyplot:
        import matplotlib.pyplot as plt

        return plt.subplots(nrows, ncols, **kwargs)
    from matplotlib.figure import Figure

    subplot_keys = ("sharex", "sharey", "squeeze", "subplot_kw", "gridspec_kw", "width_ratios", "height_ratios")
    sub = {k: kwargs.pop(k) for k in subplot_keys if k in kwargs}
    fig = Figure(**kwargs)
    return fig, fig.subplots(nrows, ncols, **sub)


setup_korean_font()


# Tokens as figure labels (also used by the subject's own figures, e.g. attention maps).

#: The one space marker of the course (U+2423 OPEN BOX; "·" is a Korean list dot in the text).
SPACE = "\u2423"


def show_whitespace(text: str) -> str:
    """Make whitespace visible (space -> ␣, newline -> ⏎). Plain text: no HTML escaping."""
    return text.replace(" ", SPACE).replace("\n", "⏎")


def _gpt2_byte_decoder() -> dict[str, int]:
    """The byte-level BPE alphabet back to bytes: GPT-2's ``bytes_to_unicode`` inverted
    (openai/gpt-2 ``src/encoder.py``): printable Latin-1 bytes stand for themselves, the other 68
    bytes for U+0100 onwards in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


_BYTE_DECODER = _gpt2_byte_decoder()


def byte_pieces(tokenizer, token_id: int) -> str:
    """A token that holds only part of a character's UTF-8 bytes, as byte pieces: ``<0xEB><0x98>``.

    Byte-level BPE tokenizers (GPT-2, Llama 3, this course's) store such a token as letters of
    their 256-letter byte alphabet ("ë", "ĺ"); this turns them back into the bytes, written the way
    SentencePiece's byte fallback names them. Letters outside the alphabet are kept as they are.
    """
    token = tokenizer.convert_ids_to_tokens(int(token_id))
    return "".join(f"<0x{_BYTE_DECODER[ch]:02X}>" if ch in _BYTE_DECODER else ch for ch in token)


def plot_label(tokenizer, token_id: int) -> str:
    """A token as a matplotlib label: its text with whitespace made visible, never HTML-escaped.

    Matplotlib draws text literally, so ``</s>`` must stay ``</s>`` (escaping it would show
    ``&lt;/s&gt;``). Leading and trailing spaces are dropped (short labels); a token that is only
    a space is shown as ``␣``, newlines as ``⏎``, and a token holding only part of a character's
    bytes as byte pieces (:func:`byte_pieces`).
    """
    text = tokenizer.decode([int(token_id)])
    if "\ufffd" in text:
        return byte_pieces(tokenizer, token_id)
    return show_whitespace(text.strip(" ")) if text.strip(" ") else (SPACE if text else "▯")
