"""decodelab: how large language models produce answers, on a real (tiny) Korean model pair.

Public API (see each function's docstring):

- :func:`load_models`: the bundled target/draft pair, or any local Hugging Face pair.
- :func:`prefill`, :func:`decode_step`: the two phases as separate calls.
- :func:`generate`, :func:`stream`: token-by-token generation with timings (TTFT, TPOT).
- :func:`speculative_generate`, :func:`expected_speedup`: speculative decoding.
- :mod:`decodelab.latency`: hardware/model latency model (numpy only).
- :mod:`decodelab.serving`: TTFT/TPOT/ITL of any OpenAI-compatible server (``decodelab measure``).
- :mod:`decodelab.assess.quiz`: comprehension quizzes and grading one answer.
- :mod:`decodelab.assess.exercises`: predict-then-run (results held until a prediction), written answers, tasks.
- :mod:`decodelab.assess.report`: a folder of student submissions -> practice report CSV (``decodelab grade``).
- :mod:`decodelab.teach.build`: checks of the student's own draft-verify loop, accept/reject rule, roofline.

Names are imported lazily (PEP 562), so ``import decodelab.assess.quiz`` or ``decodelab grade`` does
not pay for importing torch and transformers.

``import decodelab`` also registers the bundled Hangul font with matplotlib (when matplotlib is
installed; see :mod:`decodelab.plots`), so any figure drawn afterwards, the student's own
included, renders Korean text and negative ticks. That costs importing matplotlib (not pyplot),
never torch.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "DecodeState": "decoding",
    "GenerationResult": "decoding",
    "Step": "decoding",
    "decode_step": "decoding",
    "generate": "decoding",
    "prefill": "decoding",
    "stream": "decoding",
    "ModelPair": "models",
    "load_models": "models",
    "SpeculativeResult": "speculative",
    "expected_speedup": "latency",
    "expected_tokens_per_call": "latency",
    "speculative_generate": "speculative",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'decodelab' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


def _register_font() -> None:
    """Register the bundled Hangul font with matplotlib, if matplotlib is importable."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return
    try:
        from . import plots  # registers the font at import (decodelab.plots.setup_korean_font)
    except (OSError, ImportError) as exc:  # a broken install must not stop the package importing
        import warnings

        warnings.warn(f"한글 글꼴을 등록하지 못했습니다 ({exc}). 그림의 한글이 네모로 보일 수 있습니다.", stacklevel=2)
        return
    del plots


_register_font()
