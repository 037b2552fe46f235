"""Measure prefill and decode on a real model, to set beside :mod:`decodelab.latency`'s roofline.

* :func:`measure_ttft` — time of :func:`decodelab.prefill` (the first token's logits) against
  prompt length;
* :func:`measure_tpot` — time per :func:`decodelab.decode_step` against position, and TPOT for
  several output lengths (TPOT = (E2E - TTFT) / (n - 1), vLLM's definition, facts/hardware.md);
* :func:`fit_line` — least-squares ``ms = overhead + slope x tokens``: its intercept is the
  per-call overhead (Python, framework, kernel launches) that no roofline contains;
* :func:`measure_matmul_roofline` — the roofline seen on this computer: one fp32 weight matrix
  larger than the last-level cache (:func:`last_level_cache`) times a batch of B vectors, B = 1 ...
  256, as a decode step's weight matmul is; time per step stays flat while memory-bound and rises
  once compute-bound. :func:`matmul_roofline_figure` draws it beside the roofline's prediction.

All functions return plain Python numbers in milliseconds ("measured on this computer"). Timings
on a shared machine vary (~30%): compare numbers from one run only, and use medians.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .decoding import decode_step, prefill
from .models import format_prompt
from ._check import check as _check, fail
from ._torch import threads

__all__ = ["prompt_ids", "measure_ttft", "measure_tpot", "fit_line", "last_level_cache", "matmul_size",
           "matmul_profile", "MatmulRoofline", "measure_matmul_roofline", "matmul_roofline_figure"]

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



# --------------------------------------------------------------------------------------------
# the roofline on this computer: one weight matrix times a batch of vectors

#: What :func:`last_level_cache` assumes when the OS does not say (a common desktop L3).
DEFAULT_LLC_BYTES = 32 * 2**20
FP32_BYTES = 4


def last_level_cache(sys_cpu: str | Path = "/sys/devices/system/cpu/cpu0/cache") -> tuple[int, str]:
    """Size of this computer's last-level CPU cache, in bytes, as the OS reports it.

    Linux: the highest ``level`` among ``sys_cpu/index*/`` (data or unified caches) and its
    ``size`` ("32768K" -> 33,554,432). macOS: ``sysctl hw.l3cachesize`` (or ``hw.l2cachesize``
    where there is no L3, as on Apple silicon). Otherwise, or if reading fails, 32 MiB (가정).

    Args:
        sys_cpu: the Linux sysfs folder to read (a parameter so that tests can pass a fake one).

    Returns:
        ``(bytes, where)``: the size and a short Korean note of where it came from.
    """
    best: tuple[int, int] | None = None
    folder = Path(sys_cpu)
    for index in sorted(folder.glob("index*")) if folder.is_dir() else []:
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if best is None or level > best[0]:
            best = (level, size)
    if best is not None:
        return best[1], f"운영체제가 알려 준 L{best[0]} 캐시 ({folder})"
    if sys.platform == "darwin":
        for key, name in (("hw.l3cachesize", "L3"), ("hw.l2cachesize", "L2")):
            try:
                out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5).stdout
                if int(out.strip() or 0) > 0:
                    return int(out.strip()), f"운영체제가 알려 준 {name} 캐시 (sysctl {key})"
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
    return DEFAULT_LLC_BYTES, "가정: 운영체제가 캐시 크기를 알려 주지 않아 32 MiB로 둠"


def _parse_size(text: str) -> int:
    """sysfs cache sizes: "48K", "2048K", "32M" or plain bytes."""
    t = text.strip().upper()
    unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    return int(t[:-1] if unit != 1 else t) * unit


def matmul_size(llc_bytes: int, *, factor: float = 2.0, multiple: int = 256, max_bytes: int = 512 * 2**20) -> int:
    """Side n of the square fp32 weight matrix for :func:`measure_matmul_roofline`.

    The smallest multiple of ``multiple`` with ``4 n^2 >= factor x llc_bytes`` (so the weights
    cannot stay in the cache between steps), capped so the matrix holds at most ``max_bytes``
    (and at least one ``multiple``). 32 MiB L3, factor 2: n = 4096 (64 MiB).

    Raises:
        TypeError / ValueError: ``llc_bytes`` not an integer >= 1, ``factor`` <= 0.
    """
    llc = _check("llc_bytes", llc_bytes, "캐시 크기(bytes)", low=1, integer=True)
    factor = _check("factor", factor, "캐시 크기의 몇 배", strict=True)
    want = min(factor * llc, max_bytes) / FP32_BYTES
    n = int(np.ceil(np.sqrt(want) / multiple)) * multiple
    while n > multiple and FP32_BYTES * n * n > max_bytes:
        n -= multiple
    return max(n, multiple)


def matmul_profile(n: int):
    """The roofline's view of one n x n fp32 weight matrix: a :class:`decodelab.latency.ModelProfile`
    with ``n_params = n^2`` and nothing else that costs (no attention, no KV cache), so that
    ``latency.roofline(profile, hw, 1, 0, 0, batch=B)`` counts 2 n^2 B FLOP and 4 n^2 bytes (the
    weights; the B input and output vectors, 8 B n bytes, are left out as the core leaves out
    activations: at most 2 B / n of the weights, 12% for B = 256, n = 4096)."""
    from .profiles import ModelProfile

    n = _check("n", n, "행렬 크기", low=1, integer=True)
    return ModelProfile(f"가중치 행렬 {n}x{n}", n * n, 1, n, 1, 1, 1, 0, 0, dtype="fp32", kv_dtype="fp32",
                        source="decodelab.latency_measure.matmul_profile")


@dataclass
class MatmulRoofline:
    """What :func:`measure_matmul_roofline` returns: one weight matrix, several batch sizes.

    Attributes:
        n: side of the square fp32 weight matrix; ``weight_bytes = 4 n^2``.
        llc_bytes, llc_source: the last-level cache it was sized against, and where that came from.
        batch_sizes: B values, increasing.
        ms: median ms of one ``(B, n) @ (n, n)`` product (one "step") per B, measured on this computer.
            B = 1 runs a matrix-vector kernel that streams the weights once; B >= 2 a matrix-matrix
            kernel, which on some CPU libraries (MKL) is up to 2x slower at small B and then flat.
        all_ms: every timed repeat per B, ms.
        threads: torch CPU threads used.
    """

    n: int
    llc_bytes: int
    llc_source: str
    batch_sizes: list[int]
    ms: list[float]
    all_ms: list[list[float]] = field(repr=False)
    threads: int = 1

    @property
    def weight_bytes(self) -> int:
        return FP32_BYTES * self.n * self.n

    def flops(self, batch) -> np.ndarray:
        """FLOP of one step at batch B: 2 n^2 B (roofline core)."""
        from .latency import roofline

        return roofline(matmul_profile(self.n), None, 1, 0, 0, np.asarray(batch, dtype=float)).flops

    @property
    def bandwidth(self) -> float:
        """Measured memory bandwidth, bytes/s: weight bytes / the median step time at the smallest
        batch (memory-bound there: the step is the time to stream the weights once)."""
        return self.weight_bytes / (self.ms[0] / 1e3)

    @property
    def peak_flops(self) -> float:
        """Measured FLOP/s: the highest 2 n^2 B / time over the batch sizes (reached once compute-bound)."""
        return float(np.max(self.flops(self.batch_sizes) / (np.asarray(self.ms) / 1e3)))

    @property
    def ridge_point(self) -> float:
        """Measured ridge point, FLOP/byte: peak FLOP/s / bandwidth (Williams et al. 2009)."""
        return self.peak_flops / self.bandwidth

    @property
    def ridge_batch(self) -> float:
        """Batch where this matmul's intensity 2 B / 4 (FLOP/byte, fp32) meets the ridge: 2 x ridge."""
        return self.ridge_point * FP32_BYTES / 2

    def hardware(self):
        """This computer as the roofline sees it, from this measurement: a :class:`decodelab.latency.Hardware`."""
        from .profiles import Hardware

        return Hardware("이 컴퓨터 (행렬 곱으로 측정)", None, self.bandwidth, {"fp32": self.peak_flops},
                        source=f"measured: {self.n}x{self.n} fp32 matmul, B = {self.batch_sizes[0]}..{self.batch_sizes[-1]}",
                        notes="실행할 때 측정한 값: 같은 실행 안에서만 비교하세요")

    def predicted_ms(self, hardware=None) -> np.ndarray:
        """Roofline prediction per batch size, ms: max(2 n^2 B / FLOP/s, 4 n^2 / bandwidth) from
        :func:`decodelab.latency.roofline`, on ``hardware`` (default :meth:`hardware`)."""
        from .latency import roofline

        hw = self.hardware() if hardware is None else hardware
        return roofline(matmul_profile(self.n), hw, 1, 0, 0, np.asarray(self.batch_sizes, dtype=float)).ms

    def ratio(self, batch: int) -> float:
        """Measured step time at ``batch`` / at the smallest batch (1.0 = flat)."""
        return self.ms[self.batch_sizes.index(batch)] / self.ms[0]


def measure_matmul_roofline(batch_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256), *,
                            n: int | None = None, repeats: int = 5, warmup: int = 1,
                            num_threads: int | None = 1, seed: int = 0) -> MatmulRoofline:
    """Time one decode-like weight matmul, ``(B, n) @ (n, n)`` in fp32 torch on CPU, for each B.

    A decode step multiplies every weight matrix by the batch's B activation vectors: each weight
    is read once and used for B multiply-adds, 2 B / 4 FLOP/byte in fp32. While that is below the
    ridge point the time is the weight read (flat in B); above it the time grows with B.
    The matrix is sized from the last-level cache (:func:`last_level_cache`, :func:`matmul_size`:
    64 MiB for a 32 MiB L3) so its bytes really come from memory every step.

    Args:
        batch_sizes: increasing ints >= 1 (B); the first is the memory-bound reference.
        n: matrix side; default :func:`matmul_size` of the last-level cache.
        repeats: timed products per B (>= 1), the median kept. warmup: untimed products per B (>= 0).
        num_threads: torch threads while timing (restored afterwards); default 1, as in
            :func:`measure_tpot` (steadier on a shared machine). ``None`` keeps torch's setting.
        seed: seed of the random matrix.

    Returns:
        :class:`MatmulRoofline` (ms measured on this computer: about 1-2 s in all for n = 4096).

    Raises:
        TypeError / ValueError: a batch size not an int >= 1 or not increasing, n < 1, repeats < 1,
            warmup < 0, or a bad num_threads.
    """
    sizes = [int(b) for b in np.atleast_1d(_check("batch_sizes", batch_sizes, "배치 크기 목록", low=1,
                                                  integer=True, array=True))]
    if any(b >= c for b, c in zip(sizes, sizes[1:])):
        raise ValueError(f"batch_sizes={list(batch_sizes)}: 배치 크기는 커지는 순서여야 합니다 "
                         "(허용: 예 (1, 2, 4, 8, 16, 32, 64, 128, 256))")
    llc, where = last_level_cache()
    n = matmul_size(llc) if n is None else _check("n", n, "행렬 크기", low=1, integer=True)
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    warmup = _check("warmup", warmup, "준비 실행 횟수", integer=True)
    gen = torch.Generator().manual_seed(seed)
    weight = torch.randn(n, n, generator=gen)
    out = {"ms": [], "all_ms": []}
    with threads(num_threads, name="num_threads"), torch.inference_mode():
        used = torch.get_num_threads()
        for b in sizes:
            x = torch.randn(b, n, generator=gen)
            for _ in range(warmup):
                torch.matmul(x, weight)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                torch.matmul(x, weight)
                times.append((time.perf_counter() - t0) * 1e3)
            out["ms"].append(statistics.median(times))
            out["all_ms"].append(times)
    return MatmulRoofline(int(n), int(llc), where, sizes, out["ms"], out["all_ms"], used)


def matmul_roofline_figure(result: MatmulRoofline, *, prediction=None, ax=None):
    """Step time against batch size (log-log): measured, and the roofline's prediction.

    Args:
        result: from :func:`measure_matmul_roofline`.
        prediction: a :class:`decodelab.latency.Hardware` for a second, independent prediction
            (e.g. ``latency.get_hardware("this-computer")``: numpy copy and 1024x1024 matmul),
            drawn dashed; the solid grey line is the roofline on this measurement's own bandwidth
            and FLOP/s (:meth:`MatmulRoofline.hardware`).
        ax: an Axes to draw on; default a new 9.5 x 4.2 in figure.

    Returns:
        the matplotlib Figure.
    """
    from .plots import new_figure

    if ax is None:
        fig, ax = new_figure(figsize=(9.5, 4.2), dpi=110)
    fig = ax.figure
    b = np.asarray(result.batch_sizes)
    ax.plot(b, result.ms, "o-", color="#dc2626", lw=2, label="측정 (이 컴퓨터)")
    ax.plot(b, result.predicted_ms(), "-", color="#6b7280", lw=2, alpha=0.8,
            label="루프라인 (이 측정의 대역폭과 FLOP/s)")
    if prediction is not None:
        name = ("이 컴퓨터의 다른 측정: numpy 복사와 행렬 곱" if prediction.name == "this computer"
                else prediction.name)
        ax.plot(b, result.predicted_ms(prediction), "--", color="#2563eb", lw=1.5, label=f"루프라인 ({name} 값)")
    ax.axvline(result.ridge_batch, color="#9333ea", ls=":", lw=1.5)
    ax.text(result.ridge_batch, ax.get_ylim()[1], f" 리지 포인트: B ≈ {result.ridge_batch:.0f}", color="#9333ea",
            va="top", fontsize=11)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(b, [str(x) for x in b])
    ax.set_xlabel("배치 크기 B (가중치 행렬에 곱하는 벡터 수)", fontsize=12)
    ax.set_ylabel("스텝 하나 (ms)", fontsize=12)
    ax.set_title(f"가중치 {result.weight_bytes / 2**20:.0f} MiB 행렬 곱: 메모리 한계에서는 평평, 연산 한계에서는 오름",
                 fontsize=13)
    ax.tick_params(labelsize=11)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=10, loc="upper left")
    fig.tight_layout()
    return fig
