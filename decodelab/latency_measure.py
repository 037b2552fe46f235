"""Measure prefill and decode on a real model, to set beside :mod:`decodelab.latency`'s roofline.

* :func:`measure_ttft` — time of :func:`decodelab.prefill` (the first token's logits) against
  prompt length;
* :func:`measure_tpot` — time per :func:`decodelab.decode_step` against position, and TPOT for
  several output lengths (TPOT = (E2E - TTFT) / (n - 1), vLLM's definition, facts/hardware.md);
* :func:`fit_line` — least-squares ``ms = overhead + slope x tokens``: its intercept is the
  per-call overhead (Python, framework, kernel launches) that no roofline contains.

All functions return plain Python numbers in milliseconds ("measured on this computer"). Timings
on a shared machine vary (~30%): compare numbers from one run only, and use medians.
"""

from __future__ import annotations

import statistics
import time
from typing import Sequence

import numpy as np
import torch

from .decoding import decode_step, prefill
from .models import format_prompt
from ._check import check as _check, fail
from ._torch import threads

__all__ = ["prompt_ids", "measure_ttft", "measure_tpot", "fit_line"]

# A neutral Korean passage (our own words) tiled to any length; only its token count matters.
_TEXT = (
    "언어 모델은 먼저 입력 문장을 한 번에 읽어 들이고, 그다음 답을 한 토큰씩 이어서 씁니다. "
    "읽는 단계와 쓰는 단계는 걸리는 시간의 성격이 서로 다릅니다. "
)



def _max_positions(model) -> int:
    return int(getattr(model.config, "max_position_embeddings", 10**9) or 10**9)


def prompt_ids(tokenizer, n_tokens: int) -> torch.Tensor:
    """A prompt of exactly ``n_tokens`` tokens: a fixed Korean passage, tiled and cut.

    Only the token count matters for timing; the passage is our own text (no source needed).

    Args:
        tokenizer: the model's tokenizer (e.g. ``load_models().tokenizer``).
        n_tokens: prompt length in tokens, integer >= 1.

    Returns:
        LongTensor of shape ``(1, n_tokens)``.

    Raises:
        TypeError / ValueError: ``n_tokens`` not an integer >= 1.
    """
    n_tokens = _check("n_tokens", n_tokens, "프롬프트 토큰 수", low=1, integer=True)
    base = format_prompt(tokenizer, _TEXT)
    reps = -(-n_tokens // len(base))
    return torch.tensor([(base * reps)[:n_tokens]], dtype=torch.long)


def _check_lengths(name: str, values: Sequence[int], limit: int, low: int = 1) -> list[int]:
    """Token counts, each an integer in [low, limit] (limit: the model's positions)."""
    vals = _check(name, values, "토큰 수 목록", low=low, high=limit, integer=True, array=True)
    return [int(v) for v in np.atleast_1d(vals)]


def measure_ttft(model, tokenizer, prompt_lengths: Sequence[int] = (8, 32, 64, 128, 256), *,
                 repeats: int = 5, warmup: int = 2, num_threads: int | None = 1) -> dict[str, list]:
    """Median prefill time (≈ TTFT with no queue or network) for each prompt length.

    Each measurement is one :func:`decodelab.prefill` call (one forward pass over the prompt,
    filling a fresh KV cache). ``warmup`` untimed calls come first (lazy initialisation, caches).

    Args:
        model: a transformers causal LM (e.g. ``load_models().target``), on CPU.
        tokenizer: its tokenizer.
        prompt_lengths: prompt sizes in tokens, each in [1, max_position_embeddings].
        repeats: timed calls per length (>= 1); the median is reported.
        warmup: untimed calls before timing (>= 0), on the first length.
        num_threads: torch CPU threads while measuring (restored afterwards); default 1, because
            on a machine shared with other work, idle-spinning worker threads make a tiny
            model's timings erratic. ``None`` keeps torch's setting.

    Returns:
        ``{"prompt_tokens": [S...], "ttft_ms": [median ms...], "all_ms": [[ms per repeat]...]}``:
        lists of length ``len(prompt_lengths)``, times in ms, "measured on this computer".

    Raises:
        TypeError / ValueError: a length outside [1, max positions], repeats < 1, warmup < 0, or
            num_threads not None and not an integer >= 1.
    """
    lengths = _check_lengths("prompt_lengths", prompt_lengths, _max_positions(model))
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    warmup = _check("warmup", warmup, "준비 실행 횟수", integer=True)
    out = {"prompt_tokens": lengths, "ttft_ms": [], "all_ms": []}
    with threads(num_threads, name="num_threads"):
        for _ in range(warmup):
            prefill(model, prompt_ids(tokenizer, lengths[0]))
        for s in lengths:
            ids = prompt_ids(tokenizer, s)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                prefill(model, ids)
                times.append((time.perf_counter() - t0) * 1e3)
            out["ttft_ms"].append(statistics.median(times))
            out["all_ms"].append(times)
    return out


def measure_tpot(model, tokenizer, output_lengths: Sequence[int] = (2, 8, 32, 64, 128), *,
                 prompt_tokens: int = 32, repeats: int = 3, warmup: int = 1,
                 num_threads: int | None = 1) -> dict[str, list]:
    """Decode-step times against position, and TPOT for each output length.

    One run = :func:`decodelab.prefill` of a ``prompt_tokens`` prompt, then
    ``max(output_lengths) - 1`` greedy :func:`decodelab.decode_step` calls, each timed. Per step
    the median over ``repeats`` runs is kept. TPOT for ``n`` output tokens is the mean of the
    first ``n - 1`` step times (the prefill pass yields the first token): vLLM's
    TPOT = (E2E - TTFT) / (n - 1) (facts/hardware.md "Serving metrics").

    Args:
        model, tokenizer: as :func:`measure_ttft`.
        output_lengths: n values, output tokens per request, each >= 2 (TPOT needs one decode
            step) and with ``prompt_tokens + n`` within the model's positions.
        prompt_tokens: S, prompt length in tokens (>= 1).
        repeats: timed runs (>= 1); the median per step is kept. warmup: untimed runs (>= 0).
        num_threads: as in :func:`measure_ttft`.

    Returns:
        ``{"output_tokens": [n...], "tpot_ms": [ms...], "position": [cache length before each
        step...], "step_ms": [median ms of each step...], "prompt_tokens": S}``: ``tpot_ms`` has
        ``len(output_lengths)`` entries, ``position`` and ``step_ms`` have ``max(n) - 1``; ms,
        "measured on this computer".

    Raises:
        TypeError / ValueError: output lengths < 2 (TPOT needs a decode step) or prompt + output
            beyond the model's positions, prompt_tokens < 1, repeats < 1, warmup < 0, or a bad num_threads.
    """
    prompt_tokens = _check("prompt_tokens", prompt_tokens, "프롬프트 토큰 수", low=1, integer=True)
    lengths = _check_lengths("output_lengths", output_lengths, _max_positions(model) - prompt_tokens, low=2)
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    warmup = _check("warmup", warmup, "준비 실행 횟수", integer=True)
    n_steps = max(lengths) - 1
    ids = prompt_ids(tokenizer, prompt_tokens)

    def run() -> list[float]:
        state = prefill(model, ids)
        times = []
        for _ in range(n_steps):
            tok = int(torch.argmax(state.logits))
            t0 = time.perf_counter()
            state = decode_step(model, state, tok)
            times.append((time.perf_counter() - t0) * 1e3)
        return times

    with threads(num_threads, name="num_threads"):
        for _ in range(warmup):
            run()
        runs = np.array([run() for _ in range(repeats)])
    step_ms = np.median(runs, axis=0)
    return {
        "output_tokens": lengths,
        "tpot_ms": [float(step_ms[: n - 1].mean()) for n in lengths],
        "position": [int(prompt_tokens) + i for i in range(n_steps)],
        "step_ms": [float(v) for v in step_ms],
        "prompt_tokens": int(prompt_tokens),
    }


def fit_line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares straight line ``y = intercept + slope x``.

    For TTFT against prompt length the intercept is the per-call overhead (ms) and the slope the
    marginal ms per prompt token (ordinary least squares, ``numpy.polyfit`` of degree 1).

    Args:
        x, y: sequences of the same length (>= 2), e.g. prompt tokens and ms.

    Returns:
        ``(intercept, slope)`` as floats.

    Raises:
        TypeError: non-numbers. ValueError: fewer than 2 points or different lengths.
    """
    xs, ys = (np.atleast_1d(_check(k, v, "점의 좌표", low=-np.inf, array=True)) for k, v in (("x", x), ("y", y)))
    if xs.shape != ys.shape or xs.size < 2:
        raise fail("x", xs, f"두 좌표 목록의 길이가 다르거나 점이 2개보다 적습니다 (y=array{ys.shape})",
                   "길이가 같고 점이 2개 이상", shape=True)
    slope, intercept = np.polyfit(xs, ys, 1)
    return float(intercept), float(slope)
