"""Batched greedy decoding: B requests share ONE forward pass per decode step.

Why serving systems batch (vLLM's continuous batching; Orca, OSDI 2022): a decode step of a
small batch is memory-bound, its time is mostly reading the weights, so B requests decoded in one
forward pass read the weights once for all of them. The batch then produces B tokens in about the
time of one, while each request still gets one token per step: aggregate tokens/s grows with B,
each request's time per output token (TPOT) stays the same or grows.

This module measures that on a real model: :func:`batch_generate` decodes B prompts of the SAME
token length (no padding, so no attention mask is needed and every request's tokens are exactly
what batch-1 greedy decoding gives, up to floating-point numerics: exact in the course's fp32 CPU
runs, tested against :func:`decodelab.generate`); :func:`batch_sweep` repeats it for several batch
sizes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._check import check, fail
from .decoding import check_budget, forward, new_cache
from .models import format_prompt

__all__ = ["BatchResult", "COURSE_PROMPTS", "batch_figure", "batch_generate", "batch_sweep", "same_length_prompts"]

#: Short prompts in the domains the bundled pair was trained on (constitution and statutes,
#: LibreOffice help, Debian FAQ); :func:`same_length_prompts` picks those of one token length.
COURSE_PROMPTS: tuple[str, ...] = (
    "문서를 저장하려면", "셀 서식을 바꾸려면", "헌법은", "국민은", "정부는", "글꼴을 바꾸려면", "대법원은",
    "선거는", "슬라이드를 추가하려면", "행을 삭제하려면", "열을 추가하려면", "모든 국민은", "국회는 법률을",
    "대통령은", "데비안은", "법률은", "표를 만들려면", "파일을 열려면", "인쇄하려면", "패키지를 설치하려면",
    "국무총리는", "그림을 넣으려면", "저장하려면", "국회의원은", "법관은", "감사원은", "국가는", "재판은",
    "차트를 넣으려면", "페이지 번호를", "목차를 만들려면", "서식을 지우려면", "글자 크기를", "문단을 나누려면",
    "커널을 바꾸려면", "저장소를 추가하려면", "검색하려면", "복사하려면", "선택하려면", "계약은",
)


@dataclass
class BatchResult:
    """What :func:`batch_generate` returns: B requests decoded together.

    Attributes:
        batch_size: B, the number of requests in the batch.
        prompt_tokens: the common prompt length in tokens.
        token_ids: per request (B lists), the generated token ids, ``max_new_tokens`` each.
        texts: per request, the generated text.
        prefill_ms: the one batched prefill (all B prompts in one forward pass), ms. Every request
            waits for it, so it is each request's time to first token (TTFT) here.
        step_ms: one entry per decode step (``max_new_tokens - 1`` of them): wall time of the
            step's single forward pass for the whole batch plus choosing B tokens, ms.
    """

    batch_size: int
    prompt_tokens: int
    token_ids: list[list[int]]
    texts: list[str]
    prefill_ms: float
    step_ms: list[float]

    @property
    def tpot_ms(self) -> float:
        """Per-request time per output token, ms: the mean decode-step time (each step gives
        every request one token), = (E2E - TTFT) / (n - 1) as vLLM defines it; 0.0 if n == 1."""
        return sum(self.step_ms) / len(self.step_ms) if self.step_ms else 0.0

    @property
    def tokens_per_s(self) -> float:
        """Aggregate decode throughput, tokens/s over the whole batch: B x steps / decode time."""
        total = sum(self.step_ms)
        return self.batch_size * len(self.step_ms) * 1000.0 / total if total > 0 else 0.0

    @property
    def e2e_ms(self) -> float:
        """End-to-end time of every request in the batch (prefill + all decode steps), ms."""
        return self.prefill_ms + sum(self.step_ms)


def _validate(model, tokenizer, prompts, max_new_tokens) -> list[list[int]]:
    allowed = '토큰 수가 같은 프롬프트 1개 이상의 목록, 예: ["헌법은", "국민은"] (same_length_prompts(tokenizer, n)으로 고르세요)'
    if isinstance(prompts, str) or not isinstance(prompts, Sequence):
        raise fail("prompts", prompts, f"프롬프트 목록(list[str])이 필요합니다 (받은 것: {type(prompts).__name__})",
                   allowed, TypeError)
    if len(prompts) == 0:
        raise fail("prompts", prompts, "프롬프트 목록이 비어 있습니다", allowed)
    ids = [format_prompt(tokenizer, p) for p in prompts]
    lengths = sorted({len(i) for i in ids})
    if len(lengths) > 1:
        raise fail("prompts", prompts, f"프롬프트의 토큰 길이가 서로 다릅니다 ({lengths})", allowed)
    check_budget(model, lengths[0], max_new_tokens)
    return ids


def batch_generate(model, tokenizer, prompts: Sequence[str], max_new_tokens: int) -> BatchResult:
    """Greedy-decode B prompts together: one batched prefill, then ONE forward pass per step.

    The KV cache holds the whole batch (tensors of shape ``(B, kv_heads, positions, head_dim)``
    per layer); each decode step feeds a ``(B, 1)`` tensor of the tokens just chosen and takes
    the argmax of each row. No EOS stopping: every request gets exactly ``max_new_tokens``.

    Args:
        model: a transformers causal LM (e.g. ``load_models().target``).
        tokenizer: its tokenizer.
        prompts: B >= 1 non-empty strings that all encode to the same number of tokens.
        max_new_tokens: int >= 1; prompt + new tokens must fit the context length.

    Returns:
        :class:`BatchResult`; ``token_ids[i]`` equals
        ``decodelab.generate(model, tokenizer, prompts[i], max_new_tokens, stop_at_eos=False).token_ids``
        (fp32 on CPU; batched kernels in other precisions may differ in rare near-ties).

    Raises:
        TypeError: ``prompts`` is not a list/tuple of strings.
        ValueError: empty list, an empty prompt, prompts of different token lengths,
            ``max_new_tokens < 1`` or beyond the context length.
    """
    ids = _validate(model, tokenizer, prompts, max_new_tokens)
    return _run(model, tokenizer, ids, max_new_tokens)


def _run(model, tokenizer, ids: list[list[int]], max_new_tokens: int) -> BatchResult:
    cache = new_cache(model)
    t0 = time.perf_counter()
    logits = forward(model, torch.tensor(ids, dtype=torch.long), cache)[:, -1]
    nxt = logits.argmax(dim=-1)
    prefill_ms = (time.perf_counter() - t0) * 1000.0
    out = [nxt]
    step_ms = []
    for _ in range(max_new_tokens - 1):
        t0 = time.perf_counter()
        logits = forward(model, nxt[:, None], cache)[:, -1]
        nxt = logits.argmax(dim=-1)
        step_ms.append((time.perf_counter() - t0) * 1000.0)
        out.append(nxt)
    tokens = torch.stack(out, dim=1).tolist()
    return BatchResult(
        batch_size=len(ids),
        prompt_tokens=len(ids[0]),
        token_ids=tokens,
        texts=[tokenizer.decode(t, skip_special_tokens=True) for t in tokens],
        prefill_ms=prefill_ms,
        step_ms=step_ms,
    )


def same_length_prompts(tokenizer, n: int, candidates: Sequence[str] = COURSE_PROMPTS) -> list[str]:
    """``n`` different prompts that all encode to the same number of tokens.

    Picks the token length most common among ``candidates`` (ties: the shorter length) and
    returns its first ``n`` prompts in order.

    Raises:
        TypeError: ``n`` is not an int. ValueError: ``n < 1``, or fewer than ``n`` candidates share
            a length.
    """
    n = check("n", n, "프롬프트 수", low=1, integer=True)
    by_len: dict[int, list[str]] = {}
    for p in candidates:
        by_len.setdefault(len(format_prompt(tokenizer, p)), []).append(p)
    counts = Counter({k: len(v) for k, v in by_len.items()})
    length = min(counts, key=lambda k: (-counts[k], k))
    if counts[length] < n:
        raise fail("n", n, f"토큰 길이가 같은 후보가 {counts[length]}개뿐입니다",
                   f"{counts[length]} 이하, 또는 candidates에 프롬프트를 더 넣으세요")
    return by_len[length][:n]


def batch_sweep(
    model,
    tokenizer,
    max_new_tokens: int = 32,
    batch_sizes: Sequence[int] = (1, 2, 4, 8, 16),
    *,
    prompts: Sequence[str] | None = None,
    repeats: int = 1,
) -> list[BatchResult]:
    """Decode with each batch size B in ``batch_sizes``, the first B of ``prompts`` as the batch.

    One untimed warm-up run (batch of the largest size, 2 tokens) comes first, so the first batch
    size measured does not pay for one-off initialisation. With ``repeats > 1`` each batch size is
    run that many times and the run with the median decode time is kept.

    Args:
        model, tokenizer: as in :func:`batch_generate`.
        max_new_tokens: tokens per request, int >= 2 (TPOT needs at least one decode step).
        batch_sizes: increasing ints >= 1.
        prompts: at least ``max(batch_sizes)`` prompts of one token length; default
            ``same_length_prompts(tokenizer, max(batch_sizes))``.
        repeats: int >= 1.

    Returns:
        One :class:`BatchResult` per batch size, in order: ``.tokens_per_s`` (aggregate),
        ``.tpot_ms`` (per request), ``.prefill_ms`` (TTFT of every request in the batch).

    Raises:
        TypeError: a batch size, ``max_new_tokens`` or ``repeats`` is not a number.
        ValueError: invalid ``batch_sizes`` (not whole numbers >= 1), ``max_new_tokens < 2``, ``repeats < 1``, too few
            prompts, or the errors of :func:`batch_generate`.
    """
    sizes = list(batch_sizes)
    if not sizes:
        raise fail("batch_sizes", batch_sizes, "배치 크기 목록이 비어 있습니다", "1 이상의 정수 목록, 예: (1, 2, 4, 8, 16)")
    sizes = [check("batch_sizes", b, "배치 크기", low=1, integer=True, hint="예: (1, 2, 4, 8, 16)") for b in sizes]
    max_new_tokens = check("max_new_tokens", max_new_tokens, "요청마다 만들 토큰 수", low=2, integer=True)
    repeats = check("repeats", repeats, "반복 횟수", low=1, integer=True)
    biggest = max(sizes)
    if prompts is None:
        prompts = same_length_prompts(tokenizer, biggest)
    if len(prompts) < biggest:
        raise fail("prompts", prompts, f"프롬프트가 {len(prompts)}개뿐입니다", f"가장 큰 배치 {biggest}개 이상")
    ids = _validate(model, tokenizer, list(prompts[:biggest]), max_new_tokens)
    _run(model, tokenizer, ids, 2)  # warm-up, not timed
    rows = []
    for b in sizes:
        runs = sorted((_run(model, tokenizer, ids[:b], max_new_tokens) for _ in range(repeats)),
                      key=lambda r: sum(r.step_ms))
        rows.append(runs[len(runs) // 2])
    return rows


def batch_figure(rows: Sequence[BatchResult], *, title: str = "배치 크기에 따른 처리량과 한 요청의 기다림 (이 컴퓨터에서 측정)"):
    """Two panels against batch size B: aggregate tokens/s, and per-request TPOT (and TTFT), ms.

    Args:
        rows: the output of :func:`batch_sweep` (one :class:`BatchResult` per batch size).

    Returns:
        a matplotlib Figure.
    """
    from .plots import new_figure

    b = [r.batch_size for r in rows]
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(11, 4.2))
    ax1.plot(b, [r.tokens_per_s for r in rows], "o-", color="#2563eb", lw=2)
    ax1.set_ylabel("전체 처리량 (tokens/s)", fontsize=12)
    ax1.set_title("배치 전체가 초당 만드는 토큰", fontsize=13)
    ax2.plot(b, [r.tpot_ms for r in rows], "o-", color="#dc2626", lw=2, label="요청 하나의 TPOT")
    ax2.plot(b, [r.prefill_ms for r in rows], "s--", color="#9333ea", lw=1.5, label="요청 하나의 TTFT (묶음 프리필)")
    ax2.set_ylabel("ms", fontsize=12)
    ax2.set_title("요청 하나가 느끼는 시간", fontsize=13)
    ax2.legend(fontsize=11)
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(b, [str(x) for x in b])
        ax.set_xlabel("배치 크기 B (함께 디코드하는 요청 수)", fontsize=12)
        ax.tick_params(labelsize=11)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    return fig
