"""Hardware, link and model profiles for the latency model (numpy only).

:class:`Hardware` (memory, bandwidth, dense FLOP/s per number format), :class:`Link` (KV
transfer) and :class:`ModelProfile` (sizes from a Hugging Face config) come from one table,
``decodelab/assets/presets.csv`` (a source column per row: facts/hardware.md or the published
config.json), plus ``"this-computer"``, measured at run time (:func:`measure_this_computer`).
:mod:`decodelab.latency` computes on them. Units: bytes, bytes/s, FLOP/s.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from ._check import check as _check, fail
from ._paths import MODELS_DIR, PRESETS_CSV

__all__ = [
    "DTYPE_BYTES", "HARDWARE_NAMES", "LINK_NAMES", "MODEL_NAMES", "Hardware", "Link", "ModelProfile",
    "dtype_key", "get_hardware", "get_link", "get_model", "model_from_config", "measure_this_computer",
]

_PRESETS_CSV = PRESETS_CSV

#: Bytes per stored value (``fp4`` = NVFP4/MXFP4, ignoring the small per-block scales).
DTYPE_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}
_DTYPE_ALIASES = {a: d for d, names in {
    "fp32": "fp32 float32 f32 float", "bf16": "bf16 bfloat16", "fp16": "fp16 float16 half f16",
    "fp8": "fp8 float8 e4m3 mxfp8 int8", "fp4": "fp4 nvfp4 mxfp4"}.items() for a in names.split()}


def dtype_key(dtype: str, name: str = "dtype") -> str:
    """The canonical key of :data:`DTYPE_BYTES` for a number format's name, the one table of
    names: "bfloat16" / "BF16" / "torch.bfloat16" -> "bf16", "half" -> "fp16", "e4m3" -> "fp8".

    Raises:
        ValueError: an unknown name (``name`` is the argument's name in the message).
    """
    key = str(dtype).strip().lower().removeprefix("torch.").replace("-", "").replace("_", "")
    if key not in _DTYPE_ALIASES:
        raise fail(name, dtype, "모르는 수 형식(number format)입니다", ", ".join(DTYPE_BYTES))
    return _DTYPE_ALIASES[key]


def _key(name: str) -> str:
    """A name without case, spaces or punctuation ("H100 SXM" -> "h100sxm")."""
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


@dataclass(frozen=True)
class Hardware:
    """One accelerator (or a rack treated as one device).

    Attributes:
        name; memory_bytes (HBM, or SRAM for Groq; None when unknown); bandwidth (bytes/s);
        flops: dense FLOP/s per number format; source: facts-file row, spec sheet or "measured";
        notes: caveats, starting with "가정(assumption)" where a figure is ours, not published;
        n_chips: chips behind the figures (256 for the LPX rack, whose figures are rack totals);
        assumed: formats whose FLOP/s figure is an assumption (e.g. every format on Rubin).

    Raises:
        TypeError / ValueError: a non-positive bandwidth, memory or FLOP/s, an unknown format.
    """

    name: str
    memory_bytes: float | None
    bandwidth: float
    flops: Mapping[str, float]
    source: str
    notes: str = ""
    n_chips: int = 1
    assumed: frozenset = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        _check("bandwidth", self.bandwidth, "메모리 대역폭(memory bandwidth, bytes/s)", strict=True)
        if self.memory_bytes is not None:
            _check("memory_bytes", self.memory_bytes, "메모리 용량(bytes)", strict=True)
        if not self.flops:
            raise fail("flops", self.flops, "수 형식별 FLOP/s가 하나 이상 있어야 합니다", "예: {'bf16': 989e12}")
        flops = {dtype_key(k, "flops"): _check(f"flops[{k!r}]", v, "연산 성능(FLOP/s)", strict=True)
                 for k, v in self.flops.items()}
        object.__setattr__(self, "flops", flops)
        object.__setattr__(self, "assumed", frozenset(dtype_key(d, "assumed") for d in self.assumed))
        _check("n_chips", self.n_chips, "칩 수", low=1, integer=True)

    def flops_for(self, dtype: str) -> float:
        """Dense FLOP/s for ``dtype``. Raises ValueError listing the formats it has."""
        d = dtype_key(dtype)
        if d not in self.flops:
            raise fail("dtype", dtype, f"{self.name}에는 이 수 형식의 연산 성능 수치가 없습니다", ", ".join(self.flops))
        return self.flops[d]

    def ridge_point(self, dtype: str = "bf16") -> float:
        """FLOP/s / bandwidth, FLOP/byte (see :func:`ridge_point`)."""
        return self.flops_for(dtype) / self.bandwidth


@dataclass(frozen=True)
class Link:
    """A link that carries the KV cache: bandwidth (bytes/s, one direction), latency_ms per transfer."""

    name: str
    bandwidth: float
    latency_ms: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        _check("bandwidth", self.bandwidth, "링크 대역폭(link bandwidth, bytes/s)", strict=True)
        _check("latency_ms", self.latency_ms, "링크 지연(ms)")


@dataclass(frozen=True)
class ModelProfile:
    """The sizes of a decoder-only transformer that set its latency.

    Attributes:
        name; n_params (P, tied embeddings counted once); n_layers (L); d_model; n_q_heads and
        n_kv_heads (grouped-query attention when fewer KV heads); d_head; vocab_size;
        intermediate_size; dtype (weights) and kv_dtype (KV cache), keys of :data:`DTYPE_BYTES`;
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
            _check(f, getattr(self, f), "모델 크기(config 항목)", low=1, integer=True)
        object.__setattr__(self, "dtype", dtype_key(self.dtype))
        object.__setattr__(self, "kv_dtype", dtype_key(self.kv_dtype, "kv_dtype"))

    @property
    def bytes_per_param(self) -> float:
        return DTYPE_BYTES[self.dtype]

    @property
    def kv_bytes_per_value(self) -> float:
        return DTYPE_BYTES[self.kv_dtype]

    @property
    def weight_bytes(self) -> float:
        """n_params x bytes_per_param (70.6 GB for Llama-3-70B FP8)."""
        return self.n_params * self.bytes_per_param

    @property
    def attn_width(self) -> int:
        """a = n_q_heads x d_head (= d_model for Llama; 8192 vs d_model 5120 for Qwen3-32B)."""
        return self.n_q_heads * self.d_head

    def with_dtype(self, dtype: str, kv_dtype: str | None = None) -> "ModelProfile":
        """The same model in another format; KV stays 16-bit under fp8/fp4 weights unless given."""
        d = dtype_key(dtype)
        return replace(self, dtype=d, kv_dtype=kv_dtype or _default_kv_dtype(d))


def _default_kv_dtype(dtype: str) -> str:
    """KV cache stays in 16 bits when weights are quantised (facts/hardware.md's FP8 example)."""
    return dtype if dtype in ("fp32", "bf16", "fp16") else "bf16"


@lru_cache(maxsize=1)
def _presets() -> dict[str, dict[str, dict[str, str]]]:
    """presets.csv as ``{kind: {key: row}}`` (lines starting with ``#`` are comments)."""
    with _PRESETS_CSV.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out: dict[str, dict[str, dict[str, str]]] = {"hardware": {}, "link": {}, "model": {}}
    for r in rows:
        out[r["kind"]][r["key"]] = r
    return out


def _aliases(kind: str, extra: Mapping[str, str] = {}) -> dict[str, str]:
    table = {_key(k): k for k in _presets()[kind]}
    for k, r in _presets()[kind].items():
        table.update({_key(a): k for a in r["aliases"].split()})
    return {**table, **extra}


def _bytes(text: str) -> float:
    return float(text[:-3]) * 2**30 if text.endswith("GiB") else float(text)


def _hardware_row(r: Mapping[str, str]) -> Hardware:
    flops = {d: float(r[d]) for d in ("bf16", "fp8", "fp4") if r[d]}
    if "bf16" in flops:
        flops["fp16"] = flops["bf16"]
    assumed = set(r["assumed"].split()) | ({"fp16"} if "bf16" in r["assumed"].split() else set())
    return Hardware(r["name"], _bytes(r["memory_bytes"]), float(r["bandwidth"]), flops, r["source"],
                    r["notes"], int(r["n_chips"]), frozenset(assumed))


_THIS_COMPUTER: dict[tuple[int, int], Hardware] = {}
_THIS_COMPUTER_ALIASES = {"thiscomputer": "this-computer", "local": "this-computer", "cpu": "this-computer",
                          "이컴퓨터": "this-computer"}


def measure_this_computer(refresh: bool = False, *, copy_mib: int = 128, matmul_n: int = 1024) -> Hardware:
    """This computer's memory bandwidth and matmul FLOP/s, measured with numpy (~0.5 s, cached).

    Bandwidth: best of 5 ``np.copyto`` of a ``copy_mib`` MiB float32 array, 2 x size / time (a
    copy reads and writes every byte; STREAM "Copy", McCalpin). FLOP/s: best of 3 float32
    ``matmul_n``-square matmuls, 2 n^3 FLOP each, used for fp32/bf16/fp16. Cached per
    ``(copy_mib, matmul_n)``; ``refresh`` measures again. Shared machines vary ~30% between runs
    (facts/tiny-model-feasibility.md): compare numbers from one run only.

    Returns:
        :class:`Hardware` "this computer" (memory = physical RAM when the OS reports it).

    Raises:
        TypeError / ValueError: ``copy_mib`` or ``matmul_n`` not an integer >= 1.
    """
    copy_mib = _check("copy_mib", copy_mib, "복사할 배열 크기(MiB)", low=1, integer=True)
    matmul_n = _check("matmul_n", matmul_n, "행렬 곱의 행렬 크기(n)", low=1, integer=True)
    if (copy_mib, matmul_n) in _THIS_COMPUTER and not refresh:
        return _THIS_COMPUTER[copy_mib, matmul_n]
    src = np.ones(copy_mib * 2**20 // 4, dtype=np.float32)
    dst = np.empty_like(src)
    bandwidth = 2 * src.nbytes / _best_time(lambda: np.copyto(dst, src), 5)
    a, b = np.random.default_rng(0).standard_normal((2, matmul_n, matmul_n), dtype=np.float32)
    a @ b  # warm-up (thread pool start)
    flops = 2.0 * matmul_n**3 / _best_time(lambda: a @ b, 3)
    try:
        memory = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX
        memory = None
    hw = _THIS_COMPUTER[copy_mib, matmul_n] = Hardware(
        "this computer", memory, bandwidth, {"fp32": flops, "bf16": flops, "fp16": flops},
        source=f"measured on this computer (numpy copy of {copy_mib} MiB; float32 {matmul_n}x{matmul_n} matmul)",
        notes="실행할 때 측정한 값: 같은 실행 안에서만 비교하세요")
    return hw


def _best_time(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def get_hardware(name: str | Hardware) -> Hardware:
    """A hardware profile: ``"H100"``, ``"H200"``, ``"B200"``, ``"Rubin"``, ``"Groq3-LPU"``,
    ``"Groq3-LPX"``, ``"Trainium2"``, ``"Trainium3"`` (rows of presets.csv, each citing
    facts/hardware.md) or ``"this-computer"`` (measured on first use). Case, spaces and
    punctuation are ignored; aliases such as ``"H100 SXM"``, ``"trn2"``, ``"LPX"`` work; a
    :class:`Hardware` is returned unchanged.

    Raises:
        ValueError: an unknown name (the message lists the allowed ones).
    """
    if isinstance(name, Hardware):
        return name
    canon = _aliases("hardware", _THIS_COMPUTER_ALIASES).get(_key(name))
    if canon is None:
        raise fail("hardware", name, "모르는 하드웨어 이름입니다", ", ".join(HARDWARE_NAMES))
    return measure_this_computer() if canon == "this-computer" else _hardware_row(_presets()["hardware"][canon])


def get_link(name: str | Link, *, latency_ms: float | None = None) -> Link:
    """A KV link: ``"NVLink"`` (450 GB/s), ``"400G-NIC"`` (50 GB/s), ``"NVLink6"`` (3.6 TB/s),
    ``"LPX-C2C"`` (2.5 TB/s), sources in presets.csv (facts/hardware.md). Latency is 0 unless
    ``latency_ms`` is given (no sourced figure).

    Raises:
        ValueError: an unknown name (lists the allowed ones) or a negative latency.
    """
    if not isinstance(name, Link):
        canon = _aliases("link").get(_key(name))
        if canon is None:
            raise fail("link", name, "모르는 링크 이름입니다", ", ".join(LINK_NAMES))
        r = _presets()["link"][canon]
        name = Link(r["name"], float(r["bandwidth"]), 0.0, r["source"])
    return name if latency_ms is None else replace(name, latency_ms=latency_ms)


def _count_params(c: Mapping[str, Any]) -> int:
    """Parameters of a Llama/Qwen-style decoder (gated MLP): embeddings V d (x2 if untied) + per
    layer [q, k, v, o projections, 3 d ff MLP, 2 RMSNorms, q/k norms for qwen3, biases] + final
    norm. Equals ``sum(p.numel())`` of the transformers model (tested on every preset)."""
    V, d, L = c["vocab_size"], c["hidden_size"], c["num_hidden_layers"]
    hq, hkv, dh, ff = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["intermediate_size"]
    attn = d * hq * dh + 2 * d * hkv * dh + hq * dh * d + ((hq * dh + 2 * hkv * dh + d) if c.get("attention_bias") else 0)
    mlp = 3 * d * ff + ((2 * ff + d) if c.get("mlp_bias") else 0)
    norms = 2 * d + (2 * dh if c.get("model_type") == "qwen3" else 0)
    return int(V * d * (1 if c.get("tie_word_embeddings", False) else 2) + L * (attn + mlp + norms) + d)


def model_from_config(config: Mapping[str, Any] | Any, name: str | None = None, *, dtype: str = "bf16",
                      kv_dtype: str | None = None, source: str = "") -> ModelProfile:
    """A :class:`ModelProfile` from a Hugging Face config (``dict`` or ``PretrainedConfig``).

    Reads hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads (default =
    heads), head_dim (default hidden / heads), intermediate_size, vocab_size,
    tie_word_embeddings, attention_bias, mlp_bias, model_type.

    Raises:
        ValueError: a missing field (named) or an unknown dtype.
    """
    c = dict(config.to_dict() if hasattr(config, "to_dict") else config)
    for f in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"):
        if c.get(f) is None:
            raise fail(f"config[{f!r}]", None, f"Llama 형식 Hugging Face config.json에는 {f} 항목이 있어야 합니다",
                       "config.json의 dict 또는 PretrainedConfig")
    c["num_key_value_heads"] = c.get("num_key_value_heads") or c["num_attention_heads"]
    c["head_dim"] = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    d = dtype_key(dtype)
    return ModelProfile(
        name or c.get("_name_or_path") or c.get("model_type", "model"), _count_params(c),
        *(int(c[k]) for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                              "head_dim", "vocab_size", "intermediate_size")),
        dtype=d, kv_dtype=dtype_key(kv_dtype, "kv_dtype") if kv_dtype else _default_kv_dtype(d), source=source)


_CONFIG_INTS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim")


def _model_config(name: str) -> dict:
    """The HF config of preset ``name``: from its presets.csv row, or (bundled pair) its
    config.json read now, since the bundled weights may be retrained and replaced."""
    r = _presets()["model"][name]
    if r["bundled_dir"]:
        path = MODELS_DIR / r["bundled_dir"] / "config.json"
        if not path.is_file():
            raise fail("model", name, f"번들 모델 설정 파일 {path}이 없습니다", "decodelab을 다시 설치한 뒤의 번들 모델",
                       FileNotFoundError)
        return json.loads(path.read_text(encoding="utf-8"))
    return {"model_type": r["model_type"], **{k: int(r[k]) for k in _CONFIG_INTS},
            "tie_word_embeddings": r["tie_word_embeddings"] == "true"}


def get_model(name: str | ModelProfile, dtype: str = "bf16", *, kv_dtype: str | None = None) -> ModelProfile:
    """A model profile: ``"Llama-3-8B"``, ``"Llama-3-70B"``, ``"Qwen3-32B"``, ``"Qwen3-0.6B"``
    (published config.json, presets.csv) or ``"bundled-target"`` / ``"bundled-draft"`` (read at
    call time), stored in ``dtype`` (fp32, bf16, fp16, fp8, fp4). KV format: ``kv_dtype``, default
    ``dtype`` for 16/32-bit weights, bf16 under fp8/fp4. A :class:`ModelProfile` is re-typed.

    Raises:
        ValueError: an unknown name or dtype (the message lists the allowed values).
    """
    if isinstance(name, ModelProfile):
        return name.with_dtype(dtype, kv_dtype)
    canon = _aliases("model").get(_key(name))
    if canon is None:
        raise fail("model", name, "모르는 모델 이름입니다", ", ".join(MODEL_NAMES))
    return model_from_config(_model_config(canon), canon, dtype=dtype, kv_dtype=kv_dtype,
                             source=_presets()["model"][canon]["source"])


#: Names accepted by :func:`get_hardware`, :func:`get_link`, :func:`get_model`.
HARDWARE_NAMES: tuple[str, ...] = (*_presets()["hardware"], "this-computer")
LINK_NAMES: tuple[str, ...] = tuple(_presets()["link"])
MODEL_NAMES: tuple[str, ...] = tuple(_presets()["model"])
