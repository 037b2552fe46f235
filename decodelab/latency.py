"""How long does an answer take? A sourced back-of-envelope latency model (numpy only).

This module turns published chip figures and a model's Hugging Face config into times (ms):

* **hardware profiles** (:class:`Hardware`, :func:`get_hardware`): memory, memory bandwidth and
  dense FLOP/s per number format, for H100 SXM, H200, B200, Rubin, Groq 3 LPU (one chip and the
  LPX rack), Trainium2, Trainium3, and ``"this-computer"`` measured at run time;
* **model profiles** (:class:`ModelProfile`, :func:`get_model`, :func:`model_from_config`):
  parameters, layers, query/KV heads, head size and bytes per value;
* the **roofline** (Williams et al., "Roofline", CACM 2009): a step takes
  ``max(bytes / bandwidth, FLOPs / FLOP/s)`` — :func:`prefill_ms` (compute-bound for long
  prompts), :func:`decode_step_ms` (memory-bound: every step reads all weights and the KV cache),
  :func:`ttft_ms`, :func:`tpot_ms`, :func:`e2e_ms`, :func:`arithmetic_intensity`,
  :func:`ridge_point`;
* **disaggregated serving** (:func:`disaggregated`): prefill on one device, decode on another,
  the KV cache sent over a link (:func:`kv_transfer_ms`); and the **layer split** NVIDIA
  described for Rubin + Groq 3 LPX (:func:`layer_split_decode_ms`);
* an **agent loop** (:func:`agent_loop`): model call, tool call, model call, ... with growing
  context and optional speculative decoding (:func:`speculative_speedup`, Leviathan et al. 2023).

Sources. Chip figures and the formulas are the rows of the course's facts file
``facts/hardware.md`` (formulas from kipp.ly, "Transformer Inference Arithmetic", 2022, and
LLM-Viewer, arXiv 2402.16363); every preset function below cites its row. Figures are DENSE
(NVIDIA datasheets print sparse FLOP/s, twice the dense figure). Where a figure is not published
the preset says what it assumes instead. The speculative-decoding speed-up formula is Leviathan
et al. 2023 (arXiv 2211.17192), as recorded in ``facts/speculative.md``.

What the model leaves out (so its times are lower bounds): kernel launch and framework overhead
(which dominates tiny models on a CPU: see notebook 02), queueing, batching schedulers,
communication between chips unless you pass ``comm_ms``, and imperfect utilisation unless you pass
``mfu`` / ``mbu`` below 1.

Units: bytes, bytes/s, FLOP, FLOP/s, tokens, milliseconds (``_ms``) and seconds (``_s``).
Every function that takes a count or a rate raises ``ValueError`` with a Korean message that names
the parameter (English name) and the allowed values.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

__all__ = [
    "DTYPE_BYTES",
    "Hardware",
    "Link",
    "ModelProfile",
    "StepEstimate",
    "SpeculativeConfig",
    "AgentLoopResult",
    "DisaggregatedResult",
    "RatePreset",
    "HARDWARE_NAMES",
    "MODEL_NAMES",
    "LINK_NAMES",
    "get_hardware",
    "get_model",
    "get_link",
    "model_from_config",
    "measure_this_computer",
    "kv_bytes_per_token",
    "prefill_flops",
    "prefill_ms",
    "decode_step",
    "decode_step_ms",
    "ttft_ms",
    "tpot_ms",
    "e2e_ms",
    "arithmetic_intensity",
    "weight_matmul_intensity",
    "ridge_point",
    "fits_in_memory",
    "kv_transfer_ms",
    "disaggregated",
    "layer_split_decode_ms",
    "speculative_speedup",
    "expected_tokens_per_call",
    "agent_loop",
    "rate_presets",
    "amdahl_speedup",
    "chips_needed",
]

#: Bytes per stored value for each number format the model knows (``fp4`` = NVFP4/MXFP4,
#: 4 bits, ignoring the small per-block scale factors).
DTYPE_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}

_DTYPE_ALIASES = {
    "float32": "fp32", "f32": "fp32", "fp32": "fp32",
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "half": "fp16", "fp16": "fp16", "f16": "fp16",
    "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "mxfp8": "fp8", "int8": "fp8",
    "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4",
}

GB = 1e9
TB = 1e12
PB = 1e15
GIB = 2.0**30


# ============================================================================================
# validation helpers (Korean message + English parameter name)


def _allowed(values) -> str:
    return ", ".join(str(v) for v in values)


def _check_positive(name: str, value: Any, *, allow_inf: bool = False, what: str = "") -> float:
    """``value`` as a float > 0 (finite unless ``allow_inf``); else ValueError naming ``name``."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")
    if not ok or not (v > 0) or (math.isinf(v) and not allow_inf):
        raise ValueError(
            f"{name}={value!r}: {what or name}은(는) 0보다 큰 유한한 수여야 합니다. "
            f"{name} 값을 양수로 바꾸세요."
        )
    return v


def _check_nonneg(name: str, value: Any, *, what: str = "") -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")
    if not ok or not (v >= 0) or math.isinf(v):
        raise ValueError(
            f"{name}={value!r}: {what or name}은(는) 0 이상의 유한한 수여야 합니다. {name} 값을 바꾸세요."
        )
    return v


def _check_count(name: str, value: Any, *, minimum: int = 0, what: str = "") -> int:
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not ok or int(value) < minimum:
        raise ValueError(
            f"{name}={value!r}: {what or name}은(는) {minimum} 이상의 정수여야 합니다. {name} 값을 바꾸세요."
        )
    return int(value)


def _check_tokens_array(name: str, value: Any, *, what: str = "") -> np.ndarray:
    """``value`` (a number or array-like of token counts) as a float array, all finite and >= 0."""
    msg = f"{name}={value!r}: {what or name}은(는) 0 이상의 토큰 수(정수 또는 그 배열)여야 합니다."
    if isinstance(value, (bool, str, bytes)):
        raise ValueError(msg)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(msg)
    return arr


def _check_scalar_tokens(name: str, value: Any, *, what: str = "", hint: str = "") -> float:
    """One token count (a number, or an array holding exactly one), >= 0 and finite."""
    arr = _check_tokens_array(name, value, what=what)
    if arr.size != 1:
        raise ValueError(
            f"{name}: {what or name}은(는) 수 하나여야 합니다 (배열 모양 {arr.shape}를 받았습니다). {hint}".rstrip()
        )
    return float(arr.item())


def _check_fraction(name: str, v: Any) -> float:
    """``v`` as a float in (0, 1] (a utilisation such as mfu / mbu); else ValueError naming ``name``."""
    ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    if not ok or not (0 < float(v) <= 1):
        raise ValueError(f"{name}={v!r}: {name}은(는) (0, 1] 범위의 비율이어야 합니다 (1 = 이론 최대 성능).")
    return float(v)


def _check_step_args(batch: Any, n_chips: Any, comm_ms: Any, mfu: Any, mbu: Any) -> tuple[int, int, float, float, float]:
    """The shared arguments of a decode step, checked: batch >= 1, n_chips >= 1 (integers),
    comm_ms >= 0, mfu and mbu in (0, 1]. Every decode entry point, scalar or array, calls this."""
    return (
        _check_count("batch", batch, minimum=1, what="배치 크기"),
        _check_count("n_chips", n_chips, minimum=1, what="칩 수"),
        _check_nonneg("comm_ms", comm_ms, what="단계당 통신 시간(ms)"),
        _check_fraction("mfu", mfu),
        _check_fraction("mbu", mbu),
    )


def _norm_dtype(dtype: str, *, field_name: str = "dtype") -> str:
    key = str(dtype).strip().lower().replace("-", "").replace("_", "")
    if key not in _DTYPE_ALIASES:
        raise ValueError(
            f"{field_name}={dtype!r}: 모르는 수 형식(number format)입니다. "
            f"쓸 수 있는 값: {_allowed(DTYPE_BYTES)}"
        )
    return _DTYPE_ALIASES[key]


def _key(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


# ============================================================================================
# hardware


@dataclass(frozen=True)
class Hardware:
    """One accelerator (or a rack treated as one device).

    Attributes:
        name: display name, e.g. ``"H100 SXM"``.
        memory_bytes: memory that holds weights and KV cache (HBM, or SRAM for Groq), bytes;
            ``None`` when unknown.
        bandwidth: memory bandwidth, bytes/s (> 0).
        flops: dense FLOP/s per number format, e.g. ``{"bf16": 989e12, "fp8": 1979e12}``.
        source: where the figures come from (facts-file row, spec sheet, or "measured").
        notes: assumptions taken where a figure is not published (empty when none).
        n_chips: chips behind ``bandwidth`` / ``flops`` (1 for one chip; 256 for the LPX rack,
            whose figures are rack totals).

    Raises:
        ValueError: bandwidth <= 0, a FLOP/s figure <= 0, an unknown format key, or
            memory_bytes <= 0.
    """

    name: str
    memory_bytes: float | None
    bandwidth: float
    flops: Mapping[str, float]
    source: str
    notes: str = ""
    n_chips: int = 1

    def __post_init__(self) -> None:
        _check_positive("bandwidth", self.bandwidth, what="메모리 대역폭(memory bandwidth, bytes/s)")
        if self.memory_bytes is not None:
            _check_positive("memory_bytes", self.memory_bytes, what="메모리 용량(bytes)")
        if not self.flops:
            raise ValueError("flops: 수 형식별 FLOP/s를 하나 이상 주세요 (예: {'bf16': 989e12}).")
        clean = {}
        for k, v in self.flops.items():
            clean[_norm_dtype(k, field_name="flops key")] = _check_positive(f"flops[{k!r}]", v, what="연산 성능(FLOP/s)")
        object.__setattr__(self, "flops", clean)
        _check_count("n_chips", self.n_chips, minimum=1, what="칩 수")

    def flops_for(self, dtype: str) -> float:
        """Dense FLOP/s for number format ``dtype``.

        Raises:
            ValueError: the chip has no published (or assumed) figure for ``dtype``; the message
                lists the formats it has.
        """
        d = _norm_dtype(dtype)
        if d not in self.flops:
            raise ValueError(
                f"dtype={dtype!r}: {self.name}에는 이 수 형식의 연산 성능 수치가 없습니다. "
                f"쓸 수 있는 값: {_allowed(self.flops)}"
            )
        return self.flops[d]

    def ridge_point(self, dtype: str = "bf16") -> float:
        """FLOP/s divided by bytes/s (FLOP/byte): see :func:`ridge_point`.

        Raises:
            ValueError: no FLOP/s figure for ``dtype`` (as :meth:`flops_for`).
        """
        return self.flops_for(dtype) / self.bandwidth


def h100() -> Hardware:
    """NVIDIA H100 SXM: 80 GB HBM3, 3.35 TB/s, dense 989 TFLOP/s BF16, 1,979 TFLOP/s FP8.

    Source: facts/hardware.md, table "Chips", row "H100 SXM" (nvidia.com/en-us/data-center/h100;
    dense = half the datasheet's sparse figure).
    """
    return Hardware(
        "H100 SXM", 80 * GB, 3.35 * TB, {"bf16": 989e12, "fp16": 989e12, "fp8": 1979e12},
        source="facts/hardware.md 'Chips' row H100 SXM (nvidia.com/en-us/data-center/h100), dense",
    )


def h200() -> Hardware:
    """NVIDIA H200: 141 GB HBM3e, 4.8 TB/s, dense 989 TFLOP/s BF16, 1,979 TFLOP/s FP8.

    Source: facts/hardware.md, table "Chips", row "H200" (nvidia.com/en-us/data-center/h200).
    """
    return Hardware(
        "H200", 141 * GB, 4.8 * TB, {"bf16": 989e12, "fp16": 989e12, "fp8": 1979e12},
        source="facts/hardware.md 'Chips' row H200 (nvidia.com/en-us/data-center/h200), dense",
    )


def b200() -> Hardware:
    """NVIDIA B200 (HGX): 180 GB HBM3e, 7.7 TB/s, dense 2,250 / 4,500 / 9,000 TFLOP/s BF16 / FP8 / FP4.

    Source: facts/hardware.md, table "Chips", row "B200 (HGX)" (NVIDIA HGX spec table;
    8 TB/s is often quoted, the HGX table says 7.7).
    """
    return Hardware(
        "B200", 180 * GB, 7.7 * TB, {"bf16": 2250e12, "fp16": 2250e12, "fp8": 4500e12, "fp4": 9000e12},
        source="facts/hardware.md 'Chips' row B200 (HGX) (NVIDIA HGX spec table), dense",
    )


def rubin() -> Hardware:
    """NVIDIA Rubin GPU: 288 GB HBM4, 22 TB/s; dense FLOP/s NOT PUBLISHED (assumed, see below).

    Source: facts/hardware.md, table "Chips", row "Rubin" (CES 2026, developer.nvidia.com):
    memory and bandwidth are published; dense BF16/FP8 are "n/p". The only compute figure is
    "50 PF NVFP4 inference", which may include NVIDIA's compression.

    ASSUMPTION (ours, not NVIDIA's): FP4 = 50 PFLOP/s taken at face value, FP8 = half of it
    (25 PFLOP/s), BF16 = a quarter (12.5 PFLOP/s), the 2x-per-halving pattern of H100/B200.
    Decode is memory-bound, so decode times do not depend on this assumption; prefill times do.
    """
    return Hardware(
        "Rubin", 288 * GB, 22 * TB, {"fp4": 50e15, "fp8": 25e15, "bf16": 12.5e15, "fp16": 12.5e15},
        source="facts/hardware.md 'Chips' row Rubin (CES 2026, developer.nvidia.com)",
        notes="가정: 조밀(dense) FLOP/s는 공개되지 않음. NVFP4 50 PF 주장을 그대로 FP4로, FP8 = 절반, BF16 = 4분의 1로 가정",
    )


def groq3_lpu() -> Hardware:
    """Groq 3 LPU (LP30), one chip: 500 MB on-chip SRAM, 150 TB/s, ~1.2 PFLOP/s FP8.

    Source: facts/hardware.md, table "Chips", row "Groq 3 LPU (LP30)" (developer.nvidia.com
    blog "Inside NVIDIA Groq 3 LPX"; the FP8 figure is Tom's Hardware's, a press number; Tom's
    Hardware gives 512 MB).

    ASSUMPTION: no BF16 figure is published; we take BF16 = half of FP8 (0.6 PFLOP/s).
    One chip holds only 500 MB: a 70B model needs the LPX rack (:func:`groq3_lpx`).
    """
    return Hardware(
        "Groq 3 LPU", 500e6, 150 * TB, {"fp8": 1.2e15, "bf16": 0.6e15, "fp16": 0.6e15},
        source="facts/hardware.md 'Chips' row Groq 3 LPU (LP30) (developer.nvidia.com blog; FP8 from Tom's Hardware)",
        notes="가정: BF16 수치는 공개되지 않아 FP8의 절반으로 가정. FP8 수치는 언론(Tom's Hardware) 수치",
    )


def groq3_lpx() -> Hardware:
    """Groq 3 LPX rack: 256 LPUs, 128 GB SRAM, 40 PB/s aggregate, 315 PFLOP/s FP8.

    Source: facts/hardware.md, paragraph "Racks" (Groq 3 LPX = 256 LPUs in 32 trays of 8,
    128 GB SRAM, 40 PB/s, 315 PF FP8, 2.5 TB/s chip-to-chip per LPU).

    The figures are rack TOTALS: a roofline over them assumes all 256 chips share every token's
    work perfectly, with no chip-to-chip time. That is an unreachable lower bound (see
    :func:`layer_split_decode_ms` and notebook 05). ASSUMPTION: BF16 = half of FP8.
    """
    return Hardware(
        "Groq 3 LPX (256 LPU)", 128 * GB, 40 * PB, {"fp8": 315e15, "bf16": 157.5e15, "fp16": 157.5e15},
        source="facts/hardware.md 'Racks' (Groq 3 LPX: 256 LPUs, 128 GB SRAM, 40 PB/s, 315 PF FP8)",
        notes="랙 전체 합계: 칩 사이 통신 시간을 무시한 하한. 가정: BF16 = FP8의 절반",
        n_chips=256,
    )


def trainium2() -> Hardware:
    """AWS Trainium2: 96 GiB, 2.9 TB/s, dense 667 TFLOP/s BF16, 1,299 TFLOP/s FP8.

    Source: facts/hardware.md, table "Chips", row "AWS Trainium2" (AWS Neuron docs, trainium2).
    """
    return Hardware(
        "Trainium2", 96 * GIB, 2.9 * TB, {"bf16": 667e12, "fp16": 667e12, "fp8": 1299e12},
        source="facts/hardware.md 'Chips' row AWS Trainium2 (AWS Neuron docs)",
    )


def trainium3() -> Hardware:
    """AWS Trainium3: 144 GiB HBM3e, 4.9 TB/s, dense 671 TFLOP/s BF16, 2,517 MXFP8 and MXFP4.

    Source: facts/hardware.md, table "Chips", row "AWS Trainium3" (AWS Neuron docs,
    trainium3; the NKI guide says 4.7 TB/s, we use the spec page's 4.9).
    """
    return Hardware(
        "Trainium3", 144 * GIB, 4.9 * TB, {"bf16": 671e12, "fp16": 671e12, "fp8": 2517e12, "fp4": 2517e12},
        source="facts/hardware.md 'Chips' row AWS Trainium3 (AWS Neuron docs)",
    )


#: Measurements of this computer, keyed on ``(copy_mib, matmul_n)`` (see :func:`measure_this_computer`).
_THIS_COMPUTER: dict[tuple[int, int], Hardware] = {}


def _physical_memory() -> float | None:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX (e.g. Windows)
        return None


def measure_this_computer(refresh: bool = False, *, copy_mib: int = 128, matmul_n: int = 1024) -> Hardware:
    """Measure this computer's memory bandwidth and matmul FLOP/s with numpy (~0.5 s, cached).

    * bandwidth: best of 5 ``np.copyto`` of a ``copy_mib`` MiB float32 array; a copy reads and
      writes every byte, so bandwidth = 2 x size / time (bytes/s). 128 MiB is far beyond typical
      CPU caches, so this is main-memory (DRAM) bandwidth, as STREAM "Copy" counts it (McCalpin,
      STREAM benchmark). A copy that fits in the CPU cache measures the cache instead.
    * FLOP/s: best of 3 float32 ``matmul_n x matmul_n`` matmuls, 2 n^3 FLOP each (numpy's BLAS,
      all cores). The same figure is used for fp32/bf16/fp16 (CPUs rarely run bf16 faster).

    Each ``(copy_mib, matmul_n)`` pair is measured once per session and cached;
    ``refresh=True`` measures that pair again. ``get_hardware("this-computer")`` is the
    measurement with the default sizes. Timings on a shared machine vary (~30% between runs:
    facts/tiny-model-feasibility.md): compare numbers from one run only.

    Args:
        refresh: measure again even if this pair of sizes is cached.
        copy_mib: size of the copied array, MiB (>= 1); memory used: twice that.
        matmul_n: side of the square float32 matrices, >= 1 (memory: 3 n^2 x 4 bytes).

    Returns:
        :class:`Hardware` named ``"this computer"``: ``bandwidth`` in bytes/s, ``flops`` in
        FLOP/s, ``memory_bytes`` = physical RAM when the OS reports it (else None). Source:
        "measured on this computer (numpy copy of N MiB; float32 n x n matmul)".

    Raises:
        ValueError: ``copy_mib`` or ``matmul_n`` not an integer >= 1 (the message names it).
    """
    copy_mib = _check_count("copy_mib", copy_mib, minimum=1, what="복사할 배열 크기(MiB)")
    matmul_n = _check_count("matmul_n", matmul_n, minimum=1, what="행렬 곱의 행렬 크기(n)")
    key = (copy_mib, matmul_n)
    if key in _THIS_COMPUTER and not refresh:
        return _THIS_COMPUTER[key]
    n = copy_mib * 1024 * 1024 // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    bandwidth = 2 * src.nbytes / best
    del src, dst
    rng = np.random.default_rng(0)
    a = rng.standard_normal((matmul_n, matmul_n), dtype=np.float32)
    b = rng.standard_normal((matmul_n, matmul_n), dtype=np.float32)
    a @ b  # warm-up (thread pool start)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    flops = 2.0 * matmul_n**3 / best
    hw = Hardware(
        "this computer", _physical_memory(), bandwidth, {"fp32": flops, "bf16": flops, "fp16": flops},
        source=f"measured on this computer (numpy copy of {copy_mib} MiB; float32 {matmul_n}x{matmul_n} matmul)",
        notes="실행할 때 측정한 값: 같은 실행 안에서만 비교하세요",
    )
    _THIS_COMPUTER[key] = hw
    return hw


_HARDWARE: dict[str, Callable[[], Hardware]] = {
    "H100": h100,
    "H200": h200,
    "B200": b200,
    "Rubin": rubin,
    "Groq3-LPU": groq3_lpu,
    "Groq3-LPX": groq3_lpx,
    "Trainium2": trainium2,
    "Trainium3": trainium3,
    "this-computer": measure_this_computer,
}
#: Names accepted by :func:`get_hardware` (case, spaces, hyphens and underscores are ignored).
HARDWARE_NAMES: tuple[str, ...] = tuple(_HARDWARE)
_HW_ALIASES = {
    "h100sxm": "H100", "b200hgx": "B200", "rubingpu": "Rubin", "vrrubin": "Rubin",
    "groq3": "Groq3-LPU", "lpu": "Groq3-LPU", "groq3lp30": "Groq3-LPU", "lp30": "Groq3-LPU",
    "lpx": "Groq3-LPX", "groq3lpxrack": "Groq3-LPX",
    "trn2": "Trainium2", "awstrainium2": "Trainium2", "trn3": "Trainium3", "awstrainium3": "Trainium3",
    "thiscomputer": "this-computer", "local": "this-computer", "cpu": "this-computer",
    "이컴퓨터": "this-computer",
}
_HW_ALIASES.update({_key(k): k for k in _HARDWARE})


def get_hardware(name: str | Hardware) -> Hardware:
    """A hardware profile by name.

    Args:
        name: one of ``"H100"``, ``"H200"``, ``"B200"``, ``"Rubin"``, ``"Groq3-LPU"``,
            ``"Groq3-LPX"``, ``"Trainium2"``, ``"Trainium3"``, ``"this-computer"`` (case,
            spaces, hyphens, underscores ignored; aliases such as ``"H100 SXM"``, ``"trn2"``,
            ``"LPX"`` work). A :class:`Hardware` is returned unchanged.

    Returns:
        :class:`Hardware`. ``"this-computer"`` is measured on first use (~0.5 s), then cached.

    Raises:
        ValueError: unknown name; the message lists the allowed names.
    """
    if isinstance(name, Hardware):
        return name
    canon = _HW_ALIASES.get(_key(name))
    if canon is None:
        raise ValueError(
            f"hardware={name!r}: 모르는 하드웨어 이름입니다. 쓸 수 있는 값: {_allowed(HARDWARE_NAMES)}"
        )
    return _HARDWARE[canon]()


@dataclass(frozen=True)
class Link:
    """A link that carries the KV cache between devices.

    Attributes:
        name: display name.
        bandwidth: bytes/s in one direction (> 0).
        latency_ms: fixed cost per transfer, ms (>= 0).
        source: where the figure comes from.
    """

    name: str
    bandwidth: float
    latency_ms: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        _check_positive("bandwidth", self.bandwidth, what="링크 대역폭(link bandwidth, bytes/s)")
        _check_nonneg("latency_ms", self.latency_ms, what="링크 지연(ms)")


_LINKS: dict[str, Link] = {
    "NVLink": Link("NVLink (H100, 한 방향)", 450 * GB, 0.0,
                   "facts/hardware.md 'back-of-envelope' KV transfer row: ~450 GB/s over NVLink"),
    "400G-NIC": Link("400 Gb/s NIC", 400e9 / 8, 0.0,
                     "facts/hardware.md 'back-of-envelope' KV transfer row: one 400 Gb/s NIC = 50 GB/s"),
    "NVLink6": Link("NVLink 6 (Rubin, GPU당)", 3.6 * TB, 0.0,
                    "facts/hardware.md 'Racks': NVLink 6 at 3.6 TB/s per GPU"),
    "LPX-C2C": Link("LPU chip-to-chip", 2.5 * TB, 0.0,
                    "facts/hardware.md 'Racks': 2.5 TB/s chip-to-chip per LPU"),
}
#: Names accepted by :func:`get_link`.
LINK_NAMES: tuple[str, ...] = tuple(_LINKS)


def get_link(name: str | Link, *, latency_ms: float | None = None) -> Link:
    """A KV-transfer link by name: ``"NVLink"`` (450 GB/s), ``"400G-NIC"`` (50 GB/s),
    ``"NVLink6"`` (3.6 TB/s), ``"LPX-C2C"`` (2.5 TB/s). Sources: facts/hardware.md
    (KV-transfer row of the back-of-envelope section; "Racks" paragraph).

    Latency is 0 unless you pass ``latency_ms`` (no sourced figure; choose your own).

    Raises:
        ValueError: unknown name (lists the allowed names) or negative latency.
    """
    if isinstance(name, Link):
        link = name
    else:
        table = {_key(k): v for k, v in _LINKS.items()}
        if _key(name) not in table:
            raise ValueError(f"link={name!r}: 모르는 링크 이름입니다. 쓸 수 있는 값: {_allowed(LINK_NAMES)}")
        link = table[_key(name)]
    if latency_ms is not None:
        link = replace(link, latency_ms=latency_ms)
    return link


# ============================================================================================
# models


@dataclass(frozen=True)
class ModelProfile:
    """The sizes of a decoder-only transformer that set its latency.

    Attributes:
        name: display name.
        n_params: parameter count P (embeddings included, tied ones counted once).
        n_layers: L. d_model: hidden size. n_q_heads / n_kv_heads: attention heads for queries
            and for keys/values (grouped-query attention when fewer KV heads). d_head: head size.
        vocab_size, intermediate_size: as in the HF config.
        dtype: number format of the weights (a key of :data:`DTYPE_BYTES`).
        kv_dtype: number format of the KV cache.
        source: the config it was built from.
    """

    name: str
    n_params: int
    n_layers: int
    d_model: int
    n_q_heads: int
    n_kv_heads: int
    d_head: int
    vocab_size: int
    intermediate_size: int
    dtype: str = "bf16"
    kv_dtype: str = "bf16"
    source: str = ""

    def __post_init__(self) -> None:
        for f in ("n_params", "n_layers", "d_model", "n_q_heads", "n_kv_heads", "d_head"):
            _check_count(f, getattr(self, f), minimum=1)
        object.__setattr__(self, "dtype", _norm_dtype(self.dtype))
        object.__setattr__(self, "kv_dtype", _norm_dtype(self.kv_dtype, field_name="kv_dtype"))

    @property
    def bytes_per_param(self) -> float:
        """Bytes per weight (2 for bf16, 1 for fp8, ...)."""
        return DTYPE_BYTES[self.dtype]

    @property
    def kv_bytes_per_value(self) -> float:
        """Bytes per stored key or value element."""
        return DTYPE_BYTES[self.kv_dtype]

    @property
    def weight_bytes(self) -> float:
        """All weights, bytes: n_params x bytes_per_param (e.g. 70.6 GB for Llama-3-70B FP8)."""
        return self.n_params * self.bytes_per_param

    @property
    def attn_width(self) -> int:
        """n_q_heads x d_head (= d_model for Llama; 8192 vs d_model 5120 for Qwen3-32B)."""
        return self.n_q_heads * self.d_head

    def with_dtype(self, dtype: str, kv_dtype: str | None = None) -> "ModelProfile":
        """The same model stored in another number format (KV format: see :func:`get_model`).

        Raises:
            ValueError: an unknown number format (the message lists the allowed ones).
        """
        d = _norm_dtype(dtype)
        return replace(self, dtype=d, kv_dtype=kv_dtype or _default_kv_dtype(d))


def _default_kv_dtype(dtype: str) -> str:
    """KV cache stays in 16 bits when weights are quantised (the facts file's FP8 example)."""
    return dtype if dtype in ("fp32", "bf16", "fp16") else "bf16"


def _count_params(c: Mapping[str, Any]) -> int:
    """Parameters of a Llama/Qwen-style decoder from its HF config (gated MLP with 3 matrices).

    embeddings V*d (+ V*d for an untied output head) + per layer [q: d*Hq*dh, k and v: d*Hkv*dh
    each, o: Hq*dh*d, MLP: 3*d*ff, two RMSNorms: 2d, (+ q/k norms 2*dh for qwen3), biases when
    attention_bias / mlp_bias] + final norm d. Equals ``sum(p.numel())`` of the transformers
    model (tested for the presets).
    """
    V, d, L = c["vocab_size"], c["hidden_size"], c["num_hidden_layers"]
    hq, hkv, dh, ff = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["intermediate_size"]
    attn = d * hq * dh + 2 * d * hkv * dh + hq * dh * d
    if c.get("attention_bias"):
        attn += hq * dh + 2 * hkv * dh + d
    mlp = 3 * d * ff + ((2 * ff + d) if c.get("mlp_bias") else 0)
    norms = 2 * d + (2 * dh if c.get("model_type") == "qwen3" else 0)
    emb = V * d * (1 if c.get("tie_word_embeddings", False) else 2)
    return int(emb + L * (attn + mlp + norms) + d)


def model_from_config(config: Mapping[str, Any] | Any, name: str | None = None, *, dtype: str = "bf16",
                      kv_dtype: str | None = None, source: str = "") -> ModelProfile:
    """Build a :class:`ModelProfile` from a Hugging Face config (``dict`` or ``PretrainedConfig``).

    Reads ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
    ``num_key_value_heads`` (default: = heads), ``head_dim`` (default hidden/heads),
    ``intermediate_size``, ``vocab_size``, ``tie_word_embeddings`` (default False),
    ``attention_bias``, ``mlp_bias``, ``model_type``; counts parameters with
    :func:`_count_params`.

    Args:
        dtype: weight format, one of ``fp32, bf16, fp16, fp8, fp4``.
        kv_dtype: KV-cache format; default = ``dtype`` for 16/32-bit weights, else ``bf16``.

    Raises:
        ValueError: a missing or non-positive field (named), or an unknown dtype.
    """
    c = dict(config.to_dict() if hasattr(config, "to_dict") else config)
    for f in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"):
        if f not in c or c[f] is None:
            raise ValueError(f"config에 {f} 항목이 없습니다: Llama 형식의 Hugging Face config.json을 주세요.")
    if c.get("num_key_value_heads") is None:
        c["num_key_value_heads"] = c["num_attention_heads"]
    if c.get("head_dim") is None:
        c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    d = _norm_dtype(dtype)
    return ModelProfile(
        name=name or c.get("_name_or_path") or c.get("model_type", "model"),
        n_params=_count_params(c),
        n_layers=int(c["num_hidden_layers"]),
        d_model=int(c["hidden_size"]),
        n_q_heads=int(c["num_attention_heads"]),
        n_kv_heads=int(c["num_key_value_heads"]),
        d_head=int(c["head_dim"]),
        vocab_size=int(c["vocab_size"]),
        intermediate_size=int(c["intermediate_size"]),
        dtype=d,
        kv_dtype=_norm_dtype(kv_dtype, field_name="kv_dtype") if kv_dtype else _default_kv_dtype(d),
        source=source,
    )


def llama_3_8b_config() -> dict:
    """Published config of Meta-Llama-3-8B (huggingface.co/meta-llama/Meta-Llama-3-8B, config.json).

    32 layers, hidden 4096, MLP 14336, 32 query heads, 8 KV heads, head 128, vocab 128256,
    untied output head: 8.03 B parameters.
    """
    return {"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "tie_word_embeddings": False}


def llama_3_70b_config() -> dict:
    """Published config of Meta-Llama-3-70B (huggingface.co/meta-llama/Meta-Llama-3-70B, config.json).

    80 layers, hidden 8192, MLP 28672, 64 query heads, 8 KV heads, head 128, vocab 128256, untied:
    70.55 B parameters (facts/hardware.md worked example: "P ~ 70.6B").
    """
    return {"model_type": "llama", "vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672,
            "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
            "tie_word_embeddings": False}


def qwen3_32b_config() -> dict:
    """Published config of Qwen3-32B (huggingface.co/Qwen/Qwen3-32B, config.json).

    64 layers, hidden 5120, MLP 25600, 64 query heads, 8 KV heads, head 128, vocab 151936,
    untied, q/k RMSNorm: 32.8 B parameters (the model card's figure).
    """
    return {"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 25600,
            "num_hidden_layers": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
            "tie_word_embeddings": False}


def qwen3_0_6b_config() -> dict:
    """Published config of Qwen3-0.6B (huggingface.co/Qwen/Qwen3-0.6B, config.json).

    28 layers, hidden 1024, MLP 3072, 16 query heads, 8 KV heads, head 128, vocab 151936,
    tied embeddings: 0.6 B parameters (the model card's figure).
    """
    return {"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072,
            "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
            "tie_word_embeddings": True}


_ASSETS = Path(__file__).resolve().parent / "assets" / "models"


def _bundled_config(which: str) -> dict:
    """The bundled model's config.json, read now (the weights may be retrained and replaced)."""
    path = _ASSETS / which / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"번들 모델 설정 파일이 없습니다: {path} (decodelab을 다시 설치하세요)")
    return json.loads(path.read_text(encoding="utf-8"))


_MODELS: dict[str, tuple[Callable[[], dict], str]] = {
    "Llama-3-8B": (llama_3_8b_config, "huggingface.co/meta-llama/Meta-Llama-3-8B config.json"),
    "Llama-3-70B": (llama_3_70b_config, "huggingface.co/meta-llama/Meta-Llama-3-70B config.json"),
    "Qwen3-32B": (qwen3_32b_config, "huggingface.co/Qwen/Qwen3-32B config.json"),
    "Qwen3-0.6B": (qwen3_0_6b_config, "huggingface.co/Qwen/Qwen3-0.6B config.json"),
    "bundled-target": (lambda: _bundled_config("target"), "decodelab/assets/models/target/config.json"),
    "bundled-draft": (lambda: _bundled_config("draft"), "decodelab/assets/models/draft/config.json"),
}
#: Names accepted by :func:`get_model`.
MODEL_NAMES: tuple[str, ...] = tuple(_MODELS)
_MODEL_ALIASES = {_key(k): k for k in _MODELS}
_MODEL_ALIASES.update({"llama38b": "Llama-3-8B", "metallama38b": "Llama-3-8B", "llama370b": "Llama-3-70B",
                       "metallama370b": "Llama-3-70B", "target": "bundled-target", "draft": "bundled-draft",
                       "qwen306b": "Qwen3-0.6B", "qwen332b": "Qwen3-32B"})


def get_model(name: str | ModelProfile, dtype: str = "bf16", *, kv_dtype: str | None = None) -> ModelProfile:
    """A model profile by name, stored in number format ``dtype``.

    Args:
        name: ``"Llama-3-8B"``, ``"Llama-3-70B"``, ``"Qwen3-32B"``, ``"Qwen3-0.6B"``,
            ``"bundled-target"``, ``"bundled-draft"`` (case and punctuation ignored). The bundled
            pair's ``config.json`` is read at call time. A :class:`ModelProfile` is re-typed to
            ``dtype``.
        dtype: weights' number format: ``fp32``, ``bf16``, ``fp16``, ``fp8``, ``fp4``. The course's
            CPU runs the bundled models in fp32.
        kv_dtype: KV cache format; default ``dtype`` for 16/32-bit weights, ``bf16`` for fp8/fp4
            weights (as in facts/hardware.md's worked example: FP8 weights, BF16 KV).

    Returns:
        :class:`ModelProfile` (sources: the published config.json named in ``.source``).

    Raises:
        ValueError: unknown name or dtype (the message lists the allowed values).
    """
    if isinstance(name, ModelProfile):
        return name.with_dtype(dtype, kv_dtype)
    canon = _MODEL_ALIASES.get(_key(name))
    if canon is None:
        raise ValueError(f"model={name!r}: 모르는 모델 이름입니다. 쓸 수 있는 값: {_allowed(MODEL_NAMES)}")
    make_config, source = _MODELS[canon]
    return model_from_config(make_config(), canon, dtype=dtype, kv_dtype=kv_dtype, source=source)


# ============================================================================================
# the roofline


def kv_bytes_per_token(model: ModelProfile) -> float:
    """KV-cache bytes one token adds: 2 (K and V) x n_layers x n_kv_heads x d_head x bytes.

    Llama-3-70B in BF16: 2 x 80 x 8 x 128 x 2 = 327,680 bytes = 0.33 MB (2.68 GB at 8k tokens).
    Source: facts/hardware.md "back-of-envelope" (kipp.ly, Transformer Inference Arithmetic).

    Args:
        model: a :class:`ModelProfile` (its ``kv_dtype`` sets the bytes per value).

    Returns:
        bytes per token (float). Raises nothing: the profile was checked when it was built.
    """
    return 2.0 * model.n_layers * model.n_kv_heads * model.d_head * model.kv_bytes_per_value


def prefill_flops(model: ModelProfile, prompt_tokens, past_tokens=0):
    """FLOPs of prefilling ``prompt_tokens`` new tokens after ``past_tokens`` cached ones.

    2 P S (every weight does a multiply-add per token) + 2 L S^2 a (causal attention among the new
    tokens: QK^T and AV, half the square) + 4 L S S_past a (new tokens attending to cached ones),
    with a = n_q_heads x d_head. Llama-3-70B, 8k tokens: 1.24e15 FLOP (~1.25 PFLOP).
    Source: facts/hardware.md "Prefill FLOPs ~ 2*P*S + 2*L*S^2*d_model" (with a in place of
    d_model, equal for Llama); the cached-prefix term is the same count for S x S_past pairs.

    Args:
        model: a :class:`ModelProfile`.
        prompt_tokens: S, new tokens (>= 0): a number or a numpy array of any shape.
        past_tokens: S_past, tokens already in the KV cache (>= 0): a number or an array that
            broadcasts against ``prompt_tokens``. Default 0.

    Returns:
        FLOP: a float for scalar inputs, else an array of the broadcast shape.

    Raises:
        ValueError: a token count that is negative, NaN/inf or not a number (the message names
            ``prompt_tokens`` or ``past_tokens``).
    """
    s = _check_tokens_array("prompt_tokens", prompt_tokens, what="프롬프트 토큰 수")
    p = _check_tokens_array("past_tokens", past_tokens, what="이미 캐시에 있는 토큰 수")
    a, L = model.attn_width, model.n_layers
    out = 2.0 * model.n_params * s + 2.0 * L * s**2 * a + 4.0 * L * s * p * a
    return float(out) if out.ndim == 0 else out


def _roofline_ms(flops, nbytes, hw: Hardware, dtype: str, n_chips: int, mfu: float, mbu: float):
    compute = flops / (n_chips * hw.flops_for(dtype) * mfu) * 1e3
    memory = nbytes / (n_chips * hw.bandwidth * mbu) * 1e3
    return compute, memory


def prefill_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, *, past_tokens=0,
               n_chips: int = 1, mfu: float = 1.0, mbu: float = 1.0):
    """Prefill time, ms: ``max(FLOPs / (N F mfu), bytes / (N BW mbu))``.

    FLOPs from :func:`prefill_flops`; bytes = all weights read once + the new KV written. Long
    prompts are compute-bound: Llama-3-70B FP8, 8k tokens, one H100: 1.24 PFLOP / 1,979 TFLOP/s
    = 0.63 s at mfu=1, 1.26 s at mfu=0.5 (facts/hardware.md worked example). A one-token prompt
    costs about one decode step (memory-bound).

    Args:
        model, hardware: profiles (a hardware name works too).
        prompt_tokens: S (number or numpy array of token counts, >= 0).
        past_tokens: tokens already in the KV cache (prefix caching), default 0.
        n_chips: N chips sharing the work perfectly (tensor parallel, no communication).
        mfu / mbu: fraction of peak FLOP/s / bandwidth achieved, in (0, 1]. Default 1 = ideal.

    Returns:
        ms (float, or array if ``prompt_tokens`` is an array).

    Raises:
        ValueError: negative tokens, n_chips < 1, mfu or mbu outside (0, 1], or a dtype the
            hardware has no figure for.
    """
    hw = get_hardware(hardware)
    n_chips = _check_count("n_chips", n_chips, minimum=1, what="칩 수")
    mfu, mbu = _check_fraction("mfu", mfu), _check_fraction("mbu", mbu)
    s = _check_tokens_array("prompt_tokens", prompt_tokens, what="프롬프트 토큰 수")
    flops = prefill_flops(model, s, past_tokens)
    nbytes = model.weight_bytes + s * kv_bytes_per_token(model)
    compute, memory = _roofline_ms(flops, nbytes, hw, model.dtype, n_chips, mfu, mbu)
    out = np.maximum(compute, memory)
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class StepEstimate:
    """One decode step on the roofline.

    Attributes:
        ms: the step time, ``max(memory_ms, compute_ms) + comm_ms``.
        memory_ms: bytes / (N x bandwidth x mbu). compute_ms: FLOPs / (N x FLOP/s x mfu).
        comm_ms: communication added per step (given, not modelled).
        bytes: weights + batch x context x KV bytes per token. flops: 2 P B + 4 B L S a.
        bound: ``"memory"`` or ``"compute"`` (the larger of the two).
        fits: whether weights + KV fit in N x memory (None when memory is unknown).
    """

    ms: float
    memory_ms: float
    compute_ms: float
    comm_ms: float
    bytes: float
    flops: float
    bound: str
    fits: bool | None


def decode_step(model: ModelProfile, hardware: Hardware | str, context_tokens: int, batch: int = 1, *,
                n_chips: int = 1, comm_ms: float = 0.0, mfu: float = 1.0, mbu: float = 1.0) -> StepEstimate:
    """One decode step for ``batch`` sequences with ``context_tokens`` each already in the KV cache.

    t = max((W + B S kv) / (N BW), (2 P B + 4 B L S a) / (N F)) + t_comm
    (facts/hardware.md "back-of-envelope", kipp.ly; the attention term 4 B L S a, with
    a = n_q_heads x d_head, is added to the facts file's 2 P B and is small at batch 1). Every step
    reads ALL weights W (one pass through the model per token, whatever the batch) and every
    sequence's KV cache.

    Args:
        model: a :class:`ModelProfile`; hardware: a :class:`Hardware` or a preset name.
        context_tokens: S, tokens already in each sequence's KV cache: ONE number >= 0 (for many
            contexts at once use :func:`decode_step_ms` with an array).
        batch: B sequences decoded together, integer >= 1.
        n_chips: N chips sharing the work perfectly (tensor parallel), integer >= 1.
        comm_ms: communication time added per step, ms, >= 0 (not modelled: pass your own).
        mfu / mbu: fraction of peak FLOP/s / bandwidth achieved, in (0, 1]; 1 = ideal.

    Returns:
        :class:`StepEstimate` (ms and its parts; bytes, FLOP).

    Raises:
        ValueError: context_tokens negative, not finite or not one number; batch or n_chips not an
            integer >= 1; comm_ms < 0; mfu/mbu outside (0, 1]; unknown hardware name; a weight
            format the hardware has no FLOP/s figure for. The message names the parameter.
    """
    hw = get_hardware(hardware)
    s = _check_scalar_tokens("context_tokens", context_tokens, what="문맥(KV 캐시) 토큰 수",
                             hint="여러 문맥 길이는 decode_step_ms에 배열로 주세요.")
    b, n, comm, mfu, mbu = _check_step_args(batch, n_chips, comm_ms, mfu, mbu)
    nbytes = model.weight_bytes + b * s * kv_bytes_per_token(model)
    flops = 2.0 * model.n_params * b + 4.0 * b * model.n_layers * s * model.attn_width
    compute, memory = _roofline_ms(flops, nbytes, hw, model.dtype, n, mfu, mbu)
    fits = None if hw.memory_bytes is None else bool(nbytes <= n * hw.memory_bytes)
    return StepEstimate(
        ms=max(compute, memory) + comm, memory_ms=memory, compute_ms=compute, comm_ms=comm,
        bytes=nbytes, flops=flops, bound="memory" if memory >= compute else "compute", fits=fits,
    )


def decode_step_ms(model: ModelProfile, hardware: Hardware | str, context_tokens, batch: int = 1, *,
                   n_chips: int = 1, comm_ms: float = 0.0, mfu: float = 1.0, mbu: float = 1.0):
    """Time of one decode step, ms (see :func:`decode_step` for the formula).

    Worked examples (facts/hardware.md): Llama-3-70B FP8, one H100, batch 1, 8k context:
    (70.6 + 2.7) GB / 3.35 TB/s = 21.9 ms (<= 46 tokens/s); 8 x H100 BF16: 143.7 GB / 26.8 TB/s
    = 5.4 ms (+ ~160 all-reduces per token, pass them as ``comm_ms``); Rubin FP8, weights
    only: 3.2 ms.

    Args:
        context_tokens: tokens in the KV cache: a number, or a numpy array of any shape (one
            step time per entry). Other arguments: as :func:`decode_step`.

    Returns:
        ms: a float for a number, an array of the same shape for an array.

    Raises:
        ValueError: as :func:`decode_step`, for numbers and arrays alike (any negative or
            non-finite entry, batch/n_chips < 1 or not integers, comm_ms < 0, mfu/mbu outside (0, 1]).
    """
    hw = get_hardware(hardware)
    arr = _check_tokens_array("context_tokens", context_tokens, what="문맥(KV 캐시) 토큰 수")
    if arr.ndim == 0:
        return decode_step(model, hw, float(arr), batch, n_chips=n_chips, comm_ms=comm_ms,
                           mfu=mfu, mbu=mbu).ms
    return _decode_ms_vec(model, hw, arr, batch, n_chips, comm_ms, mfu, mbu)


def _decode_ms_vec(model, hw, s, batch=1, n_chips=1, comm_ms=0.0, mfu=1.0, mbu=1.0) -> np.ndarray:
    """``decode_step(...).ms`` for an array of contexts ``s`` (ms, same shape). Validates every
    argument exactly as :func:`decode_step` does, so array callers (decode_step_ms, tpot_ms,
    e2e_ms, agent_loop) cannot skip a check."""
    s = _check_tokens_array("context_tokens", s, what="문맥(KV 캐시) 토큰 수")
    b, n, comm, mfu, mbu = _check_step_args(batch, n_chips, comm_ms, mfu, mbu)
    nbytes = model.weight_bytes + b * s * kv_bytes_per_token(model)
    flops = 2.0 * model.n_params * b + 4.0 * b * model.n_layers * s * model.attn_width
    compute, memory = _roofline_ms(flops, nbytes, hw, model.dtype, n, mfu, mbu)
    return np.maximum(compute, memory) + comm


def ttft_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, *, queue_ms: float = 0.0,
            transfer_ms: float = 0.0, **kwargs):
    """Time to first token, ms: queue + prefill (+ KV transfer when disaggregated).

    Source: facts/hardware.md "TTFT ~ queue + prefill (+ KV transfer when disaggregated)".

    Args:
        model, hardware: profiles (a hardware name works too).
        prompt_tokens: S, a number or numpy array of token counts (>= 0).
        queue_ms: waiting time before the prefill starts, ms (>= 0; no sourced figure, default 0).
        transfer_ms: KV transfer time, ms (>= 0), e.g. from :func:`kv_transfer_ms`.
        **kwargs: passed to :func:`prefill_ms`: ``past_tokens``, ``n_chips``, ``mfu``, ``mbu``.

    Returns:
        ms: a float, or an array shaped like ``prompt_tokens``.

    Raises:
        ValueError: queue_ms or transfer_ms negative, or any error of :func:`prefill_ms`
            (negative tokens, n_chips < 1, mfu/mbu outside (0, 1], unknown hardware or dtype).
        TypeError: an unknown keyword argument.
    """
    q = _check_nonneg("queue_ms", queue_ms, what="대기 시간(ms)")
    t = _check_nonneg("transfer_ms", transfer_ms, what="KV 전송 시간(ms)")
    return q + prefill_ms(model, hardware, prompt_tokens, **kwargs) + t


def tpot_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens: int, output_tokens: int,
            batch: int = 1, **kwargs) -> float:
    """Time per output token, ms: the mean decode step while the context grows from
    ``prompt_tokens + 1`` to ``prompt_tokens + output_tokens - 1`` cached tokens.

    Matches vLLM's definition TPOT = (E2E - TTFT) / (n_output - 1) (facts/hardware.md "Serving
    metrics"). For ``output_tokens == 1`` returns the step time at ``prompt_tokens`` (no decode
    step happens, but a rate is still useful).

    Args:
        model, hardware: profiles (a hardware name works too).
        prompt_tokens: prompt length, integer >= 0. output_tokens: n, integer >= 1.
        batch: sequences decoded together, integer >= 1.
        **kwargs: passed to :func:`decode_step_ms`: ``n_chips``, ``comm_ms``, ``mfu``, ``mbu``.

    Returns:
        ms per output token (float).

    Raises:
        ValueError: prompt_tokens < 0 or output_tokens < 1 (or not integers), and every error
            of :func:`decode_step` (batch/n_chips < 1, comm_ms < 0, mfu/mbu outside (0, 1], ...).
        TypeError: an unknown keyword argument.
    """
    n = _check_count("output_tokens", output_tokens, minimum=1, what="출력 토큰 수")
    p = _check_count("prompt_tokens", prompt_tokens, minimum=0, what="프롬프트 토큰 수")
    if n == 1:
        return decode_step_ms(model, hardware, p, batch, **kwargs)
    ctx = p + np.arange(1, n, dtype=float)
    return float(np.mean(decode_step_ms(model, hardware, ctx, batch, **kwargs)))


def e2e_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens: int, output_tokens: int,
           batch: int = 1, **kwargs) -> float:
    """End-to-end latency, ms: E2E = TTFT + (n - 1) x TPOT (facts/hardware.md "Serving metrics").

    The prefill pass produces the first output token; each later token costs one decode step.

    Args:
        model, hardware: profiles (a hardware name works too).
        prompt_tokens: integer >= 0. output_tokens: n, integer >= 1. batch: integer >= 1.
        **kwargs: ``n_chips``, ``mfu``, ``mbu`` go to both phases, ``comm_ms`` to decode only.

    Returns:
        ms (float).

    Raises:
        ValueError: the errors of :func:`ttft_ms` and :func:`tpot_ms` (each names its parameter).
        TypeError: an unknown keyword argument.
    """
    pre_kw = {k: v for k, v in kwargs.items() if k in ("n_chips", "mfu", "mbu")}
    n = _check_count("output_tokens", output_tokens, minimum=1, what="출력 토큰 수")
    return ttft_ms(model, hardware, prompt_tokens, **pre_kw) + (n - 1) * tpot_ms(
        model, hardware, prompt_tokens, n, batch, **kwargs)


def arithmetic_intensity(model: ModelProfile, context_tokens: int = 0, batch: int = 1) -> float:
    """FLOP per byte of one decode step: (2 P B + 4 B L S a) / (W + B S kv).

    At batch 1 and short context this is ~2 / bytes_per_param (1 FLOP/byte for BF16): far below
    every accelerator's ridge point, so decode is memory-bound. See :func:`weight_matmul_intensity`.
    Source: Williams et al., "Roofline", CACM 2009; facts/hardware.md "back-of-envelope".

    Args:
        model: a :class:`ModelProfile`. context_tokens: one number >= 0. batch: integer >= 1.

    Returns:
        FLOP/byte (float).

    Raises:
        ValueError: context_tokens < 0 or not one number, batch < 1.
    """
    e = decode_step(model, _UNIT_HW, context_tokens, batch)
    return e.flops / e.bytes


# a dummy device used only to reuse decode_step's bytes/flops arithmetic
_UNIT_HW = Hardware("unit", None, 1.0, {k: 1.0 for k in DTYPE_BYTES}, source="(internal)")


def weight_matmul_intensity(batch: int, bytes_per_param: float = 2.0) -> float:
    """Intensity of decode's weight matmuls: 2 B / bytes_per_param FLOP/byte.

    Each weight is read once and used for B multiply-adds (2 B FLOP). Decode stays memory-bound
    until B reaches about ridge x bytes_per_param / 2 (facts/hardware.md "back-of-envelope").

    Args:
        batch: B, integer >= 1. bytes_per_param: bytes per weight (> 0), 2 for BF16.

    Returns:
        FLOP/byte (float).

    Raises:
        ValueError: batch < 1 or bytes_per_param <= 0.
    """
    b = _check_count("batch", batch, minimum=1, what="배치 크기")
    return 2.0 * b / _check_positive("bytes_per_param", bytes_per_param, what="파라미터당 바이트")


def ridge_point(hardware: Hardware | str, dtype: str = "bf16") -> float:
    """Ridge point, FLOP/byte: peak FLOP/s / bandwidth. Below it a kernel is memory-bound.

    H100 BF16: 989e12 / 3.35e12 = 295; H200: 206 (facts/hardware.md "back-of-envelope").

    Args:
        hardware: a :class:`Hardware` or a preset name. dtype: number format (default bf16).

    Returns:
        FLOP/byte (float).

    Raises:
        ValueError: unknown hardware name, or a format the hardware has no FLOP/s figure for.
    """
    return get_hardware(hardware).ridge_point(dtype)


def fits_in_memory(model: ModelProfile, hardware: Hardware | str, context_tokens: int = 0, batch: int = 1,
                   n_chips: int = 1) -> bool | None:
    """Whether weights + batch x context x KV bytes fit in n_chips x memory (None if unknown).

    Memory figures: the hardware profile (facts/hardware.md rows, or this computer's RAM).

    Returns:
        True / False, or None when the hardware's memory is unknown.

    Raises:
        ValueError: as :func:`decode_step` (context_tokens < 0, batch or n_chips < 1).
    """
    return decode_step(model, hardware, context_tokens, batch, n_chips=n_chips).fits


# ============================================================================================
# disaggregated serving and the layer split


def kv_transfer_ms(model: ModelProfile, tokens, link: Link | str) -> float:
    """Time to send ``tokens`` tokens' KV cache over ``link``, ms: S kv / BW + latency.

    Llama-3-70B BF16 KV, 8k tokens (2.68 GB): 6.0 ms over NVLink (450 GB/s), 53.7 ms over one
    400 Gb/s NIC (facts/hardware.md "KV transfer (disaggregated)"). Real systems overlap it layer
    by layer with the prefill, hiding part of it.

    Args:
        model: a :class:`ModelProfile` (sets the KV bytes per token, :func:`kv_bytes_per_token`).
        tokens: tokens whose KV is sent: a number or a numpy array (>= 0).
        link: a :class:`Link` or a name from :data:`LINK_NAMES`.

    Returns:
        ms: a float, or an array shaped like ``tokens`` (the link latency is added to each entry).

    Raises:
        ValueError: a negative or non-finite token count (names ``tokens``), or an unknown link
            name (lists the allowed names).
    """
    lk = get_link(link)
    s = _check_tokens_array("tokens", tokens, what="전송할 토큰 수")
    out = s * kv_bytes_per_token(model) / lk.bandwidth * 1e3 + lk.latency_ms
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class DisaggregatedResult:
    """Prefill on one device, decode on another (all ms).

    Attributes:
        prefill_ms, transfer_ms, tpot_ms: the parts; ttft_ms = prefill + transfer;
        e2e_ms = ttft + (n - 1) tpot; colocated_e2e_ms: the same request with both phases on
        the prefill device (no transfer), for comparison.
    """

    prefill_ms: float
    transfer_ms: float
    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    colocated_e2e_ms: float


def disaggregated(model: ModelProfile, prefill_hardware: Hardware | str, decode_hardware: Hardware | str,
                  link: Link | str, prompt_tokens: int, output_tokens: int, *, mfu: float = 1.0,
                  prefill_chips: int = 1, decode_chips: int = 1) -> DisaggregatedResult:
    """Disaggregated serving (DistServe, OSDI'24; Splitwise, ISCA'24): prefill on one device,
    decode on another, the prompt's KV cache sent between them.

    TTFT = prefill + KV transfer; TPOT from the decode device (facts/hardware.md). The point is
    not a faster single request (the transfer makes it slower) but that each phase can be sized
    and scheduled for its own limit: compute for prefill, bandwidth for decode.

    Args:
        model: a :class:`ModelProfile`.
        prefill_hardware, decode_hardware: :class:`Hardware` or preset names.
        link: the KV link (:class:`Link` or a name, see :func:`get_link`).
        prompt_tokens: integer >= 0, prefilled then sent. output_tokens: n, integer >= 1.
        mfu: prefill efficiency in (0, 1] (decode uses the ideal roofline, mbu = 1).
        prefill_chips: chips sharing the prefill (and the colocated comparison), integer >= 1.
        decode_chips: chips sharing each decode step, integer >= 1.

    Returns:
        :class:`DisaggregatedResult` (all ms).

    Raises:
        ValueError: output_tokens < 1, prompt_tokens < 0, prefill_chips or decode_chips not an
            integer >= 1, mfu outside (0, 1], unknown hardware or link names (each names the
            parameter).
    """
    n = _check_count("output_tokens", output_tokens, minimum=1, what="출력 토큰 수")
    _check_count("prefill_chips", prefill_chips, minimum=1, what="프리필 칩 수")
    _check_count("decode_chips", decode_chips, minimum=1, what="디코드 칩 수")
    _check_fraction("mfu", mfu)
    pre = prefill_ms(model, prefill_hardware, prompt_tokens, n_chips=prefill_chips, mfu=mfu)
    xfer = kv_transfer_ms(model, prompt_tokens, link)
    tpot = tpot_ms(model, decode_hardware, prompt_tokens, n, n_chips=decode_chips)
    colo_tpot = tpot_ms(model, prefill_hardware, prompt_tokens, n, n_chips=prefill_chips)
    return DisaggregatedResult(
        prefill_ms=pre, transfer_ms=xfer, ttft_ms=pre + xfer, tpot_ms=tpot,
        e2e_ms=pre + xfer + (n - 1) * tpot, colocated_e2e_ms=pre + (n - 1) * colo_tpot,
    )


def layer_split_decode_ms(model: ModelProfile, gpu: Hardware | str = "Rubin", lpu: Hardware | str = "Groq3-LPX",
                          context_tokens: int = 8192, batch: int = 1, *, hop_ms: float = 0.0,
                          lpu_parallel: str = "pipeline") -> dict[str, float]:
    """One decode step split by layer type, as NVIDIA described Rubin + Groq 3 LPX.

    The GPU keeps the KV cache and runs decode attention (reads B x S x kv bytes); the LPUs run
    the weight-heavy layers (read all W weights). For one token the two alternate layer by layer,
    so their times add, plus ``2 L hop_ms`` for activations crossing between them twice per layer.
    Source: facts/hardware.md "The NVIDIA + Groq 3 LPX configuration" (Ian Buck: decode split
    between LPU and GPU layer by layer; "a fair teaching simplification").

    How the LPUs share the weights (``lpu_parallel``):

    * ``"pipeline"`` (default): each chip holds whole layers, a token visits the chips one after
      another, so the weight time is W / (ONE chip's bandwidth) however many chips there are
      (for a rack profile, one chip's bandwidth = rack bandwidth / n_chips). Llama-3-70B FP8 on
      the LPX rack: 70.6 GB / (40 PB/s / 256) = 0.45 ms; on the one-chip LPU profile (150 TB/s)
      0.47 ms.
    * ``"ideal"``: every chip works on every layer at once (perfect tensor parallelism, zero
      communication): W / rack bandwidth. An unreachable lower bound (0.002 ms for the same case).

    ``hop_ms`` has no published figure: 0 by default, choose your own.

    Returns:
        dict with ``gpu_attention_ms``, ``lpu_weights_ms``, ``hops_ms``, ``total_ms`` and
        ``lpu_fits`` (whether the weights fit in the LPU profile's memory; None if unknown).

    Raises:
        ValueError: negative context or hop_ms, batch < 1, unknown ``lpu_parallel``
            (allowed: pipeline, ideal).
    """
    g, l = get_hardware(gpu), get_hardware(lpu)
    s = _check_scalar_tokens("context_tokens", context_tokens, what="문맥 토큰 수")
    b = _check_count("batch", batch, minimum=1, what="배치 크기")
    hop = _check_nonneg("hop_ms", hop_ms, what="칩 사이 한 번 건너는 시간(ms)")
    if lpu_parallel not in ("pipeline", "ideal"):
        raise ValueError(f"lpu_parallel={lpu_parallel!r}: 쓸 수 있는 값: pipeline, ideal")
    kv = b * s * kv_bytes_per_token(model)
    attn_flops = 4.0 * b * model.n_layers * s * model.attn_width
    gpu_ms = max(kv / g.bandwidth, attn_flops / g.flops_for(model.kv_dtype)) * 1e3
    share = l.n_chips if lpu_parallel == "pipeline" else 1
    lpu_ms = max(model.weight_bytes / (l.bandwidth / share),
                 2.0 * model.n_params * b / (l.flops_for(model.dtype) / share)) * 1e3
    hops = 2 * model.n_layers * hop
    fits = None if l.memory_bytes is None else bool(model.weight_bytes <= l.memory_bytes)
    return {"gpu_attention_ms": gpu_ms, "lpu_weights_ms": lpu_ms, "hops_ms": hops,
            "total_ms": gpu_ms + lpu_ms + hops, "lpu_fits": fits}


# ============================================================================================
# speculative decoding and the agent loop


@dataclass(frozen=True)
class SpeculativeConfig:
    """Speculative decoding settings for the latency model.

    Attributes:
        alpha: acceptance rate alpha in [0, 1] (facts/speculative.md: 1 - TV distance(p, q)).
        gamma: draft tokens per round (num_speculative_tokens), >= 1.
        c: draft step time / target step time, >= 0 (Leviathan et al.: ~0.02 for T5-small vs XXL).
    """

    alpha: float = 0.75
    gamma: int = 5
    c: float = 0.02

    def __post_init__(self) -> None:
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, (int, float, np.floating)) or not (0 <= a <= 1):
            raise ValueError(f"alpha={a!r}: 수락률(acceptance rate, alpha)은 0 이상 1 이하여야 합니다.")
        _check_count("gamma", self.gamma, minimum=1, what="초안 토큰 수(gamma)")
        _check_nonneg("c", self.c, what="초안/대상 단계 시간 비(c)")

    @property
    def speedup(self) -> float:
        """See :func:`speculative_speedup`."""
        return speculative_speedup(self.alpha, self.gamma, self.c)


def expected_tokens_per_call(alpha: float, gamma: int) -> float:
    """Expected tokens one target forward pass produces with speculative decoding (Leviathan
    et al. 2023, Eq. 1; facts/speculative.md):

        (1 - alpha^(gamma+1)) / (1 - alpha);  at alpha = 1: gamma + 1.

    It assumes each draft token is accepted independently with probability ``alpha``. It is the
    *mean acceptance length* vLLM reports (1 + accepted / drafts). E.g. alpha 0.75, gamma 7: 3.60.

    Args:
        alpha: acceptance rate in [0, 1] (1 - total variation distance(p, q)).
        gamma: draft tokens per round (num_speculative_tokens), an int >= 1.

    Raises:
        ValueError: alpha outside [0, 1], gamma not an int >= 1.
    """
    SpeculativeConfig(alpha, gamma, 0.0)  # validates alpha and gamma
    if alpha >= 1.0:
        return gamma + 1.0
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def speculative_speedup(alpha: float, gamma: int, c: float, *, verify_cost: float = 1.0) -> float:
    """Expected wall-time speed-up of speculative decoding (Leviathan et al. 2023, Thm 3.8):

        (1 - alpha^(gamma+1)) / ((1 - alpha) (gamma c + verify_cost));  at alpha = 1: (gamma+1) / (gamma c + verify_cost).

    i.e. :func:`expected_tokens_per_call` divided by the cost of one round in target-step units
    (``gamma`` draft steps of relative cost ``c`` + one verification). The paper takes
    ``verify_cost = 1`` (memory-bound decode: reading the weights dominates, however many
    positions are scored); on a CPU it is measurably above 1.

    Source: facts/speculative.md "Walltime speedup". E.g. alpha 0.75, gamma 7, c 0.02: 3.16x
    (Leviathan report a predicted 3.2x / measured 3.4x there, their c was "~0.02").
    TPOT divides by it; TTFT is unchanged (facts/hardware.md, AWS Trainium + vLLM).

    Raises:
        ValueError: alpha outside [0, 1], gamma not an int >= 1, c < 0, verify_cost <= 0.
    """
    SpeculativeConfig(alpha, gamma, c)  # validates
    v = _check_positive("verify_cost", verify_cost, what="검증 한 번의 비용(대상 모델 한 단계 단위, 논문의 가정은 1)")
    return expected_tokens_per_call(alpha, gamma) / (gamma * c + v)


@dataclass(frozen=True)
class AgentLoopResult:
    """Per-call breakdown of an agent loop. Arrays have shape ``(depth,)``; times in ms.

    Attributes:
        prefill_ms, decode_ms, tool_ms, transfer_ms: time of each part of each call.
        context_tokens: tokens in the context when the call starts. prefill_tokens: tokens
        prefilled by the call. output_tokens: tokens the model writes per call.
        tpot_ms: mean decode time per output token of each call (after speculative speed-up).
    """

    prefill_ms: np.ndarray
    decode_ms: np.ndarray
    tool_ms: np.ndarray
    transfer_ms: np.ndarray
    context_tokens: np.ndarray
    prefill_tokens: np.ndarray
    output_tokens: int
    tpot_ms: np.ndarray

    @property
    def depth(self) -> int:
        """Number of model calls."""
        return int(self.prefill_ms.shape[0])

    @property
    def call_ms(self) -> np.ndarray:
        """Total time of each call (prefill + transfer + decode + tool), shape (depth,)."""
        return self.prefill_ms + self.transfer_ms + self.decode_ms + self.tool_ms

    @property
    def totals(self) -> dict[str, float]:
        """Sums over calls, ms: ``prefill``, ``transfer``, ``decode``, ``tool``, ``total``."""
        t = {"prefill": float(self.prefill_ms.sum()), "transfer": float(self.transfer_ms.sum()),
             "decode": float(self.decode_ms.sum()), "tool": float(self.tool_ms.sum())}
        t["total"] = sum(t.values())
        return t

    @property
    def total_ms(self) -> float:
        """Whole task, ms."""
        return self.totals["total"]

    @property
    def total_s(self) -> float:
        """Whole task, seconds."""
        return self.total_ms / 1e3


def agent_loop(depth: int, output_tokens_per_call: int, tool_ms_per_call: float, *,
               decode_ms_per_token: float | None = None, prefill_tokens_per_s: float | None = None,
               model: ModelProfile | None = None, hardware: Hardware | str | None = None,
               decode_hardware: Hardware | str | None = None, link: Link | str | None = None,
               initial_context_tokens: int = 0, context_growth_per_call: int = 0,
               prefix_caching: bool = True, speculative: SpeculativeConfig | None = None,
               mfu: float = 1.0) -> AgentLoopResult:
    """An agent loop: ``depth`` times [prefill the context, decode an answer, run a tool].

    Call i (0-based) starts with ``initial + i x growth`` context tokens. It prefills the new
    tokens (with ``prefix_caching``: the initial prompt at call 0, then ``growth`` tokens per
    call; without: the whole context every call), then decodes ``n = output_tokens_per_call``
    tokens: the prefill pass gives the first, each of the other n - 1 costs one decode step
    (E2E = TTFT + (n-1) TPOT, facts/hardware.md "Serving metrics"), then the tool runs.

    Two ways to give speeds (they can be mixed; explicit rates win):

    * rates: ``decode_ms_per_token`` (TPOT, ms) and ``prefill_tokens_per_s`` (tokens/s);
    * profiles: ``model`` + ``hardware`` (roofline: :func:`prefill_ms`, :func:`decode_step_ms`
      at the growing context), ``decode_hardware`` for decode on another device, and ``link``:
      when given, each call's prefilled KV is sent over it (:func:`kv_transfer_ms`).

    Worked example (facts/hardware.md "Agent loops"): 50 calls x 300 tokens + 2 s tool per call
    takes 400 s at 50 tokens/s and 115 s at 1,000 tokens/s; past that, tool time dominates
    (Amdahl). (This function gives 399 s and 115 s: the first token of each call comes with the
    prefill, which is free in that example.)

    Args:
        depth: number of model calls, integer >= 0.
        output_tokens_per_call: n, integer >= 1.
        tool_ms_per_call: tool latency after each call, ms, >= 0.
        decode_ms_per_token: TPOT, ms (>= 0); overrides the decode roofline.
        prefill_tokens_per_s: prefill throughput, tokens/s (> 0, inf allowed); overrides the
            prefill roofline.
        model: :class:`ModelProfile` for profile mode (and for ``link``).
        hardware: :class:`Hardware` or preset name for prefill (and decode unless
            ``decode_hardware``). decode_hardware: device for decode, default ``hardware``.
        link: :class:`Link` or name; each call's prefilled KV is sent over it (needs ``model``).
        initial_context_tokens: context of call 0, tokens, integer >= 0 (no sourced default).
        context_growth_per_call: tokens added per call (tool output), integer >= 0.
        prefix_caching: reuse the cached prefix (prefill only the new tokens). Default True.
        speculative: :class:`SpeculativeConfig`; divides TPOT by its Leviathan speed-up
            (:func:`speculative_speedup`); prefill and tool time are unchanged.
        mfu: prefill efficiency in (0, 1] (used in profile mode; checked in both modes).

    Returns:
        :class:`AgentLoopResult` with per-call arrays of shape ``(depth,)`` (ms) and totals.

    Raises:
        ValueError: depth < 0, tokens < 1, negative times or token counts, a non-positive rate,
            mfu outside (0, 1], ``link`` without ``model``, unknown hardware or link names, or
            neither a rate nor a model + hardware for a phase (the message names the field).
    """
    depth = _check_count("depth", depth, minimum=0, what="에이전트 루프 깊이(모델 호출 수)")
    n_out = _check_count("output_tokens_per_call", output_tokens_per_call, minimum=1, what="호출당 출력 토큰 수")
    tool = _check_nonneg("tool_ms_per_call", tool_ms_per_call, what="호출당 도구 지연(ms)")
    init = _check_count("initial_context_tokens", initial_context_tokens, minimum=0, what="처음 문맥 토큰 수")
    growth = _check_count("context_growth_per_call", context_growth_per_call, minimum=0, what="호출당 문맥 증가 토큰 수")
    mfu = _check_fraction("mfu", mfu)
    if decode_ms_per_token is not None:
        decode_ms_per_token = _check_nonneg("decode_ms_per_token", decode_ms_per_token, what="토큰당 디코드 지연(ms)")
    if prefill_tokens_per_s is not None:
        prefill_tokens_per_s = _check_positive("prefill_tokens_per_s", prefill_tokens_per_s, allow_inf=True,
                                               what="프리필 처리량(tokens/s)")
    hw = get_hardware(hardware) if hardware is not None else None
    dec_hw = get_hardware(decode_hardware) if decode_hardware is not None else hw
    for phase, rate, dev in (("decode_ms_per_token", decode_ms_per_token, dec_hw),
                             ("prefill_tokens_per_s", prefill_tokens_per_s, hw)):
        if rate is None and (model is None or dev is None):
            raise ValueError(f"{phase}: 속도를 직접 주거나(model/hardware 없이) model과 hardware를 함께 주세요.")

    i = np.arange(depth, dtype=float)
    ctx = init + i * growth
    if prefix_caching:
        new = np.where(i == 0, float(init), float(growth))
        past = ctx - new
    else:
        new, past = ctx.copy(), np.zeros(depth)

    if prefill_tokens_per_s is not None:
        pre = new / prefill_tokens_per_s * 1e3
    else:
        pre = np.array([prefill_ms(model, hw, s, past_tokens=p, mfu=mfu) if s > 0 else 0.0
                        for s, p in zip(new, past)])
    pre = np.where(new > 0, pre, 0.0)

    if decode_ms_per_token is not None:
        tpot = np.full(depth, decode_ms_per_token)
    elif n_out == 1:
        tpot = np.array([decode_step_ms(model, dec_hw, float(c)) for c in ctx])
    else:
        steps = np.arange(1, n_out, dtype=float)
        tpot = np.array([float(np.mean(_decode_ms_vec(model, dec_hw, c + steps))) for c in ctx])
    if speculative is not None:
        tpot = tpot / speculative.speedup
    dec = (n_out - 1) * tpot

    if link is not None:
        if model is None:
            raise ValueError("link: KV 전송 시간을 계산하려면 model도 주세요 (KV 바이트가 모델에 따라 다릅니다).")
        xfer = np.where(new > 0, kv_transfer_ms(model, new, link), 0.0) if depth else np.zeros(0)
    else:
        xfer = np.zeros(depth)

    return AgentLoopResult(
        prefill_ms=np.asarray(pre, dtype=float), decode_ms=np.asarray(dec, dtype=float),
        tool_ms=np.full(depth, tool), transfer_ms=np.asarray(xfer, dtype=float),
        context_tokens=ctx, prefill_tokens=new, output_tokens=n_out, tpot_ms=np.asarray(tpot, dtype=float),
    )


# ============================================================================================
# presets for the explorer widget


@dataclass(frozen=True)
class RatePreset:
    """Speeds for the latency explorer: one row of its hardware dropdown.

    Attributes:
        label: what the dropdown shows. decode_ms_per_token: TPOT, ms.
        prefill_tokens_per_s: tokens/s, or None to keep the slider where it is.
        source: how the numbers were obtained (roofline over a facts row, or a published claim).
    """

    label: str
    decode_ms_per_token: float
    prefill_tokens_per_s: float | None
    source: str


def rate_presets(model: ModelProfile | None = None, context_tokens: int = 8192, *,
                 include_this_computer: bool = False) -> list[RatePreset]:
    """Decode and prefill speeds per hardware preset for one model (default Llama-3-70B FP8).

    GPU/Trainium rows: the ideal roofline (mfu = mbu = 1) of :func:`decode_step_ms` at
    ``context_tokens`` and of :func:`prefill_ms` for a ``context_tokens`` prompt, on ONE chip
    (presets whose memory cannot hold the model are skipped, noted in the label otherwise).
    Rows from published claims instead of the roofline (a roofline over the LPX rack's summed
    bandwidth would ignore chip-to-chip time):

    * "Rubin + Groq 3 LPX": 1.0 ms/token from "generation speeds approach 1,000 tokens per second
      per user" (NVIDIA, facts/hardware.md); prefill on Rubin (roofline).
    * "Groq LPU v1 (GroqCloud 2024)": ~300 tokens/s for Llama-2-70B = 3.3 ms/token (facts/hardware.md).

    ``include_this_computer`` adds the bundled target in fp32 on this computer (measured figures,
    context capped at 256 tokens).

    Args:
        model: :class:`ModelProfile`, default Llama-3-70B FP8 (facts/hardware.md worked example).
        context_tokens: context for the decode step and prompt length for the prefill, >= 0.

    Returns:
        list of :class:`RatePreset` (decode in ms/token, prefill in tokens/s), each with its source.

    Raises:
        ValueError: a negative context (names ``context_tokens``).
    """
    m = model if model is not None else get_model("Llama-3-70B", "fp8")
    out: list[RatePreset] = []
    for name in ("H100", "H200", "B200", "Rubin", "Trainium2", "Trainium3"):
        hw = get_hardware(name)
        step = decode_step(m, hw, context_tokens)
        if step.fits is False:
            continue
        pre = prefill_ms(m, hw, context_tokens)
        extra = " [가정한 FLOP/s]" if hw.notes else ""
        out.append(RatePreset(
            f"{hw.name} (루프라인)", step.ms, context_tokens / pre * 1e3,
            f"루프라인: {m.name} {m.dtype.upper()}, 문맥 {context_tokens} 토큰, 칩 1개; {hw.source}{extra}"))
    rub = get_hardware("Rubin")
    out.append(RatePreset(
        "Rubin + Groq 3 LPX (NVIDIA 주장)", 1.0, context_tokens / prefill_ms(m, rub, context_tokens) * 1e3,
        "디코드: '사용자당 초당 약 1,000 토큰' 주장(facts/hardware.md); 프리필: Rubin 루프라인"))
    out.append(RatePreset(
        "Groq LPU v1 (GroqCloud 2024 공개 속도)", 1000.0 / 300.0, None,
        "Llama-2-70B 약 300 tokens/s (facts/hardware.md, GroqCloud 2024)"))
    if include_this_computer:
        tm = get_model("bundled-target", "fp32")
        here = measure_this_computer()
        s = min(context_tokens, 256)
        out.append(RatePreset(
            "이 컴퓨터 + 번들 대상 모델 (루프라인)", decode_step_ms(tm, here, s), s / prefill_ms(tm, here, s) * 1e3,
            f"루프라인: 번들 대상 모델 FP32, 문맥 {s} 토큰; {here.source}"))
    return out


# ============================================================================================
# small helpers the notebooks use


def amdahl_speedup(fraction: float, factor: float) -> float:
    """Whole-task speed-up when a part taking ``fraction`` of the time gets ``factor`` x faster.

    1 / ((1 - f) + f / s)  (Amdahl, "Validity of the single processor approach...", AFIPS 1967).
    With ``factor`` = inf it is the ceiling 1 / (1 - f): a faster decode chip cannot shorten the
    tool time. E.g. decode = 75% of a task: at most 4x, however fast the chip.

    Raises:
        ValueError: fraction outside [0, 1] or factor <= 0.
    """
    ok = isinstance(fraction, (int, float, np.floating)) and not isinstance(fraction, bool)
    if not ok or not (0 <= fraction <= 1):
        raise ValueError(f"fraction={fraction!r}: 비율(fraction)은 0 이상 1 이하여야 합니다.")
    s = _check_positive("factor", factor, allow_inf=True, what="빨라지는 배수(factor)")
    return 1.0 / ((1.0 - fraction) + fraction / s)


def chips_needed(model: ModelProfile, hardware: Hardware | str, context_tokens: int = 0, batch: int = 1) -> int:
    """How many chips of ``hardware`` it takes just to HOLD the weights (+ KV cache), ceil(bytes / memory).

    Llama-3-70B FP8 (70.6 GB) on Groq 3 LPUs with 500 MB SRAM each: 142 chips; on 80 GB H100s: 1.
    Source: memory figures of facts/hardware.md.

    Args:
        model: :class:`ModelProfile`. hardware: :class:`Hardware` or preset name.
        context_tokens: tokens per sequence in the KV cache, >= 0. batch: sequences, >= 1.

    Returns:
        number of chips (int, >= 1 unless the model has no bytes).

    Raises:
        ValueError: the hardware's memory is unknown (e.g. not reported by this computer's OS),
            context_tokens < 0 or batch < 1.
    """
    hw = get_hardware(hardware)
    if hw.memory_bytes is None:
        raise ValueError(f"hardware={hw.name!r}: 메모리 용량(memory_bytes)을 모릅니다.")
    nbytes = decode_step(model, hw, context_tokens, batch).bytes
    return int(math.ceil(nbytes / hw.memory_bytes))
