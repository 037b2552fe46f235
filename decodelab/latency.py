"""How long does an answer take? A sourced roofline model of LLM inference (numpy only).

Read top to bottom:

1. **the roofline** (Williams et al., "Roofline", CACM 2009): :func:`roofline` is the one place
   that turns FLOPs and bytes into time, ``max(FLOP / FLOP/s, bytes / bandwidth)``; every estimate
   (prefill, decode step, TTFT, TPOT, E2E, intensity, chips needed, layer split) calls it, on
   numbers or numpy arrays alike (formulas: kipp.ly, "Transformer Inference Arithmetic", 2022;
   facts/hardware.md "back-of-envelope");
2. **disaggregated serving** and the **layer split** NVIDIA described for Rubin + Groq 3 LPX;
3. **speculative decoding**'s expected tokens and speed-up (Leviathan et al. 2023, arXiv 2211.17192);
4. the **agent loop**: prefill, decode, tool call, repeated, on rates (:func:`agent_loop`), with
   :func:`agent_rates` turning a hardware profile into those rates.

The profiles it runs on (:class:`~decodelab.profiles.Hardware`, :class:`~decodelab.profiles.Link`,
:class:`~decodelab.profiles.ModelProfile`, ``get_*``) live in :mod:`decodelab.profiles`. The times are lower bounds: no kernel
launch or framework overhead (which dominates tiny models on a CPU), no queueing or scheduler, no
chip-to-chip time unless passed (``comm_ms``, ``hop_ms``), perfect utilisation unless ``mfu`` /
``mbu`` < 1. Units: bytes, bytes/s, FLOP, FLOP/s, tokens, ms (``_ms``), s (``_s``). Bad input:
TypeError for a non-number, ValueError for a value outside what is allowed, both shaped
``name=value: 설명 (허용: ...)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ._check import check as _check, check_gamma, fail
from .profiles import Hardware, Link, ModelProfile, get_hardware, get_link

__all__ = [
    "Roofline", "StepEstimate", "DisaggregatedResult", "SpeculativeConfig", "AgentRates", "AgentLoopResult",
    "roofline", "kv_bytes_per_token", "kv_cache_bytes", "prefill_flops", "estimate_prefill_ms", "estimate_decode_step",
    "estimate_decode_step_ms", "estimate_ttft_ms", "estimate_tpot_ms", "estimate_e2e_ms",
    "arithmetic_intensity", "weight_matmul_intensity", "ridge_point", "chips_needed",
    "kv_transfer_ms", "disaggregated", "layer_split_decode_ms",
    "expected_tokens_per_call", "expected_speedup", "optimal_gamma",
    "agent_rates", "agent_loop", "amdahl_speedup",
]


def _out(x):
    """A result as a Python float / str / bool for scalar input, else a numpy array."""
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


#: The arguments several estimates share: what each is (for the message) and the values it takes.
_ARGS = {
    "batch": ("배치 크기", dict(low=1, integer=True)),
    "n_chips": ("칩 수", dict(low=1, integer=True)),
    "mfu": ("연산 활용률(MFU)", dict(strict=True, high=1)),
    "mbu": ("대역폭 활용률(MBU)", dict(strict=True, high=1)),
    "context_tokens": ("맥락(KV 캐시) 토큰 수", {}),
    "prompt_tokens": ("프롬프트 토큰 수", dict(integer=True)),
    "output_tokens": ("출력 토큰 수", dict(low=1, integer=True)),
    "output_tokens_per_call": ("호출당 출력 토큰 수", dict(low=1, integer=True)),
    "comm_ms": ("스텝당 통신 시간(ms)", {}),
}


def _arg(name, value, **rule):
    """:func:`_check` of a shared argument, by its :data:`_ARGS` row (``rule`` adds to it)."""
    what, base = _ARGS[name]
    return _check(name, value, what, **{**base, **rule})


def _util(mfu, mbu, n_chips):
    return _arg("mfu", mfu), _arg("mbu", mbu), _arg("n_chips", n_chips)


# ============================================================================================
# the roofline: one core, every estimate calls it


class Roofline(NamedTuple):
    """FLOPs, bytes and time of one forward pass (numpy arrays of the broadcast shape):
    weight_flops = 2 P B T, attention_flops = 4 L a B pairs, kv_bytes = B kv_tokens kv,
    bytes = W + kv_bytes, compute_ms = FLOP / (N F mfu), memory_ms = bytes / (N BW mbu), ms = the larger."""

    weight_flops: np.ndarray
    attention_flops: np.ndarray
    flops: np.ndarray
    kv_bytes: np.ndarray
    bytes: np.ndarray
    compute_ms: np.ndarray
    memory_ms: np.ndarray
    ms: np.ndarray


def roofline(model: ModelProfile, hardware: Hardware | None, new_tokens, attention_pairs, kv_tokens, batch=1, *,
             n_chips: int = 1, mfu: float = 1.0, mbu: float = 1.0) -> Roofline:
    """The one roofline core (Williams et al. 2009; kipp.ly): ``batch`` sequences each compute
    ``new_tokens`` tokens, whose queries meet ``attention_pairs`` keys, and move ``kv_tokens``
    tokens of KV cache, on ``n_chips`` chips sharing the work perfectly. What each estimate counts:

    ============  ==========  =====================  ================
    estimate      new_tokens  attention_pairs        kv_tokens
    ============  ==========  =====================  ================
    prefill       S           S^2 / 2 + S S_past     S (written)
    decode step   1           S (cached)             S (read)
    ============  ==========  =====================  ================

    Arguments are numbers or numpy arrays (broadcast); the caller has checked them (the public
    estimates do). Returns a :class:`Roofline` (FLOP, bytes, ms); with ``hardware=None`` FLOPs
    and bytes only (the times are None).
    """
    w_flops = np.asarray(2.0 * model.n_params * batch * new_tokens)
    a_flops = np.asarray(4.0 * model.n_layers * model.attn_width * batch * attention_pairs)
    kv = np.asarray(batch * kv_tokens * kv_bytes_per_token(model))
    flops, nbytes = w_flops + a_flops, model.weight_bytes + kv
    if hardware is None:  # FLOPs and bytes only
        return Roofline(w_flops, a_flops, flops, kv, nbytes, None, None, None)
    compute = flops / (n_chips * hardware.flops_for(model.dtype) * mfu) * 1e3
    memory = nbytes / (n_chips * hardware.bandwidth * mbu) * 1e3
    return Roofline(w_flops, a_flops, flops, kv, nbytes, compute, memory, np.maximum(compute, memory))


def kv_bytes_per_token(model: ModelProfile) -> float:
    """KV-cache bytes per token: 2 (K and V) x L x n_kv_heads x d_head x bytes. Llama-3-70B BF16:
    327,680 B (2.68 GB at 8k). Source: facts/hardware.md "back-of-envelope" (kipp.ly)."""
    return kv_cache_bytes(model.n_layers, model.n_kv_heads, model.d_head, model.kv_bytes_per_value)


def kv_cache_bytes(n_layers, n_kv_heads, d_head, bytes_per_value, context_tokens=1, batch=1):
    """The KV cache's size in bytes: ``2 (K and V) x n_layers x n_kv_heads x d_head x
    bytes_per_value x context_tokens x batch`` (facts/hardware.md "back-of-envelope", kipp.ly).

    With the defaults it is the bytes per token (:func:`kv_bytes_per_token` of a profile).
    Llama-3-8B (32 layers, 8 KV heads, head size 128) in BF16 (2 bytes): 131,072 B per token.
    The formula holds for multi-head and grouped-query attention (MHA/GQA: every KV head keeps
    one key and one value vector per token and layer). It does not hold for multi-head latent
    attention (MLA, DeepSeek-V2/V3), which caches one compressed latent vector per token and
    layer instead (facts/hardware.md "Attention shapes").

    Args:
        n_layers, n_kv_heads, d_head: whole numbers >= 1 (``num_hidden_layers``,
            ``num_key_value_heads``, ``head_dim`` of a config.json).
        bytes_per_value: bytes of one stored number (fp32 4, bf16/fp16 2, fp8 1;
            :data:`decodelab.profiles.DTYPE_BYTES`), > 0.
        context_tokens: tokens held per request (whole number >= 0). batch: requests (>= 1).
            Either may be a numpy array (broadcast).

    Returns:
        bytes: a float, or a numpy array for array input.

    Raises:
        TypeError / ValueError: (Korean) a value that is not a number or out of its range.
    """
    layers = _check("n_layers", n_layers, "층 수", low=1, integer=True)
    heads = _check("n_kv_heads", n_kv_heads, "KV 헤드 수", low=1, integer=True)
    size = _check("d_head", d_head, "헤드 크기", low=1, integer=True)
    nbytes = _check("bytes_per_value", bytes_per_value, "값 하나의 바이트 수", strict=True, hint="예: BF16이면 2")
    tokens = _check("context_tokens", context_tokens, "맥락(KV 캐시) 토큰 수", integer=True, array=True)
    b = _arg("batch", batch, array=True)
    return _out(2.0 * layers * heads * size * nbytes * np.asarray(tokens, dtype=float) * b)


def _prefill(model, hw, s, past=0.0, n_chips=1, mfu=1.0, mbu=1.0) -> Roofline:
    return roofline(model, hw, s, s**2 / 2 + s * past, s, n_chips=n_chips, mfu=mfu, mbu=mbu)


def _decode(model, hw, s, batch=1, n_chips=1, mfu=1.0, mbu=1.0) -> Roofline:
    return roofline(model, hw, 1.0, s, s, batch, n_chips=n_chips, mfu=mfu, mbu=mbu)


def _prefill_tokens(prompt_tokens, past_tokens):
    return (_check("prompt_tokens", prompt_tokens, "토큰 수", array=True),
            _check("past_tokens", past_tokens, "토큰 수", array=True))


def prefill_flops(model: ModelProfile, prompt_tokens, past_tokens=0):
    """FLOP of prefilling S = ``prompt_tokens`` after S_past = ``past_tokens`` cached tokens:
    2 P S + 2 L S^2 a + 4 L S S_past a (a = n_q_heads x d_head). Llama-3-70B, 8k: 1.244e15.
    Source: facts/hardware.md "Prefill FLOPs ~ 2*P*S + 2*L*S^2*d_model". Numbers or arrays (broadcast).
    Raises TypeError / ValueError for a token count that is not a number >= 0."""
    s, p = _prefill_tokens(prompt_tokens, past_tokens)
    return _out(_prefill(model, None, s, p).flops)


def estimate_prefill_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, *, past_tokens=0,
                        n_chips: int = 1, mfu: float = 1.0, mbu: float = 1.0):
    """Prefill time, ms: the roofline of :func:`prefill_flops` and the weights + new KV bytes.
    Llama-3-70B FP8, 8k tokens, one H100: 1.244 PFLOP / 1,979 TFLOP/s = 0.629 s (1.26 s at
    mfu 0.5; facts/hardware.md worked example). ``prompt_tokens`` / ``past_tokens``: numbers or
    arrays (>= 0); result shaped alike. ``mfu`` / ``mbu`` in (0, 1]; ``n_chips`` integer >= 1.

    Raises:
        TypeError / ValueError: a bad count, rate or name; a format the hardware has no figure for.
    """
    hw, (mfu, mbu, n) = get_hardware(hardware), _util(mfu, mbu, n_chips)
    s, p = _prefill_tokens(prompt_tokens, past_tokens)
    return _out(_prefill(model, hw, s, p, n, mfu, mbu).ms)


@dataclass(frozen=True)
class StepEstimate:
    """One decode step on the roofline (floats, or arrays for array inputs).

    ms = max(memory_ms, compute_ms) + comm_ms; bytes = W + B S kv; flops = 2 P B + 4 B L S a;
    bound: "memory" or "compute"; fits: weights + KV within N x memory (None when unknown).
    """

    ms: Any
    memory_ms: Any
    compute_ms: Any
    comm_ms: float
    bytes: Any
    flops: Any
    bound: Any
    fits: Any


def estimate_decode_step(model: ModelProfile, hardware: Hardware | str, context_tokens, batch=1, *,
                         n_chips: int = 1, comm_ms: float = 0.0, mfu: float = 1.0, mbu: float = 1.0) -> StepEstimate:
    """One decode step: every weight and each sequence's KV cache read once (facts/hardware.md
    "back-of-envelope"; the attention FLOPs 4 B L S a are added to its 2 P B).

    Llama-3-70B FP8, one H100, batch 1, 8k context: (70.6 + 2.7) GB / 3.35 TB/s = 21.86 ms;
    8 x H100 BF16: 5.37 ms (pass the ~160 all-reduces as ``comm_ms``); Rubin FP8, empty cache: 3.21 ms.

    Args:
        context_tokens: S cached tokens per sequence, number or array (>= 0). batch: B, integer
            (or array of integers) >= 1. n_chips: N, integer >= 1. comm_ms: added per step, >= 0.
        mfu / mbu: fraction of peak FLOP/s / bandwidth achieved, in (0, 1].

    Returns:
        :class:`StepEstimate` (ms, bytes, FLOP), floats or arrays of the broadcast shape.

    Raises:
        TypeError / ValueError: a bad count, rate or name (named); a format with no FLOP/s figure.
    """
    hw, (mfu, mbu, n) = get_hardware(hardware), _util(mfu, mbu, n_chips)
    s = _arg("context_tokens", context_tokens, array=True)
    b = _arg("batch", batch, array=True)
    comm = _arg("comm_ms", comm_ms)
    r = _decode(model, hw, s, b, n, mfu, mbu)
    fits = None if hw.memory_bytes is None else _out(r.bytes <= n * hw.memory_bytes)
    return StepEstimate(_out(r.ms + comm), _out(r.memory_ms), _out(r.compute_ms), comm, _out(r.bytes), _out(r.flops),
                        _out(np.where(r.memory_ms >= r.compute_ms, "memory", "compute")), fits)


def estimate_decode_step_ms(model: ModelProfile, hardware: Hardware | str, context_tokens, batch=1, **kwargs):
    """``estimate_decode_step(...).ms``: ms per step, a float or an array shaped like the input.
    Arguments and errors: :func:`estimate_decode_step`."""
    return estimate_decode_step(model, hardware, context_tokens, batch, **kwargs).ms


def estimate_ttft_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, *, queue_ms: float = 0.0,
                     transfer_ms: float = 0.0, **kwargs):
    """Time to first token, ms: queue + prefill (+ KV transfer when disaggregated)
    (facts/hardware.md "Serving metrics"). ``queue_ms`` / ``transfer_ms`` >= 0 (no sourced
    default); other keywords (past_tokens, n_chips, mfu, mbu) go to :func:`estimate_prefill_ms`.

    Raises:
        TypeError / ValueError: as :func:`estimate_prefill_ms`, or a negative queue/transfer time.
    """
    q = _check("queue_ms", queue_ms, "대기 시간(ms)")
    t = _check("transfer_ms", transfer_ms, "KV 전송 시간(ms)")
    return q + estimate_prefill_ms(model, hardware, prompt_tokens, **kwargs) + t


def _tpot(model, hw, p, n, b=1, n_chips=1, comm=0.0, mfu=1.0, mbu=1.0):
    steps = np.arange(1, n, dtype=float) if n > 1 else np.zeros(1)
    ms = _decode(model, hw, np.asarray(p, dtype=float)[..., None] + steps, b, n_chips, mfu, mbu).ms + comm
    return _out(np.mean(ms, axis=-1))


def estimate_tpot_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, output_tokens: int, batch: int = 1,
                     *, n_chips: int = 1, comm_ms: float = 0.0, mfu: float = 1.0, mbu: float = 1.0):
    """Time per output token, ms: the mean decode step while the cache grows from
    ``prompt_tokens + 1`` to ``prompt_tokens + output_tokens - 1`` (vLLM's TPOT = (E2E - TTFT) /
    (n - 1), facts/hardware.md "Serving metrics"); for one output token, the step at the prompt.
    ``prompt_tokens``: integer or array of integers >= 0; ``output_tokens``: integer >= 1.

    Raises:
        TypeError / ValueError: as :func:`estimate_decode_step`, or a bad token count.
    """
    hw, (mfu, mbu, n_chips) = get_hardware(hardware), _util(mfu, mbu, n_chips)
    p = _arg("prompt_tokens", prompt_tokens, array=True)
    n = _arg("output_tokens", output_tokens)
    b = _arg("batch", batch)
    return _tpot(model, hw, p, n, b, n_chips, _arg("comm_ms", comm_ms), mfu, mbu)


def estimate_e2e_ms(model: ModelProfile, hardware: Hardware | str, prompt_tokens, output_tokens: int, batch: int = 1,
                    *, n_chips: int = 1, comm_ms: float = 0.0, mfu: float = 1.0, mbu: float = 1.0):
    """End-to-end latency, ms: TTFT + (n - 1) x TPOT (facts/hardware.md "Serving metrics"); the
    prefill pass yields the first token. ``comm_ms`` applies to decode only.

    Raises:
        TypeError / ValueError: as :func:`estimate_tpot_ms`.
    """
    tpot = estimate_tpot_ms(model, hardware, prompt_tokens, output_tokens, batch, n_chips=n_chips,
                            comm_ms=comm_ms, mfu=mfu, mbu=mbu)
    pre = _prefill(model, get_hardware(hardware), np.asarray(prompt_tokens, dtype=float), 0.0, n_chips, mfu, mbu).ms
    return _out(pre + (output_tokens - 1) * tpot)


def arithmetic_intensity(model: ModelProfile, context_tokens=0, batch=1):
    """FLOP per byte of one decode step, (2 P B + 4 B L S a) / (W + B S kv): about 2 /
    bytes_per_param at batch 1 (1.0 for BF16), far below every ridge point, so decode is
    memory-bound (Williams et al. 2009; facts/hardware.md). Numbers or arrays.

    Raises:
        TypeError / ValueError: context_tokens < 0, batch not an integer >= 1.
    """
    s = _arg("context_tokens", context_tokens, array=True)
    r = _decode(model, None, s, _arg("batch", batch, array=True))
    return _out(r.flops / r.bytes)


def weight_matmul_intensity(batch, bytes_per_param: float = 2.0):
    """Decode's weight matmuls: 2 B / bytes_per_param FLOP/byte (each weight read once, used for
    B multiply-adds); memory-bound until B ~ ridge x bytes_per_param / 2 (facts/hardware.md).

    Raises:
        TypeError / ValueError: batch not an integer >= 1, bytes_per_param <= 0.
    """
    b = _arg("batch", batch, array=True)
    return 2.0 * b / _check("bytes_per_param", bytes_per_param, "파라미터당 바이트", strict=True)


def ridge_point(hardware: Hardware | str, dtype: str = "bf16") -> float:
    """Peak FLOP/s / bandwidth, FLOP/byte; below it a kernel is memory-bound. H100 BF16: 295;
    H200: 206 (facts/hardware.md). Raises ValueError: unknown hardware or format."""
    return get_hardware(hardware).ridge_point(dtype)


def chips_needed(model: ModelProfile, hardware: Hardware | str, context_tokens=0, batch=1) -> int:
    """Chips of ``hardware`` it takes to HOLD weights + KV cache: ceil(bytes / memory).
    Llama-3-70B FP8 on 500 MB Groq 3 LPUs: 142; on 80 GB H100s: 1 (facts/hardware.md memory figures).

    Raises:
        ValueError: unknown memory (e.g. not reported by the OS), context < 0, batch < 1.
    """
    hw = get_hardware(hardware)
    if hw.memory_bytes is None:
        raise fail("hardware", hw.name, "메모리 용량(memory_bytes)을 알아야 합니다", "용량이 있는 프로필")
    s = _arg("context_tokens", context_tokens)
    b = _arg("batch", batch)
    return int(math.ceil(_decode(model, hw, s, b).bytes / hw.memory_bytes))


# ============================================================================================
# disaggregated serving and the layer split


def kv_transfer_ms(model: ModelProfile, tokens, link: Link | str):
    """Time to send ``tokens`` tokens' KV cache over ``link``, ms: S kv / BW + latency. Llama-3-70B
    BF16 KV, 8k tokens (2.68 GB): 5.97 ms over NVLink, 53.7 ms over one 400 Gb/s NIC
    (facts/hardware.md "KV transfer"); real systems overlap it with the prefill, layer by layer.
    ``tokens``: number or array (>= 0); result shaped alike.

    Raises:
        TypeError / ValueError: a bad token count; an unknown link name.
    """
    lk, s = get_link(link), _check("tokens", tokens, "전송할 토큰 수", array=True)
    return _out(s * kv_bytes_per_token(model) / lk.bandwidth * 1e3 + lk.latency_ms)


@dataclass(frozen=True)
class DisaggregatedResult:
    """Prefill on one device, decode on another (ms): prefill, transfer, ttft = prefill +
    transfer, tpot, e2e = ttft + (n - 1) tpot, colocated_e2e_ms = both phases on the prefill device."""

    prefill_ms: float
    transfer_ms: float
    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    colocated_e2e_ms: float


def disaggregated(model: ModelProfile, prefill_hardware: Hardware | str, decode_hardware: Hardware | str,
                  link: Link | str, prompt_tokens: int, output_tokens: int, *, mfu: float = 1.0,
                  prefill_chips: int = 1, decode_chips: int = 1) -> DisaggregatedResult:
    """One request served disaggregated: prefill on one device, its KV cache sent, decode on
    another (DistServe, OSDI'24; Splitwise, ISCA'24). For ONE request it only adds the transfer
    to TTFT; the gains reported for many requests measure different things (facts/hardware.md
    "Disaggregated serving results"): Splitwise 1.4x throughput at 20% lower cost, DistServe up
    to 7.4x goodput (requests within the latency target), while vLLM's docs say its
    disaggregated prefill tunes TTFT and ITL separately and "does not improve throughput", and
    name chunked prefill as the alternative against ITL spikes.

    ``mfu``: prefill efficiency in (0, 1] (decode ideal). ``prefill_chips`` / ``decode_chips``:
    integers >= 1. Returns a :class:`DisaggregatedResult` (ms).

    Raises:
        TypeError / ValueError: a bad count, rate or name (each named).
    """
    pre_hw, dec_hw = get_hardware(prefill_hardware), get_hardware(decode_hardware)
    mfu = _arg("mfu", mfu)
    pc = _check("prefill_chips", prefill_chips, "프리필 칩 수", low=1, integer=True)
    dc = _check("decode_chips", decode_chips, "디코드 칩 수", low=1, integer=True)
    s = _arg("prompt_tokens", prompt_tokens)
    n = _arg("output_tokens", output_tokens)
    pre = float(_prefill(model, pre_hw, float(s), 0.0, pc, mfu).ms)
    xfer = kv_transfer_ms(model, s, link)
    tpot, colo = _tpot(model, dec_hw, s, n, n_chips=dc), _tpot(model, pre_hw, s, n, n_chips=pc)
    return DisaggregatedResult(pre, xfer, pre + xfer, tpot, pre + xfer + (n - 1) * tpot, pre + (n - 1) * colo)


def layer_split_decode_ms(model: ModelProfile, gpu: Hardware | str = "Rubin", lpu: Hardware | str = "Groq3-LPX",
                          context_tokens=8192, batch: int = 1, *, hop_ms: float = 0.0,
                          lpu_parallel: str = "pipeline") -> dict:
    """One decode step split by layer type, as NVIDIA described Rubin + Groq 3 LPX: the GPU keeps
    the KV cache and runs decode attention, the LPUs run the weight-heavy layers; layer by layer
    their times add, plus ``2 L hop_ms`` of crossings (facts/hardware.md "The NVIDIA + Groq 3 LPX
    configuration": Ian Buck; a teaching simplification). Both halves are the :func:`roofline`'s
    KV and weight parts of one decode step.

    ``lpu_parallel``: ``"pipeline"`` (each chip holds whole layers: weights / ONE chip's
    bandwidth, 0.45 ms for Llama-3-70B FP8 on the LPX rack) or ``"ideal"`` (every chip on every
    layer, zero communication: weights / rack bandwidth, an unreachable bound). ``hop_ms``: no
    published figure (0). ``context_tokens``: number or array.

    Returns:
        dict: gpu_attention_ms, lpu_weights_ms, hops_ms, total_ms (ms), lpu_fits (None if unknown).

    Raises:
        TypeError / ValueError: negative context or hop_ms, batch < 1, an unknown lpu_parallel.
    """
    g, l = get_hardware(gpu), get_hardware(lpu)
    s = _arg("context_tokens", context_tokens, array=True)
    b = _arg("batch", batch)
    hops = 2 * model.n_layers * _check("hop_ms", hop_ms, "칩 사이를 한 번 건너는 시간(ms)")
    if lpu_parallel not in ("pipeline", "ideal"):
        raise fail("lpu_parallel", lpu_parallel, "LPU가 가중치를 나누는 방식을 골라야 합니다", "pipeline, ideal")
    share = l.n_chips if lpu_parallel == "pipeline" else 1
    r = _decode(model, None, s, b)  # the step's FLOPs and bytes, split into its KV and weight parts
    gpu_ms = np.maximum(r.kv_bytes / g.bandwidth, r.attention_flops / g.flops_for(model.kv_dtype)) * 1e3
    lpu_ms = np.maximum(model.weight_bytes / (l.bandwidth / share), r.weight_flops / (l.flops_for(model.dtype) / share)) * 1e3
    return {"gpu_attention_ms": _out(gpu_ms), "lpu_weights_ms": _out(lpu_ms),
            "hops_ms": hops, "total_ms": _out(gpu_ms + lpu_ms + hops),
            "lpu_fits": None if l.memory_bytes is None else bool(model.weight_bytes <= l.memory_bytes)}


# ============================================================================================
# speculative decoding (Leviathan et al. 2023; facts/speculative.md)


def _spec_args(alpha, gamma, c=0.0, array=True):
    return (_check("alpha", alpha, "토큰 하나의 수락 확률(alpha)", high=1, array=array),
            check_gamma(gamma, array=True),
            _check("c", c, "초안/대상 한 스텝 시간 비(c)", array=array))


def _tokens_per_call(a, g):
    a, g = np.asarray(a), np.asarray(g)
    with np.errstate(divide="ignore", invalid="ignore"):  # alpha = 1 takes the other branch
        return np.where(a >= 1, g + 1.0, (1.0 - a ** (g + 1)) / (1.0 - a))


def expected_tokens_per_call(alpha, gamma):
    """Expected tokens per target forward pass, (1 - alpha^(gamma+1)) / (1 - alpha) (gamma + 1 at
    alpha = 1): Leviathan et al. 2023, Eq. 1, with each draft token accepted independently with
    probability alpha. alpha 0.75, gamma 7: 3.60. Numbers or arrays (broadcast).

    Raises:
        TypeError / ValueError: alpha outside [0, 1], gamma not an integer >= 1.
    """
    return _out(_tokens_per_call(*_spec_args(alpha, gamma)[:2]))


def expected_speedup(alpha, gamma, c, *, verify_cost: float = 1.0):
    """Expected wall-time speed-up over target-only decoding (Leviathan et al. 2023, Thm 3.8):
    :func:`expected_tokens_per_call` / (gamma c + verify_cost), ``c`` = draft step / target step
    (>= 0), ``verify_cost`` = one verification in target steps (> 0; the paper's 1: memory-bound
    decode; above 1 on a CPU). alpha 0.75, gamma 7, c 0.02: 3.16 (the paper: predicted 3.2x,
    measured 3.4x). TPOT divides by it; TTFT does not change. Numbers or arrays.

    Raises:
        TypeError / ValueError: alpha outside [0, 1], gamma not an integer >= 1, c < 0, verify_cost <= 0.
    """
    a, g, c = _spec_args(alpha, gamma, c)
    v = _check("verify_cost", verify_cost, "검증 한 번의 비용(대상 모델 한 스텝 단위)", strict=True)
    return _out(_tokens_per_call(a, g) / (g * c + v))


def optimal_gamma(alpha: float, c: float, max_gamma: int = 16) -> int:
    """The gamma in 1..max_gamma with the largest :func:`expected_speedup` (ties: the smaller).

    Raises:
        TypeError / ValueError: alpha outside [0, 1], c < 0, max_gamma not an integer >= 1.
    """
    a, _, c = _spec_args(alpha, 1, c, array=False)
    g = np.arange(1, _check("max_gamma", max_gamma, "살펴볼 최대 초안 토큰 수", low=1, integer=True) + 1)
    return int(g[np.argmax(_tokens_per_call(a, g) / (g * c + 1.0))])


@dataclass(frozen=True)
class SpeculativeConfig:
    """Speculative decoding for the latency model: alpha in [0, 1], gamma (integer >= 1), c >= 0
    (Leviathan et al.: alpha 0.75, gamma 7, c ~0.02 for T5-small drafting for T5-XXL)."""

    alpha: float = 0.75
    gamma: int = 5
    c: float = 0.02

    def __post_init__(self) -> None:
        self.speedup  # validates

    @property
    def speedup(self) -> float:
        """:func:`expected_speedup` of these settings."""
        return expected_speedup(self.alpha, self.gamma, self.c)


# ============================================================================================
# the agent loop


def _schedule(depth, init, growth, prefix_caching):
    """The checked depth and, per call (shape (depth,)): context at its start, tokens it
    prefills, tokens already cached. Shared by :func:`agent_rates` and :func:`agent_loop`."""
    depth = _check("depth", depth, "에이전트 루프 깊이(모델 호출 수)", integer=True)
    init = _check("initial_context_tokens", init, "처음 맥락 토큰 수", integer=True)
    growth = _check("context_growth_per_call", growth, "호출당 맥락 증가 토큰 수", integer=True)
    i = np.arange(depth, dtype=float)
    ctx = init + i * growth
    new = np.where(i == 0, float(init), float(growth)) if prefix_caching else ctx.copy()
    return depth, ctx, new, ctx - new


@dataclass(frozen=True)
class AgentRates:
    """Per-call speeds for :func:`agent_loop`, shape (depth,): decode_ms_per_token (TPOT, ms),
    prefill_tokens_per_s (inf for a call with nothing to prefill), transfer_ms_per_call (ms)."""

    decode_ms_per_token: np.ndarray
    prefill_tokens_per_s: np.ndarray
    transfer_ms_per_call: np.ndarray

    @property
    def kwargs(self) -> dict:
        """The three rates as keyword arguments of :func:`agent_loop`."""
        return dict(vars(self))


def agent_rates(model: ModelProfile, hardware: Hardware | str, depth: int, output_tokens_per_call: int, *,
                initial_context_tokens: int = 0, context_growth_per_call: int = 0, prefix_caching: bool = True,
                decode_hardware: Hardware | str | None = None, link: Link | str | None = None,
                mfu: float = 1.0) -> AgentRates:
    """The roofline speeds of each call of an agent loop (pass the same depth, tokens and context
    schedule to :func:`agent_loop`, e.g. ``agent_loop(d, n, tool, **rates.kwargs, ...)``).

    Call i prefills its new tokens on ``hardware`` (:func:`estimate_prefill_ms` after the cached
    prefix, efficiency ``mfu``), decodes on ``decode_hardware`` (default ``hardware``) at TPOT =
    :func:`estimate_tpot_ms` from its context, and, with ``link``, sends the prefilled KV
    (:func:`kv_transfer_ms`).

    Returns:
        :class:`AgentRates` (arrays of shape (depth,)).

    Raises:
        TypeError / ValueError: a bad count or rate, an unknown hardware or link name.
    """
    hw = get_hardware(hardware)
    dec_hw = hw if decode_hardware is None else get_hardware(decode_hardware)
    mfu = _arg("mfu", mfu)
    n = _arg("output_tokens_per_call", output_tokens_per_call)
    depth, ctx, new, past = _schedule(depth, initial_context_tokens, context_growth_per_call, prefix_caching)
    prefill_rate = np.where(new > 0, new / _prefill(model, hw, new, past, 1, mfu).ms * 1e3, np.inf)
    lk = None if link is None else get_link(link)
    xfer = np.zeros(depth) if lk is None else np.where(
        new > 0, new * kv_bytes_per_token(model) / lk.bandwidth * 1e3 + lk.latency_ms, 0.0)
    tpot = np.asarray(_tpot(model, dec_hw, ctx, n), dtype=float).reshape(depth)
    return AgentRates(tpot, prefill_rate, xfer)


@dataclass(frozen=True)
class AgentLoopResult:
    """Per-call breakdown of an agent loop: arrays of shape (depth,), ms; context_tokens at each
    call's start, prefill_tokens prefilled by it, output_tokens per call, tpot_ms after any
    speculative speed-up."""

    prefill_ms: np.ndarray
    decode_ms: np.ndarray
    tool_ms: np.ndarray
    transfer_ms: np.ndarray
    context_tokens: np.ndarray
    prefill_tokens: np.ndarray
    output_tokens: int
    tpot_ms: np.ndarray

    depth = property(lambda self: int(self.prefill_ms.shape[0]), doc="Number of model calls.")
    call_ms = property(lambda self: self.prefill_ms + self.transfer_ms + self.decode_ms + self.tool_ms,
                       doc="prefill + transfer + decode + tool of each call, ms, shape (depth,).")
    total_ms = property(lambda self: self.totals["total"], doc="Whole task, ms.")
    total_s = property(lambda self: self.totals["total"] / 1e3, doc="Whole task, s.")

    @property
    def totals(self) -> dict[str, float]:
        """Sums over calls, ms: prefill, transfer, decode, tool, total."""
        t = {k: float(getattr(self, f"{k}_ms").sum()) for k in ("prefill", "transfer", "decode", "tool")}
        return {**t, "total": sum(t.values())}


def agent_loop(depth: int, output_tokens_per_call: int, tool_ms_per_call, *, decode_ms_per_token=None,
               prefill_tokens_per_s=None, transfer_ms_per_call=0.0, initial_context_tokens: int = 0,
               context_growth_per_call: int = 0, prefix_caching: bool = True,
               speculative: SpeculativeConfig | None = None) -> AgentLoopResult:
    """An agent loop: ``depth`` times [prefill the new context, decode an answer, run a tool].

    Call i starts with ``initial + i x growth`` context tokens and prefills the new ones (with
    ``prefix_caching`` the initial prompt, then ``growth`` per call; without, the whole context).
    Of its n = ``output_tokens_per_call`` tokens the prefill pass yields the first and each other
    costs one TPOT (E2E = TTFT + (n - 1) TPOT, facts/hardware.md "Serving metrics"); then the tool
    runs. facts/hardware.md "Agent loops": 50 calls x 300 tokens + 2 s tool: 399 s at 50 tokens/s,
    115 s at 1,000 (the facts file's 400 s counts 300 decode steps per call).

    Args:
        depth: model calls, integer >= 0. output_tokens_per_call: n, integer >= 1.
        tool_ms_per_call, decode_ms_per_token (TPOT), transfer_ms_per_call: ms, >= 0;
            prefill_tokens_per_s: > 0 (inf allowed). Each a number or an array of shape (depth,)
            (one per call, e.g. from :func:`agent_rates`).
        initial_context_tokens, context_growth_per_call: integers >= 0 (no sourced default).
        speculative: :class:`SpeculativeConfig`; TPOT is divided by its speed-up.

    Returns:
        :class:`AgentLoopResult` (arrays of shape (depth,), ms).

    Raises:
        TypeError: a missing rate, a non-number. ValueError: a bad value or shape.
    """
    for name, v in (("decode_ms_per_token", decode_ms_per_token), ("prefill_tokens_per_s", prefill_tokens_per_s)):
        if v is None:
            raise fail(name, None, "속도가 있어야 합니다", "수 또는 호출별 배열; 하드웨어에서 구하려면 agent_rates", TypeError)
    n = _arg("output_tokens_per_call", output_tokens_per_call)
    depth, ctx, new, _ = _schedule(depth, initial_context_tokens, context_growth_per_call, prefix_caching)

    def per_call(name, value, what, **kw):
        v = _check(name, value, what, array=True, **kw)
        try:
            return np.broadcast_to(np.asarray(v, dtype=float), (depth,))
        except ValueError:
            raise fail(name, v, f"{what}의 모양이 호출 수와 맞지 않습니다", f"수 하나 또는 모양 ({depth},)",
                       shape=True) from None

    tool = per_call("tool_ms_per_call", tool_ms_per_call, "호출당 도구 지연(ms)")
    tpot = per_call("decode_ms_per_token", decode_ms_per_token, "토큰당 디코드 지연(ms)")
    rate = per_call("prefill_tokens_per_s", prefill_tokens_per_s, "프리필 처리량(tokens/s)", strict=True, inf=True)
    xfer = per_call("transfer_ms_per_call", transfer_ms_per_call, "호출당 KV 전송 시간(ms)")
    if speculative is not None:
        tpot = tpot / speculative.speedup
    return AgentLoopResult(new / rate * 1e3, (n - 1) * tpot, tool.copy(), xfer.copy(), ctx, new, n, tpot.copy())


# ============================================================================================
# Amdahl


def amdahl_speedup(fraction, factor):
    """Whole-task speed-up when a part taking ``fraction`` of the time gets ``factor`` x faster:
    1 / ((1 - f) + f / s) (Amdahl, AFIPS 1967); ``factor`` = inf gives the ceiling 1 / (1 - f)
    (decode = 75% of a task: at most 4x). Numbers or arrays.

    Raises:
        TypeError / ValueError: fraction outside [0, 1], factor <= 0.
    """
    f = _check("fraction", fraction, "빨라지는 부분의 비율(fraction)", high=1, array=True)
    return _out(1.0 / ((1.0 - f) + f / _check("factor", factor, "빨라지는 배수(factor)", strict=True,
                                                               inf=True, array=True)))
