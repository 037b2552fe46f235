"""Decode is memory-bound, measured on this computer with a model of real size.

The bundled target's weights (about 35 MB) fit in a CPU's last-level cache and its step time is
mostly per-pass overhead, so it cannot show what bounds a real model's decode step. This module
builds a Llama-shaped model of real size with random weights and measures it:

* :func:`random_model` — a ``LlamaForCausalLM`` built from a ``LlamaConfig`` (:data:`SIZES`, or
  any config), seeded random weights, nothing downloaded; refused, with a Korean message naming
  a size that fits, when its weights would not fit in the memory available now
  (:func:`available_memory`: the machine's free memory or, when smaller, what this process's
  cgroup still allows, :func:`cgroup_memory`; :func:`memory_needed`);
* :func:`fitting_size` — the largest size that fits now, with a Korean line saying which and why
  (what the notebooks use, so that a kernel in a container with a memory limit is not killed);
* :func:`read_bandwidth` — the probe: bytes/s of summing a buffer many times the last-level cache;
* :func:`time_passes` — median ms of one forward pass of k new tokens after a short cached
  context (plain transformers with a ``DynamicCache``, cropped back after each pass): k = 1 is a
  decode step, k > 1 is what verifying k - 1 draft tokens costs;
* :func:`peak_flops` — FLOP/s of a square matmul in a dtype (for the ridge point);
* :func:`bf16_support` — whether this CPU has bfloat16 instructions (AVX512_BF16, AMX, Arm BF16);
* :func:`measure_memory_bound` — all of the above for fp32 and bf16: a :class:`MemoryBoundResult`
  with the achieved weight-read bandwidth, its fraction of the probe, step time against k, and
  the ridge point.

Weights read per step: every parameter once (the embedding matrix is tied to the output layer,
so the output layer's read of it counts it; the input lookup reads k of its rows again, left
out). KV cache and activations are left out of the byte count: with the default 16-token
context they are under 0.1% of the weights (:attr:`MemoryBoundResult.kv_bytes`).

Timings are medians after warm-up, "measured on this computer"; on a shared machine they vary
(~30%): compare numbers from one run only.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ._check import check as _check, fail
from ._torch import threads

__all__ = ["SIZES", "DEFAULT_SIZE", "DTYPES", "KS", "llama_config", "parameter_count", "weight_bytes",
           "memory_needed", "available_memory", "cgroup_memory", "fitting_size", "random_model", "bf16_support", "Bf16Support",
           "read_bandwidth", "peak_flops", "time_passes", "MemoryBoundResult", "measure_memory_bound",
           "pass_time_figure"]

#: Llama-shaped sizes: ``LlamaConfig`` arguments (GQA with 4 KV heads of 64, vocabulary 32,000,
#: embeddings tied to the output layer). Parameters (:func:`parameter_count`): "1b" 946 M, "400m" 418 M,
#: "100m" 123 M, "tiny" 2.0 M (for tests: it fits in a cache, so it shows overhead, not memory).
SIZES: dict[str, dict] = {
    "1b": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=20, num_attention_heads=32,
               num_key_value_heads=4, vocab_size=32000),
    "400m": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8, num_attention_heads=32,
                 num_key_value_heads=4, vocab_size=32000),
    "100m": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                 num_key_value_heads=4, vocab_size=32000),
    "tiny": dict(hidden_size=256, intermediate_size=704, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=2048),
}
DEFAULT_SIZE = "400m"
#: the dtypes measured, and their bytes per parameter
DTYPES = {"fp32": 4, "bf16": 2}
#: tokens per pass measured by default
KS = (1, 2, 4, 8, 16, 32, 64)
#: share of the machine's available memory a model may take (the rest: the notebook, the browser, other programs)
MEMORY_SHARE = 0.6
#: share of what a cgroup's limit still allows (a container's or a server's limit for this student: the
#: browser and other users are outside it; the rest is for other cells and the student's other kernels)
CGROUP_SHARE = 0.85
_EXTRA_BYTES = 256 * 2**20  # activations, KV cache, the probe's buffer, torch's own


def _torch_dtype(dtype: str):
    import torch

    if dtype not in DTYPES:
        raise fail("dtype", dtype, "지원하지 않는 정밀도입니다", ", ".join(repr(d) for d in DTYPES))
    return {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]


def llama_config(size: str = DEFAULT_SIZE):
    """The ``transformers.LlamaConfig`` of a named size (:data:`SIZES`), tied embeddings,
    head size 64, 2,048 positions.

    Raises:
        ValueError: ``size`` not a key of :data:`SIZES` (Korean message listing them).
    """
    from transformers import LlamaConfig

    if not isinstance(size, str) or size not in SIZES:
        raise fail("size", size, "알 수 없는 모델 크기입니다", ", ".join(repr(s) for s in SIZES))
    return LlamaConfig(**SIZES[size], head_dim=64, max_position_embeddings=2048, tie_word_embeddings=True,
                       bos_token_id=0, eos_token_id=1, pad_token_id=2)


def parameter_count(config) -> int:
    """Parameters of a Llama-shaped model, by hand from its config: embeddings V h (tied: counted
    once) + per layer [q and o: 2 h (H d), k and v: 2 h (Hkv d), MLP: 3 h i, two RMSNorms: 2 h]
    + final norm h, with V vocabulary, h hidden size, i intermediate size, H heads, Hkv KV heads,
    d head size. An untied output layer adds V h."""
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    d = getattr(config, "head_dim", None) or h // config.num_attention_heads
    q, kv = config.num_attention_heads * d, config.num_key_value_heads * d
    per_layer = 2 * h * q + 2 * h * kv + 3 * h * i + 2 * h
    tied = getattr(config, "tie_word_embeddings", False)
    return config.vocab_size * h * (1 if tied else 2) + n * per_layer + h


def weight_bytes(model) -> int:
    """Bytes of a model's parameters as stored now (each tensor once, tied ones once): what one
    decode step reads."""
    return sum(p.numel() * p.element_size() for p in model.parameters())  # parameters() lists a tied tensor once


def memory_needed(size_or_config=DEFAULT_SIZE, dtype: str = "fp32") -> int:
    """Bytes that :func:`random_model` needs: the weights in ``dtype`` plus 256 MiB (activations,
    KV cache, the probe's buffer). ``size_or_config``: a key of :data:`SIZES` or a Llama config."""
    config = llama_config(size_or_config) if isinstance(size_or_config, str) else size_or_config
    return parameter_count(config) * DTYPES[dtype if dtype in DTYPES else "fp32"] + _EXTRA_BYTES


_NO_LIMIT = 2**60  # cgroup v1 writes "no limit" as a page-rounded 2^63 - 1


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _NO_LIMIT else value


def _inactive_file(folder: Path) -> int:
    """Reclaimable page cache of a cgroup (``memory.stat``'s ``inactive_file``; v1 hierarchical
    ``total_inactive_file`` first): the kernel drops it before it kills a program, so it is left
    out of the usage (as the kubelet's "working set" does)."""
    try:
        stat = dict(line.split()[:2] for line in (folder / "memory.stat").read_text().splitlines() if len(line.split()) >= 2)
    except (OSError, ValueError):
        return 0
    for key in ("total_inactive_file", "inactive_file"):
        if key in stat and stat[key].isdigit():
            return int(stat[key])
    return 0


def cgroup_memory(root: str | Path = "/sys/fs/cgroup", proc_cgroup: str | Path = "/proc/self/cgroup") -> tuple[int | None, str]:
    """Memory this process's control group (cgroup) still allows, in bytes, and which file says so
    (Korean); ``(None, why)`` without a memory limit.

    A container (a Kubernetes pod's ``resources.limits.memory``, JupyterHub's ``memory.limit``) or a
    systemd/cgroup limit on one server kills a program that goes over its limit, whatever
    ``/proc/meminfo`` says about the whole machine. For the process's cgroup and each parent up
    to ``root`` (the smallest wins):

    * cgroup v2: ``memory.max`` − (``memory.current`` − ``inactive_file`` of ``memory.stat``);
      ``max`` means no limit;
    * cgroup v1: ``memory/memory.limit_in_bytes`` − (``memory.usage_in_bytes`` −
      ``total_inactive_file``); a value of 2^60 or more means no limit.

    The process's cgroup path comes from ``proc_cgroup`` (``0::/path`` for v2, ``N:memory:/path``
    for v1); when that folder is not under ``root`` (a container with its own cgroup namespace
    sees its cgroup as the root) the folder ``root`` itself is read. Both paths are parameters so
    that tests can pass fake files. Never raises: unreadable files count as no limit.
    """
    root = Path(root)
    paths = {"v2": "/", "v1": "/"}
    try:
        for line in Path(proc_cgroup).read_text().splitlines():
            num, ctrls, path = line.split(":", 2)
            if num == "0" and ctrls == "":
                paths["v2"] = path
            elif "memory" in ctrls.split(","):
                paths["v1"] = path
    except (OSError, ValueError):
        pass
    best: tuple[int | None, str] = (None, "cgroup 메모리 한도 없음")
    for version, base, limit_name, usage_name in (("v2", root, "memory.max", "memory.current"),
                                                  ("v1", root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes")):
        folder = base / paths[version].strip("/")
        if not folder.is_dir():
            folder = base
        chain = [folder, *[p for p in folder.parents if p == base or base in p.parents]] if folder != base else [base]
        for f in chain:
            limit = _read_int(f / limit_name)
            if limit is None:
                continue
            usage = _read_int(f / usage_name) or 0
            left = max(0, limit - max(0, usage - _inactive_file(f)))
            if best[0] is None or left < best[0]:
                best = (left, f"cgroup {version} 메모리 한도 {limit / 2**30:.2f} GiB 중 남은 몫 ({f / limit_name})")
    return best


def available_memory(meminfo: str | Path = "/proc/meminfo", *, cgroup_root: str | Path = "/sys/fs/cgroup",
                     proc_cgroup: str | Path = "/proc/self/cgroup") -> tuple[int | None, str]:
    """Memory available to a new program now, in bytes, and where that came from (Korean).

    The smaller of what the machine has free and what this process's cgroup still allows
    (:func:`cgroup_memory`: a container's or a server's memory limit). The machine: on Linux
    ``MemAvailable`` of ``meminfo``; elsewhere psutil's ``virtual_memory().available`` when psutil
    is installed, else ``os.sysconf`` free pages. ``(None, why)`` when none of them answers.
    ``meminfo``, ``cgroup_root`` and ``proc_cgroup`` are parameters so that tests can pass fake files.
    """
    machine: tuple[int | None, str] = (None, "사용 가능 메모리를 알 수 없음 (확인하지 않고 만듭니다)")
    try:
        for line in Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                machine = int(line.split()[1]) * 1024, f"운영체제가 알려 준 사용 가능 메모리 ({meminfo})"
                break
    except (OSError, ValueError, IndexError):
        pass
    if machine[0] is None:
        try:
            import psutil

            machine = int(psutil.virtual_memory().available), "psutil이 알려 준 사용 가능 메모리"
        except Exception:  # not installed, or no answer on this system
            try:
                machine = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "os.sysconf의 빈 페이지 수"
            except (ValueError, OSError, AttributeError):
                pass
    group = cgroup_memory(cgroup_root, proc_cgroup)
    if group[0] is not None and (machine[0] is None or group[0] < machine[0]):
        return group
    return machine


def _share(where: str) -> float:
    """:data:`CGROUP_SHARE` when :func:`available_memory`'s figure is a cgroup's, else :data:`MEMORY_SHARE`."""
    return CGROUP_SHARE if where.startswith("cgroup") else MEMORY_SHARE


def _fits(size: str, dtype: str, available: int, share: float = MEMORY_SHARE) -> bool:
    return memory_needed(size, dtype) <= share * available


def fitting_size(largest: str = DEFAULT_SIZE, *, dtype: str = "fp32") -> tuple[str, str]:
    """The largest size of :data:`SIZES`, no larger than ``largest``, whose :func:`random_model`
    fits in :data:`MEMORY_SHARE` of :func:`available_memory` now (:data:`CGROUP_SHARE` when a
    container's or a server's cgroup limit is what bounds it),
    and one Korean line saying which size is used and why (for a notebook to print).

    Args:
        largest: a key of :data:`SIZES`: the size wanted when memory allows.
        dtype: the dtype the model is built in ("fp32" needs twice the bytes of "bf16").

    Returns:
        ``(size, message)``; when the memory cannot be read, ``largest`` (the message says so).

    Raises:
        ValueError: unknown ``largest`` or ``dtype``. MemoryError: not even the smallest size fits
            (Korean: memory needed and available, and what to do).
    """
    llama_config(largest)
    _torch_dtype(dtype)
    avail, where = available_memory()
    gib = lambda b: f"{b / 2**30:.2f} GiB"  # noqa: E731
    if avail is None:
        return largest, f"모델 크기 '{largest}': {where}"
    by_size = sorted(SIZES, key=lambda s: parameter_count(llama_config(s)), reverse=True)
    allowed = by_size[by_size.index(largest):]
    share = _share(where)
    size = next((s for s in allowed if _fits(s, dtype, avail, share)), None)
    budget = f"쓸 수 있는 메모리 {gib(avail)}의 {share:.0%} = {gib(share * avail)}; {where}"
    if size is None:
        raise MemoryError(f"가장 작은 모델('{allowed[-1]}', {dtype})도 메모리 {gib(memory_needed(allowed[-1], dtype))}가 필요해 "
                          f"들어가지 않습니다({budget}). 다른 노트북의 커널을 끄거나(Kernel → Shut Down Kernel) "
                          "다른 프로그램을 닫은 뒤 다시 실행하세요.")
    params = f"매개변수 {parameter_count(llama_config(size)) / 1e6:,.0f}M개"
    if size == largest:
        return size, (f"모델 크기 '{size}'({params})를 씁니다: {dtype}로 {gib(memory_needed(size, dtype))}가 필요하고 "
                      f"들어갑니다({budget}).")
    message = (f"메모리가 모자라 '{largest}' 대신 '{size}'({params})를 씁니다: '{largest}'는 {dtype}로 "
               f"{gib(memory_needed(largest, dtype))}가 필요한데 {budget}. 커널이 메모리 한도를 넘어 죽지 않도록 "
               "들어가는 가장 큰 크기를 골랐습니다.")
    if size == by_size[-1]:
        message += (f" '{size}'는 가중치가 CPU 캐시에 들어가는 시험용 크기라, 디코드가 메모리 한계라는 것은 보여 주지 못합니다"
                    "(시간의 대부분이 부대 비용). 메모리가 더 큰 컴퓨터에서 다시 돌려 보세요.")
    return size, message


def random_model(size=DEFAULT_SIZE, *, dtype: str = "fp32", seed: int = 0, check_memory: bool = True):
    """A Llama-shaped causal LM of a named size (or of a given ``LlamaConfig``) with seeded random
    weights, in evaluation mode, on CPU.

    Built from :func:`llama_config` or the config given (nothing is downloaded), directly in
    ``dtype``. The layers are created without transformers' initialisation, then each weight matrix is filled from one seeded block of
    2^20 normal values (standard deviation 0.02, as Llama's ``initializer_range``) read at a
    random offset, and each RMSNorm weight is set to 1: fast (a few seconds for "400m"), and the
    time of a forward pass depends only on the shapes and dtype, not on what the values are.

    Args:
        size: a key of :data:`SIZES` (default "400m": 418 M parameters, 1.67 GB in fp32), or a
            transformers config of any causal LM (e.g. the course target's ``model.config``, Llama,
            Qwen2...: the same shape with random weights; 1-D weights, norms and biases, set to 1).
        dtype: "fp32" or "bf16".
        seed: the random block's seed (same seed, same weights).
        check_memory: compare :func:`memory_needed` with :data:`MEMORY_SHARE` (a cgroup's:
            :data:`CGROUP_SHARE`) of
            :func:`available_memory` first (default True).

    Returns:
        the causal LM (``transformers.LlamaForCausalLM`` for a named size).

    Raises:
        ValueError: unknown ``size`` (neither a key of :data:`SIZES` nor a transformers config) or
            ``dtype``. TypeError / ValueError: ``seed`` not an integer >= 0. MemoryError: the model would not fit; the Korean message gives the
            memory needed and available and names the largest size that fits (or says to close
            other programs when none does).
    """
    import torch
    from transformers import AutoModelForCausalLM, PretrainedConfig
    from transformers.initialization import no_init_weights

    if isinstance(size, PretrainedConfig):  # e.g. the course's target, whichever architecture it has
        config, size = type(size).from_dict(size.to_dict()), "config"
    else:
        config = llama_config(size)
    tdtype = _torch_dtype(dtype)
    seed = _check("seed", seed, "시드", integer=True)
    if check_memory:
        avail, where = available_memory()
        share = _share(where)
        if avail is not None and memory_needed(config, dtype) > share * avail:
            smaller = [s for s in SIZES if _fits(s, dtype, avail, share)]
            options = []
            if smaller:
                options.append(f"size={smaller[0]!r}(매개변수 {parameter_count(llama_config(smaller[0])) / 1e6:.0f}M개)로 줄이세요")
            if dtype == "fp32" and memory_needed(config, "bf16") <= share * avail:
                options.append("dtype='bf16'으로 바꾸면 같은 크기가 들어갑니다")
            advice = " 또는 ".join(options) if options else "다른 프로그램을 닫아 메모리를 비운 뒤 다시 실행하세요"
            raise MemoryError(
                f"size={size!r}, dtype={dtype!r}: 이 모델에는 메모리 {memory_needed(config, dtype) / 2**30:.1f} GiB가 필요한데, "
                f"지금 쓸 수 있는 메모리는 {avail / 2**30:.1f} GiB이고 그중 {share:.0%}까지만 씁니다 ({where}). "
                f"{advice}. (허용: {', '.join(repr(s) for s in SIZES)})")
    old_default = torch.get_default_dtype()
    torch.set_default_dtype(tdtype)  # built in its dtype: memory holds one copy of the weights
    try:
        with no_init_weights():
            model = AutoModelForCausalLM.from_config(config)
    finally:
        torch.set_default_dtype(old_default)
    model.tie_weights()
    gen = torch.Generator().manual_seed(seed)
    block = torch.randn(2**20, generator=gen) * 0.02
    with torch.no_grad():
        for p in model.parameters():  # a tied tensor once
            if p.dim() == 1:
                p.fill_(1.0)
                continue
            flat, n, at = p.view(-1), p.numel(), 0
            start = int(torch.randint(0, block.numel(), (1,), generator=gen))
            while at < n:
                take = min(n - at, block.numel() - start)
                flat[at:at + take].copy_(block[start:start + take])
                at, start = at + take, 0
    return model.to(tdtype).eval()


@dataclass(frozen=True)
class Bf16Support:
    """Whether this CPU multiplies bfloat16 in hardware, and what decides it.

    Attributes:
        fast: True when the CPU has a bfloat16 dot-product instruction that PyTorch's oneDNN
            kernels use (x86: AVX512_BF16 or AMX_BF16; Arm: BF16). Without one, bf16 matmuls
            convert to fp32 on the way and may be slower than fp32 itself, though each weight
            still takes half the bytes to read.
        flags: the deciding flags found (e.g. ``["avx512_bf16"]``), lower case.
        capability: ``torch.backends.cpu.get_cpu_capability()`` (e.g. "AVX512"), or "".
        onednn: ``torch.backends.mkldnn.is_available()``.
        source: where the flags came from (Korean).
    """

    fast: bool
    flags: list[str]
    capability: str
    onednn: bool
    source: str

    def describe(self) -> str:
        """One Korean line for a notebook or the benchmark."""
        have = ", ".join(self.flags) if self.flags else "없음"
        verdict = ("bf16 곱셈을 하드웨어로 합니다" if self.fast else
                   "bf16 전용 명령어가 없어, bf16 행렬 곱도 fp32로 바꿔 계산합니다(읽는 바이트는 절반)")
        return (f"bf16 명령어(AVX512_BF16, AMX_BF16, Arm BF16): {have} → {verdict} "
                f"[PyTorch CPU 커널 수준 {self.capability or '알 수 없음'}, oneDNN {'있음' if self.onednn else '없음'}; {self.source}]")


_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def bf16_support(cpuinfo: str | Path = "/proc/cpuinfo") -> Bf16Support:
    """Read this CPU's bfloat16 flags (Linux ``cpuinfo``'s "flags"/"Features" line; macOS
    ``sysctl hw.optional.arm.FEAT_BF16``) and torch's CPU capability.

    Args:
        cpuinfo: the file to read (a parameter so that tests can pass a fake one).
    """
    import torch

    found: list[str] = []
    source = f"{cpuinfo}의 flags"
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            key = line.split(":", 1)[0].strip().lower()
            if key in ("flags", "features"):
                words = set(line.split(":", 1)[1].lower().split())
                found = [f for f in _BF16_FLAGS if f in words]
                break
    except OSError:
        source = "cpuinfo를 읽지 못함"
        if sys.platform == "darwin":
            import subprocess

            try:
                out = subprocess.run(["sysctl", "-n", "hw.optional.arm.FEAT_BF16"], capture_output=True,
                                     text=True, timeout=5).stdout.strip()
                found = ["bf16"] if out == "1" else []
                source = "sysctl hw.optional.arm.FEAT_BF16"
            except (OSError, subprocess.SubprocessError):
                pass
    try:
        capability = str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # older torch
        capability = ""
    return Bf16Support(bool(found), found, capability, bool(torch.backends.mkldnn.is_available()), source)


def _median_seconds(fn, repeats: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def read_bandwidth(n_bytes: int | None = None, *, repeats: int = 5, warmup: int = 1,
                   num_threads: int | None = None) -> float:
    """The read-bandwidth probe: bytes/s of ``buffer.sum()`` over an fp32 buffer (median).

    Summing reads every byte once and does one addition per 4 bytes, far below any CPU's ridge
    point, so its time is the time to read the buffer from memory.

    Args:
        n_bytes: buffer size; default 8x the last-level cache
            (:func:`decodelab.latency_measure.last_level_cache`), at least 256 MiB, so that the
            cache holds almost none of it.
        repeats, warmup: timed and untimed sums (>= 1, >= 0).
        num_threads: torch threads while timing (restored afterwards); None keeps torch's
            setting. Use the same count as the decode you compare it with.

    Returns:
        bytes per second.
    """
    import torch

    from .latency_measure import last_level_cache

    if n_bytes is None:
        n_bytes = max(8 * last_level_cache()[0], 256 * 2**20)
    n_bytes = _check("n_bytes", n_bytes, "버퍼 크기(bytes)", low=4, integer=True)
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    warmup = _check("warmup", warmup, "준비 실행 횟수", integer=True)
    buf = torch.ones(n_bytes // 4)
    with threads(num_threads, name="num_threads"):
        sec = _median_seconds(buf.sum, repeats, warmup)
    return buf.numel() * 4 / sec


def peak_flops(dtype: str = "fp32", *, n: int = 1024, repeats: int = 3, num_threads: int | None = None) -> float:
    """FLOP/s of an ``n x n`` by ``n x n`` matmul in ``dtype`` on this CPU (2 n^3 FLOP, best of
    ``repeats`` after one warm-up): the compute roof for the ridge point.

    Raises:
        ValueError: unknown dtype, n < 1, repeats < 1.
    """
    import torch

    tdtype = _torch_dtype(dtype)
    n = _check("n", n, "행렬 크기", low=1, integer=True)
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    gen = torch.Generator().manual_seed(0)
    a, b = (torch.randn(n, n, generator=gen).to(tdtype) for _ in range(2))
    with threads(num_threads, name="num_threads"), torch.inference_mode():
        torch.matmul(a, b)
        best = math.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            torch.matmul(a, b)
            best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def time_passes(model, ks: Sequence[int] = KS, *, context: int = 16, repeats: int = 5, warmup: int = 1,
                num_threads: int | None = None, seed: int = 0) -> list[float]:
    """Median ms of one forward pass of k new tokens, for each k, after ``context`` cached tokens.

    A random prompt of ``context`` tokens is prefilled into a ``transformers.DynamicCache``;
    then ``model(input_ids=(1, k), cache=cache)`` is timed and the cache cropped back to
    ``context`` tokens after each pass, so every pass sees the same context. The ks are measured
    round-robin (one pass of each k per round, ``warmup`` untimed rounds first, then ``repeats``
    timed rounds): a burst of load from another program lands on every k of a round instead of
    on one k's block, and the median of each k drops it.
    k = 1 is one decode step; k = gamma + 1 is one verification pass of speculative decoding.

    Args:
        model: a causal LM on CPU (e.g. :func:`random_model`).
        ks: tokens per pass, each an integer >= 1 with ``context + k`` within the model's positions.
        context: cached tokens before each pass (>= 1).
        repeats: timed rounds (>= 1; one pass per k each), median per k kept. warmup: untimed
            rounds before them (>= 0).
        num_threads: torch threads (restored afterwards); None keeps torch's setting.
        seed: seed of the random token ids.

    Returns:
        list of ms, one per k, measured on this computer.

    Raises:
        TypeError / ValueError: a k or context out of range, repeats < 1, warmup < 0.
    """
    import torch
    from transformers import DynamicCache

    limit = int(getattr(model.config, "max_position_embeddings", 10**9) or 10**9)
    context = _check("context", context, "맥락 토큰 수", low=1, high=limit - 1, integer=True)
    ks = [int(k) for k in np.atleast_1d(_check("ks", ks, "순전파당 토큰 수 목록", low=1, high=limit - context,
                                               integer=True, array=True))]
    repeats = _check("repeats", repeats, "반복 횟수", low=1, integer=True)
    warmup = _check("warmup", warmup, "준비 실행 횟수", integer=True)
    gen = torch.Generator().manual_seed(seed)
    vocab = int(model.config.vocab_size)
    device = next(model.parameters()).device
    prompt = torch.randint(3, vocab, (1, context), generator=gen, device="cpu").to(device)
    inputs = [torch.randint(3, vocab, (1, k), generator=gen).to(device) for k in ks]
    times: list[list[float]] = [[] for _ in ks]
    with threads(num_threads, name="num_threads"), torch.inference_mode():
        cache = DynamicCache(config=model.config)
        model(input_ids=prompt, cache=cache, use_cache=True)
        for round_ in range(warmup + repeats):
            for i, (k, new) in enumerate(zip(ks, inputs)):
                t0 = time.perf_counter()
                model(input_ids=new, cache=cache, use_cache=True)
                elapsed = time.perf_counter() - t0  # the pass only: cropping the cache back is not timed
                cache.crop(-k)
                if round_ >= warmup:
                    times[i].append(elapsed)
    return [statistics.median(t) * 1e3 for t in times]


@dataclass
class MemoryBoundResult:
    """What :func:`measure_memory_bound` returns (all times and rates measured on this computer).

    Attributes:
        size: the model size's name; n_params: its parameters.
        probe: read bandwidth of :func:`read_bandwidth`, bytes/s.
        ks: tokens per pass measured.
        ms: ``{dtype: [median ms per k]}``.
        weight_bytes: ``{dtype: bytes of the parameters}`` (= n_params x 4 or 2).
        flops: ``{dtype: FLOP/s}`` of :func:`peak_flops`.
        kv_bytes: ``{dtype: bytes of the KV cache read at k = 1}`` (context tokens; left out of
            the bandwidth).
        bf16: :class:`Bf16Support`. threads: torch threads used. context: cached tokens.
    """

    size: str
    n_params: int
    probe: float
    ks: list[int]
    ms: dict[str, list[float]]
    weight_bytes: dict[str, int]
    flops: dict[str, float]
    kv_bytes: dict[str, int]
    bf16: Bf16Support
    threads: int
    context: int
    dtypes: list[str] = field(default_factory=list)

    def step_ms(self, dtype: str) -> float:
        """One decode step (k = 1), ms."""
        return self.ms[dtype][self.ks.index(1)]

    def achieved(self, dtype: str) -> float:
        """Weight-read bandwidth of a decode step: weight bytes / step time, bytes/s."""
        return self.weight_bytes[dtype] / (self.step_ms(dtype) / 1e3)

    def fraction(self, dtype: str) -> float:
        """:meth:`achieved` / the probe (1.0 = the step reads weights as fast as the probe reads memory)."""
        return self.achieved(dtype) / self.probe

    def ratio(self, dtype: str, k: int) -> float:
        """Time of a pass of k tokens / a pass of 1 token (1.0 = verifying k tokens costs one step)."""
        return self.ms[dtype][self.ks.index(k)] / self.step_ms(dtype)

    def ridge_point(self, dtype: str) -> float:
        """This computer's ridge point in ``dtype``, FLOP/byte: peak FLOP/s / probe bandwidth."""
        return self.flops[dtype] / self.probe

    def ridge_k(self, dtype: str) -> float:
        """Tokens per pass where a pass's intensity, 2 k FLOP per parameter / its bytes
        (k / 2 FLOP/byte in fp32, k in bf16), meets the ridge point: k = ridge x bytes / 2."""
        return self.ridge_point(dtype) * DTYPES[dtype] / 2

    def as_dict(self) -> dict:
        """Plain numbers (JSON-ready): inputs, and per dtype the derived quantities."""
        return {
            "size": self.size, "n_params": self.n_params, "probe_bytes_per_s": self.probe, "ks": self.ks,
            "threads": self.threads, "context": self.context,
            "bf16": {"fast": self.bf16.fast, "flags": self.bf16.flags, "capability": self.bf16.capability},
            "dtypes": {d: {"weight_bytes": self.weight_bytes[d], "kv_bytes": self.kv_bytes[d], "ms": self.ms[d],
                           "step_ms": self.step_ms(d), "achieved_bytes_per_s": self.achieved(d),
                           "fraction_of_probe": self.fraction(d), "ratio": [self.ratio(d, k) for k in self.ks],
                           "flops": self.flops[d], "ridge_flop_per_byte": self.ridge_point(d),
                           "ridge_k": self.ridge_k(d)} for d in self.dtypes},
        }


def measure_memory_bound(size: str = DEFAULT_SIZE, *, dtypes: Sequence[str] = ("fp32", "bf16"),
                         ks: Sequence[int] = KS, context: int = 16, repeats: int = 5, warmup: int = 1,
                         num_threads: int | None = None, seed: int = 0, model=None) -> MemoryBoundResult:
    """Build :func:`random_model` once, probe the read bandwidth, and time passes of k tokens in
    each dtype (the model is converted in place, fp32 first, so memory holds one copy).

    Args:
        size: a key of :data:`SIZES` (ignored when ``model`` is given).
        dtypes: "fp32" and/or "bf16", in the order measured.
        ks: tokens per pass; must include 1 (the decode step).
        context, repeats, warmup, seed: as :func:`time_passes`.
        num_threads: torch threads for everything measured; None keeps torch's setting.
        model: an already built model to use instead (it is converted to each dtype in turn).

    Returns:
        :class:`MemoryBoundResult`.

    Raises:
        ValueError: an unknown dtype or size, ks without 1; MemoryError: as :func:`random_model`.
    """
    import torch

    dtypes = list(dtypes)
    for d in dtypes:
        _torch_dtype(d)
    if not dtypes:
        raise fail("dtypes", dtypes, "정밀도가 하나도 없습니다", "'fp32'와 'bf16' 중 하나 이상")
    ks = [int(k) for k in np.atleast_1d(_check("ks", ks, "순전파당 토큰 수 목록", low=1, integer=True, array=True))]
    if 1 not in ks:
        raise fail("ks", ks, "디코드 스텝(k = 1)이 없습니다", "1을 포함한 목록; 예: (1, 2, 4, 8)")
    if model is None:
        # built (and its memory checked) in the widest dtype: converting to it later could pass the budget
        model = random_model(size, dtype=max(dtypes, key=DTYPES.get), seed=seed)
    else:
        size = getattr(model.config, "name_or_path", "") or "given model"
    with threads(num_threads, name="num_threads"):
        used = torch.get_num_threads()
        probe = read_bandwidth()
        ms, wb, fl, kvb = {}, {}, {}, {}
        cfg = model.config
        d_head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        for d in dtypes:
            model.to(_torch_dtype(d))
            ms[d] = time_passes(model, ks, context=context, repeats=repeats, warmup=warmup, seed=seed)
            wb[d] = weight_bytes(model)
            fl[d] = peak_flops(d)
            kvb[d] = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * d_head * context * DTYPES[d]
    return MemoryBoundResult(size, parameter_count(model.config), probe, ks, ms, wb, fl, kvb, bf16_support(),
                             used, int(context), dtypes)


def pass_time_figure(result: MemoryBoundResult, *, ax=None):
    """Time of a pass of k tokens / one token, against k (log-log), one line per dtype, with the
    k where each dtype's pass meets this computer's ridge point (dotted).

    Args:
        result: from :func:`measure_memory_bound`.
        ax: an Axes to draw on; default a new 9.5 x 4.2 in figure.

    Returns:
        the matplotlib Figure.
    """
    from .plots import new_figure

    if ax is None:
        _, ax = new_figure(figsize=(9.5, 4.2), dpi=110)
    fig = ax.figure
    ks = np.asarray(result.ks)
    colors = {"fp32": "#dc2626", "bf16": "#2563eb"}
    for d in result.dtypes:
        ax.plot(ks, [result.ratio(d, k) for k in result.ks], "o-", lw=2, color=colors.get(d),
                label=f"{d} (k = 1: {result.step_ms(d):.0f} ms)")
        ax.axvline(result.ridge_k(d), color=colors.get(d), ls=":", lw=1.5)
    ax.plot(ks, ks, "--", color="#6b7280", lw=1, label="k에 비례 (토큰마다 따로 한 순전파)")
    ax.axhline(1.0, color="#6b7280", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("순전파 한 번에 넣는 토큰 수 k", fontsize=12)
    ax.set_ylabel("토큰 1개 순전파의 몇 배", fontsize=12)
    ax.set_title(f"무작위 가중치 모델 ({result.n_params / 1e6:.0f}M 매개변수): 토큰 k개 순전파 ÷ 토큰 1개 (점선: 리지 포인트)",
                 fontsize=13)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=10, loc="upper left")
    fig.tight_layout()
    return fig
