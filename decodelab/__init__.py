"""decodelab: how large language models produce answers, on a real (tiny) Korean model pair.

Public API (see each function's docstring):

- :func:`load_models`: the bundled target/draft pair, or any local Hugging Face pair.
- :func:`prefill`, :func:`decode_step`: the two phases as separate calls.
- :func:`generate`, :func:`stream`: token-by-token generation with timings (TTFT, TPOT).
- :func:`speculative_generate`, :func:`expected_speedup`: speculative decoding.
- :mod:`decodelab.latency`: hardware/model latency model (numpy only).
- :mod:`decodelab.quiz`: comprehension quizzes and grading.
"""

from .decoding import DecodeState, GenerationResult, Step, decode_step, generate, prefill, stream
from .models import ModelPair, load_models

__version__ = "0.1.0"

__all__ = [
    "DecodeState",
    "GenerationResult",
    "ModelPair",
    "Step",
    "decode_step",
    "generate",
    "load_models",
    "prefill",
    "stream",
]

try:  # speculative decoding (decodelab.speculative) is optional while it is being written
    from .speculative import expected_speedup, speculative_generate  # noqa: F401

    __all__ += ["expected_speedup", "speculative_generate"]
except ImportError:  # pragma: no cover
    pass
