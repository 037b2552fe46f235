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

``import decodelab`` also makes matplotlib use the bundled Hangul font (see :mod:`decodelab.plots`),
so any figure drawn afterwards, the student's own included, renders Korean text and negative
ticks. It registers the font at once when matplotlib is already imported (a notebook that drew
before), and otherwise right after the first ``import matplotlib`` of the process (a post-import
hook, :class:`_FontAfterMatplotlib`): a process that never draws (the ``decodelab`` commands,
the hub's spawn hook, nbgrader) does not pay about 0.25 s of CPU for importing matplotlib.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

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
    """Register the bundled Hangul font with matplotlib (:mod:`decodelab.plots` does it at import)."""
    try:
        from . import plots  # registers the font at import (decodelab.plots.setup_korean_font)
    except (OSError, ImportError) as exc:  # a broken install must not stop the package importing
        import warnings

        warnings.warn(f"한글 글꼴을 등록하지 못했습니다 ({exc}). 그림의 한글이 네모로 보일 수 있습니다.", stacklevel=2)
        return
    del plots


class _FontAfterMatplotlib:
    """A meta path finder that runs :func:`_register_font` right after ``matplotlib`` itself has
    been imported, the first time any code imports it, and then leaves ``sys.meta_path``.

    It finds nothing itself: for ``matplotlib`` it asks the other finders (never another such hook:
    the package imported again, by ``importlib.reload`` or ``%autoreload``, installs none) for the
    real spec and wraps that spec's loader's ``exec_module``; every other name is left to the other
    finders. A spec that is only looked up (``importlib.util.find_spec("matplotlib")``, as libraries
    do to see whether a package is installed) is never executed, so the hook stays until a real
    import. Registering the font can never make ``import matplotlib`` fail: an error becomes a
    warning. A finder put in front of this one later that loads matplotlib itself bypasses it (the
    font is then not registered until :mod:`decodelab.plots` is imported).
    """

    decodelab_font_hook = True  # how a hook is recognised across reloads (the class object changes)

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib":
            return None
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is not None and not getattr(finder, "decodelab_font_hook", False):
                spec = find(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            try:
                sys.meta_path.remove(self)
            except ValueError:  # already gone
                pass
            try:
                _register_font()
            except Exception as exc:  # noqa: BLE001 - matplotlib itself imported fine: keep it usable
                import warnings

                warnings.warn(f"한글 글꼴을 등록하지 못했습니다 ({exc!r}). 그림의 한글이 네모로 보일 수 있습니다.")

        # matplotlib (C extensions: never from a zip) comes from a file finder, which makes a new
        # loader object for each spec: the wrapper belongs to this spec alone
        spec.loader.exec_module = exec_module
        return spec


def _font_when_matplotlib_is_imported() -> None:
    if "matplotlib" in sys.modules:
        _register_font()
    elif not any(getattr(f, "decodelab_font_hook", False) for f in sys.meta_path) \
            and importlib.util.find_spec("matplotlib") is not None:
        sys.meta_path.insert(0, _FontAfterMatplotlib())


_font_when_matplotlib_is_imported()
