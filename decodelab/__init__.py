"""decodelab: how large language models produce answers, on a real (tiny) Korean model pair.

Public API (see each function's docstring):

- :func:`load_models`: the bundled target/draft pair, or any local Hugging Face pair.
- :func:`prefill`, :func:`decode_step`: the two phases as separate calls.
- :func:`generate`, :func:`stream`: token-by-token generation with timings (TTFT, TPOT).
- :func:`speculative_generate`, :func:`expected_speedup`: speculative decoding.
- :mod:`decodelab.latency`: hardware/model latency model (numpy only).
- :mod:`decodelab.serving`: TTFT/TPOT/ITL of any OpenAI-compatible server (``decodelab measure``).
- :mod:`decodelab.quiz`: comprehension quizzes and grading.

Names are imported lazily (PEP 562), so ``import decodelab.quiz`` or ``decodelab grade`` does
not pay for importing torch and transformers.
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
    "expected_speedup": "speculative",
    "expected_tokens_per_call": "speculative",
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
