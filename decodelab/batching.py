"""Batched greedy decoding as servers do it: B requests share ONE forward pass per decode step.

Why serving systems batch (vLLM's continuous batching; Orca, OSDI 2022): a decode step of a
small batch is memory-bound, its time is mostly reading the weights, so B requests decoded in one
forward pass read the weights once for all of them. The batch then produces B tokens in about the
time of one, while each request still gets one token per step: aggregate tokens/s grows with B,
each request's time per output token (TPOT) stays the same or grows.

* :func:`batch_generate` decodes B prompts of any token lengths together. The prompts are
  left-padded to one length (the padding sits before each prompt, so every row's newest token is
  in the last column), an attention mask hides the padding from every query, and each row's
  position ids count only its own tokens, so a row's tokens are exactly what batch-1 greedy
  decoding gives (up to floating-point numerics: exact in the course's fp32 CPU runs; tested
  against :func:`decodelab.generate` and transformers' ``generate``);
* :func:`batch_sweep` repeats it for several batch sizes;
* :func:`continuous_batching` runs a schedule of requests that arrive at different steps and
  leave when done: each arrival is prefilled and joins the running batch (its KV cache padded
  on the left to the batch's length), finished rows leave it. This is iteration-level
  scheduling as in Orca and vLLM (and ``transformers serve --continuous-batching``, the server of
  notebook 07), kept minimal: a joining prompt's prefill runs as its own forward pass in that
  iteration, where vLLM would batch it with the decodes under a token budget.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._check import check, fail
from ._torch import synchronize, threads
from .decoding import check_budget, check_prompt_ids, new_cache
from .models import format_prompt

__all__ = ["BatchResult", "COURSE_PROMPTS", "MIXED_PROMPTS", "ContinuousResult", "Request", "RequestTrace", "batch_figure",
           "batch_generate", "batch_sweep", "continuous_batching", "continuous_figure", "demo_requests",
           "same_length_prompts"]

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

#: Prompts of different token lengths (2 to 14 tokens with the bundled tokenizer), in the same
#: domains, for the mixed-length batch and the continuous-batching demo (:func:`demo_requests`).
MIXED_PROMPTS: tuple[str, ...] = (
    "헌법은", "데비안 패키지를 설치하려면 어떤 명령을 써야 하나요?", "표의 셀 서식을 바꾸려면", "저장하려면",
    "국회는 법률을 만들고 정부는 법률을 집행한다.", "모든 국민은 법 앞에 평등하다.", "대통령은",
    "문서에 목차를 넣고 페이지 번호를 매기려면",
)


@dataclass
class BatchResult:
    """What :func:`batch_generate` returns: B requests decoded together.

    Attributes:
        batch_size: B, the number of requests in the batch.
        prompt_tokens: per request, its prompt length in tokens (before padding).
        token_ids: per request (B lists), the generated token ids, ``max_new_tokens`` each.
        texts: per request, the generated text.
        prefill_ms: the one batched prefill (all B prompts in one forward pass), ms. Every request
            waits for it, so it is each request's time to first token (TTFT) here.
        step_ms: one entry per decode step (``max_new_tokens - 1`` of them): wall time of the
            step's single forward pass for the whole batch plus choosing B tokens, ms.
    """

    batch_size: int
    prompt_tokens: list[int]
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


def _prompt_list(model, tokenizer, prompts, example: str) -> list[list[int]]:
    """Token ids of each prompt; TypeError / ValueError for a bad list (Korean, says what to pass),
    or for a prompt holding a token the model has no embedding row for (an added special token:
    :func:`decodelab.decoding.check_prompt_ids`, as :func:`decodelab.generate` checks)."""
    allowed = f'프롬프트(str) 1개 이상의 목록, 예: {example}'
    if isinstance(prompts, str) or not isinstance(prompts, Sequence):
        raise fail("prompts", prompts, f"프롬프트 목록(list[str])이 필요합니다 (받은 것: {type(prompts).__name__})",
                   allowed, TypeError)
    if len(prompts) == 0:
        raise fail("prompts", prompts, "프롬프트 목록이 비어 있습니다", allowed)
    ids = [format_prompt(tokenizer, p) for p in prompts]
    for i in ids:
        check_prompt_ids(model, tokenizer, i)
    return ids


def _validate(model, tokenizer, prompts, max_new_tokens) -> list[list[int]]:
    ids = _prompt_list(model, tokenizer, prompts, '["헌법은", "셀 서식을 바꾸려면"]')
    check_budget(model, max(len(i) for i in ids), max_new_tokens)
    return ids


def batch_generate(model, tokenizer, prompts: Sequence[str], max_new_tokens: int) -> BatchResult:
    """Greedy-decode B prompts together: one batched prefill, then ONE forward pass per step.

    Prompts of different token lengths are left-padded to the longest (pad tokens first, then
    the prompt), with an attention mask of shape ``(B, positions)`` (0 on padding) and position
    ids that start at 0 on each row's first real token. The KV cache holds the whole batch
    (tensors of shape ``(B, kv_heads, positions, head_dim)`` per layer); each decode step feeds a
    ``(B, 1)`` tensor of the tokens just chosen and takes the argmax of each row. No EOS stopping:
    every request gets exactly ``max_new_tokens``.

    Args:
        model: a transformers causal LM (e.g. ``load_models().target``).
        tokenizer: its tokenizer.
        prompts: B >= 1 non-empty strings (any token lengths).
        max_new_tokens: int >= 1; the longest prompt + new tokens must fit the context length.

    Returns:
        :class:`BatchResult`; ``token_ids[i]`` equals
        ``decodelab.generate(model, tokenizer, prompts[i], max_new_tokens, stop_at_eos=False).token_ids``
        (fp32 on CPU; batched kernels in other precisions may differ in rare near-ties).

    Raises:
        TypeError: ``prompts`` is not a list/tuple of strings.
        ValueError: empty list, an empty prompt, a prompt token the model has no row for (an added
            special token; Korean), ``max_new_tokens < 1`` or beyond the context length.
    """
    ids = _validate(model, tokenizer, prompts, max_new_tokens)
    return _run(model, tokenizer, ids, max_new_tokens)


# --------------------------------------------------------------------------------------------
# a running batch: left-padded rows, their mask and positions


@dataclass
class _Rows:
    """The running batch: KV cache ``(B, heads, T, d)`` per layer, mask ``(B, T)`` (1 = a real
    token), ``next_pos`` ``(B,)`` (each row's real-token count = the next position id)."""

    cache: object
    mask: torch.Tensor
    next_pos: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.mask.shape[0])


def _forward(model, ids: torch.Tensor, rows: _Rows, position_ids: torch.Tensor) -> torch.Tensor:
    """One forward pass of ``ids`` ``(B, t)`` over the rows' cache; last-position logits ``(B, vocab)``,
    once the device has finished the pass (timers around it measure the pass on a GPU too)."""
    with torch.inference_mode():
        out = model(input_ids=ids.to(model.device), attention_mask=rows.mask.to(model.device),
                    position_ids=position_ids.to(model.device), cache=rows.cache, use_cache=True,
                    logits_to_keep=1)
        logits = out.logits[:, -1].float()
    synchronize(logits.device)
    return logits


def _prefill_rows(model, tokenizer, ids: list[list[int]]) -> tuple[_Rows, torch.Tensor]:
    """Left-pad the prompts, prefill them in one forward pass; the rows and their first tokens."""
    width = max(len(i) for i in ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    x = torch.tensor([[pad] * (width - len(i)) + list(i) for i in ids], dtype=torch.long)
    mask = torch.tensor([[0] * (width - len(i)) + [1] * len(i) for i in ids], dtype=torch.long)
    rows = _Rows(new_cache(model), mask, mask.sum(dim=1))
    logits = _forward(model, x, rows, (mask.cumsum(dim=1) - 1).clamp(min=0))
    return rows, logits.argmax(dim=-1)


def _decode_rows(model, rows: _Rows, tokens: torch.Tensor) -> torch.Tensor:
    """One decode step: each row's ``tokens`` in, each row's next greedy token out."""
    rows.mask = torch.cat([rows.mask, torch.ones(rows.size, 1, dtype=torch.long)], dim=1)
    logits = _forward(model, tokens[:, None], rows, rows.next_pos[:, None])
    rows.next_pos = rows.next_pos + 1
    return logits.argmax(dim=-1)


def _layers(cache):
    return cache.layers


def _left_pad(t: torch.Tensor, width: int, dim: int) -> torch.Tensor:
    missing = width - t.shape[dim]
    if missing == 0:
        return t
    shape = list(t.shape)
    shape[dim] = missing
    return torch.cat([t.new_zeros(shape), t], dim=dim)


def _merge(a: _Rows, b: _Rows) -> _Rows:
    """Rows of ``a`` then rows of ``b`` in one batch: the shorter side is padded on the left
    (zeros in the cache, 0 in the mask), which no query attends to."""
    width = max(a.mask.shape[1], b.mask.shape[1])
    for la, lb in zip(_layers(a.cache), _layers(b.cache)):
        la.keys = torch.cat([_left_pad(la.keys, width, 2), _left_pad(lb.keys, width, 2)], dim=0)
        la.values = torch.cat([_left_pad(la.values, width, 2), _left_pad(lb.values, width, 2)], dim=0)
    mask = torch.cat([_left_pad(a.mask, width, 1), _left_pad(b.mask, width, 1)], dim=0)
    return _Rows(a.cache, mask, torch.cat([a.next_pos, b.next_pos]))


def _keep(rows: _Rows, keep: list[int]) -> _Rows:
    """Only the rows ``keep`` (in order); leading columns that are padding in every row are cut."""
    idx = torch.tensor(keep, dtype=torch.long)
    mask = rows.mask[idx]
    used = mask.any(dim=0).nonzero()
    start = int(used[0]) if len(used) else mask.shape[1]
    for layer in _layers(rows.cache):
        layer.keys = layer.keys[idx, :, start:]
        layer.values = layer.values[idx, :, start:]
    return _Rows(rows.cache, mask[:, start:], rows.next_pos[idx])


def _run(model, tokenizer, ids: list[list[int]], max_new_tokens: int) -> BatchResult:
    t0 = time.perf_counter()
    rows, nxt = _prefill_rows(model, tokenizer, ids)
    prefill_ms = (time.perf_counter() - t0) * 1000.0
    out = [nxt]
    step_ms = []
    for _ in range(max_new_tokens - 1):
        t0 = time.perf_counter()
        nxt = _decode_rows(model, rows, nxt)
        step_ms.append((time.perf_counter() - t0) * 1000.0)
        out.append(nxt)
    tokens = torch.stack(out, dim=1).tolist()
    return BatchResult(
        batch_size=len(ids),
        prompt_tokens=[len(i) for i in ids],
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


# --------------------------------------------------------------------------------------------
# continuous batching: requests join and leave a running batch


@dataclass(frozen=True)
class Request:
    """One request of a :func:`continuous_batching` schedule.

    Attributes:
        prompt: non-empty text. max_new_tokens: tokens to generate, int >= 1 (no EOS stop).
        arrival_step: the scheduler iteration (0, 1, ...) at which the request arrives, int >= 0.
    """

    prompt: str
    max_new_tokens: int
    arrival_step: int = 0


@dataclass
class RequestTrace:
    """What happened to one request in :func:`continuous_batching`.

    Attributes:
        request: the :class:`Request`. prompt_tokens: its prompt length in tokens.
        token_ids, text: its generated tokens (``max_new_tokens`` of them) and their text.
        joined_step: iteration whose prefill gave its first token (later than ``arrival_step``
            only when the batch was full). finished_step: iteration of its last token.
        arrival_ms: wall time (ms since the run started) at which it arrived.
        token_ms: wall time (ms since the run started) at which each of its tokens was ready.
    """

    request: Request
    prompt_tokens: int
    token_ids: list[int]
    text: str
    joined_step: int
    finished_step: int
    arrival_ms: float
    token_ms: list[float]

    @property
    def ttft_ms(self) -> float:
        """Time to first token: arrival to the first token (queue + its prefill), ms."""
        return self.token_ms[0] - self.arrival_ms

    @property
    def e2e_ms(self) -> float:
        """Arrival to the last token, ms."""
        return self.token_ms[-1] - self.arrival_ms

    @property
    def tpot_ms(self) -> float:
        """(E2E - TTFT) / (n - 1), vLLM's TPOT, ms; 0.0 for a single token."""
        n = len(self.token_ms)
        return (self.token_ms[-1] - self.token_ms[0]) / (n - 1) if n > 1 else 0.0


@dataclass
class ContinuousResult:
    """What :func:`continuous_batching` returns.

    Attributes:
        requests: one :class:`RequestTrace` per request, in the order given.
        step_ms: wall time of each scheduler iteration (its one decode pass for the running rows,
            plus the prefill of requests that joined in it), ms.
        running: rows in the batch during each iteration's decode pass (0 when only a prefill ran).
        joined, left: per iteration, indices of the requests that joined / finished in it.
    """

    requests: list[RequestTrace]
    step_ms: list[float]
    running: list[int]
    joined: list[list[int]]
    left: list[list[int]]

    @property
    def total_ms(self) -> float:
        return sum(self.step_ms)

    @property
    def tokens_per_s(self) -> float:
        """Aggregate output tokens/s: every request's tokens / wall time of the whole run."""
        n = sum(len(r.token_ids) for r in self.requests)
        return n * 1000.0 / self.total_ms if self.total_ms > 0 else 0.0


def demo_requests(n: int = 6, *, seed: int = 0, max_new_tokens: tuple[int, int] = (6, 24),
                  arrival_every: int = 3) -> list[Request]:
    """A small schedule for the continuous-batching demo: the first ``n`` of :data:`MIXED_PROMPTS`
    (prompts of different token lengths), output lengths drawn uniformly from ``max_new_tokens``
    (inclusive, seeded), request i arriving at iteration i x ``arrival_every``.

    Raises:
        TypeError / ValueError: ``n`` not an int in [1, len(MIXED_PROMPTS)], a bad range, a
            negative ``arrival_every``.
    """
    n = check("n", n, "요청 수", low=1, integer=True)
    if n > len(MIXED_PROMPTS):
        raise fail("n", n, f"준비된 프롬프트가 {len(MIXED_PROMPTS)}개뿐입니다", f"{len(MIXED_PROMPTS)} 이하의 정수")
    lo, hi = max_new_tokens
    lo = check("max_new_tokens", lo, "출력 토큰 수 범위의 아래 끝", low=1, integer=True)
    hi = check("max_new_tokens", hi, "출력 토큰 수 범위의 위 끝(아래 끝 이상)", low=lo, integer=True)
    arrival_every = check("arrival_every", arrival_every, "도착 간격(반복 수)", low=0, integer=True)
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(lo, hi + 1, (n,), generator=gen).tolist()
    return [Request(p, int(m), i * arrival_every) for i, (p, m) in enumerate(zip(MIXED_PROMPTS, lengths))]


def continuous_batching(model, tokenizer, requests: Sequence[Request], *,
                        max_batch_size: int | None = None, num_threads: int | None = 1) -> ContinuousResult:
    """Serve a schedule of requests with iteration-level (continuous) batching, greedy decoding.

    Each iteration ``k`` = 0, 1, ...: (1) the running rows take one decode step together (one
    forward pass, one new token each); rows that reach their ``max_new_tokens`` leave; (2) the
    requests that have arrived by ``k`` join, as many as ``max_batch_size`` allows, in arrival
    order: their prompts are prefilled together (one forward pass, left-padded), which gives each
    its first token, and their KV caches join the running batch's. Iterations with nothing to do
    are skipped (the clock does not run). Every request's tokens equal batch-1 greedy decoding
    (:func:`decodelab.generate` with ``stop_at_eos=False``; fp32 CPU, tested).

    Args:
        model, tokenizer: as in :func:`batch_generate`.
        requests: :class:`Request` s (prompts of any lengths, any arrival iterations).
        max_batch_size: most rows decoding at once (later arrivals wait, which adds to their
            TTFT); ``None`` = no limit.
        num_threads: torch CPU threads while running (restored afterwards); default 1, as in
            :mod:`decodelab.latency_measure` (steadier timings on a shared machine); ``None`` keeps torch's.

    Returns:
        :class:`ContinuousResult`: per request TTFT, TPOT, E2E (ms, measured on this computer),
        and the aggregate tokens/s.

    Raises:
        TypeError: ``requests`` is not a list of :class:`Request`; ``max_batch_size`` not an int.
        ValueError: no requests, an empty prompt, a prompt token the model has no row for (an
            added special token; Korean), ``max_new_tokens`` < 1 or beyond the context length, a
            negative ``arrival_step``, ``max_batch_size`` < 1.
    """
    allowed = '[Request("헌법은", 8, 0), Request("셀 서식을 바꾸려면", 12, 3)] (demo_requests(tokenizer)로 만들 수 있습니다)'
    if isinstance(requests, (str, Request)) or not isinstance(requests, Sequence) or not all(
            isinstance(r, Request) for r in requests):
        raise fail("requests", requests, "Request 목록이 필요합니다", allowed, TypeError)
    if not requests:
        raise fail("requests", requests, "요청 목록이 비어 있습니다", allowed)
    if max_batch_size is not None:
        max_batch_size = check("max_batch_size", max_batch_size, "배치 크기 한도", low=1, integer=True,
                               hint="또는 None(한도 없음)")
    ids = _prompt_list(model, tokenizer, [r.prompt for r in requests], '["헌법은"]')
    for r, i in zip(requests, ids):
        check_budget(model, len(i), r.max_new_tokens)
        check("arrival_step", r.arrival_step, "도착 반복 번호", low=0, integer=True)
    with threads(num_threads, name="num_threads"):
        return _serve(model, tokenizer, requests, ids, max_batch_size)


def _serve(model, tokenizer, requests, ids, max_batch_size) -> ContinuousResult:

    tokens: list[list[int]] = [[] for _ in requests]
    token_ms: list[list[float]] = [[] for _ in requests]
    arrival_ms: list[float | None] = [None] * len(requests)
    joined_step = [-1] * len(requests)
    finished_step = [-1] * len(requests)
    waiting = sorted(range(len(requests)), key=lambda i: (requests[i].arrival_step, i))
    running: list[int] = []          # request index of each row of ``rows``
    rows: _Rows | None = None
    last = torch.zeros(0, dtype=torch.long)
    result = ContinuousResult([], [], [], [], [])
    clock = 0.0
    k = 0
    while waiting or running:
        if not running and requests[waiting[0]].arrival_step > k:
            k = requests[waiting[0]].arrival_step         # nothing to do until the next arrival
        for i in waiting:
            if requests[i].arrival_step <= k and arrival_ms[i] is None:
                arrival_ms[i] = clock
        t0 = time.perf_counter()
        n_running, left = len(running), []
        if running:
            last = _decode_rows(model, rows, last)
            for row, i in enumerate(running):
                tokens[i].append(int(last[row]))
            stamp = clock + (time.perf_counter() - t0) * 1000.0
            for i in running:
                token_ms[i].append(stamp)
            left = [i for i in running if len(tokens[i]) == requests[i].max_new_tokens]
            if left:
                keep = [row for row, i in enumerate(running) if i not in left]
                rows = _keep(rows, keep) if keep else None
                last = last[keep]
                running = [running[row] for row in keep]
        room = len(waiting) if max_batch_size is None else max_batch_size - len(running)
        joining = [i for i in waiting if requests[i].arrival_step <= k][:max(room, 0)]
        if joining:
            new_rows, first = _prefill_rows(model, tokenizer, [ids[i] for i in joining])
            stamp = clock + (time.perf_counter() - t0) * 1000.0
            for row, i in enumerate(joining):
                tokens[i].append(int(first[row]))
                token_ms[i].append(stamp)
                joined_step[i] = k
            waiting = [i for i in waiting if i not in joining]
            done = [row for row, i in enumerate(joining) if requests[i].max_new_tokens == 1]
            stay = [row for row in range(len(joining)) if row not in done]
            left += [joining[row] for row in done]
            if stay:
                new_rows = _keep(new_rows, stay) if done else new_rows
                rows = new_rows if rows is None else _merge(rows, new_rows)
                last = torch.cat([last, first[stay]])
                running += [joining[row] for row in stay]
        for i in left:
            finished_step[i] = k
        ms = (time.perf_counter() - t0) * 1000.0
        clock += ms
        result.step_ms.append(ms)
        result.running.append(n_running)
        result.joined.append(joining)
        result.left.append(left)
        k += 1
    result.requests = [
        RequestTrace(r, len(i), t, tokenizer.decode(t, skip_special_tokens=True), j, f, a, tm)
        for r, i, t, j, f, a, tm in zip(requests, ids, tokens, joined_step, finished_step, arrival_ms, token_ms)
    ]
    return result


def continuous_figure(result: ContinuousResult, *, title: str = "연속 배칭: 요청이 들어오고 나가는 배치 (이 컴퓨터에서 측정)"):
    """Two panels: each request's life on the iteration axis (waiting, then decoding, one bar per
    request with its TTFT and TPOT), and the batch size of each iteration's decode pass.

    Args:
        result: from :func:`continuous_batching`.

    Returns:
        a matplotlib Figure.
    """
    from .plots import new_figure

    reqs = result.requests
    n_iter = len(result.step_ms)
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(11, 2.2 + 0.45 * len(reqs) + 2.0), sharex=True,
                                 height_ratios=[max(len(reqs), 2), 2.2])
    # iteration numbers as run (idle gaps skipped): map each step index to its position
    for y, r in enumerate(reqs):
        arrive = _iteration_index(result, r, "arrive")
        first, end = _iteration_index(result, r, "join"), _iteration_index(result, r, "finish")
        if first > arrive:
            ax1.barh(y, first - arrive, left=arrive, color="#e5e7eb", edgecolor="#9ca3af", height=0.6)
        ax1.barh(y, end - first + 1, left=first, color="#93c5fd", edgecolor="#2563eb", height=0.6)
        ax1.text(end + 1.2, y, f"프롬프트 {r.prompt_tokens}토큰, 출력 {len(r.token_ids)}토큰 | TTFT {r.ttft_ms:.0f} ms, "
                 f"TPOT {r.tpot_ms:.1f} ms", va="center", fontsize=10)
    ax1.set_yticks(range(len(reqs)), [f"요청 {i}" for i in range(len(reqs))])
    ax1.invert_yaxis()
    ax1.set_xlim(-0.5, n_iter + 0.5 + 0.55 * n_iter)
    ax1.set_title(title, fontsize=13)
    ax1.tick_params(labelsize=11)
    ax2.bar(range(n_iter), result.running, color="#2563eb", width=0.8)
    ax2.set_ylabel("배치 크기", fontsize=12)
    ax2.set_xlabel(f"반복(iteration) 번호: 반복마다 순전파 한 번 | 전체 처리량 {result.tokens_per_s:,.0f} tokens/s", fontsize=12)
    ax2.tick_params(labelsize=11)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def _iteration_index(result: ContinuousResult, trace: RequestTrace, what: str) -> int:
    """Position (0-based, among the iterations that ran) of a request's arrival, join or finish."""
    i = result.requests.index(trace)
    if what == "join":
        return next(k for k, j in enumerate(result.joined) if i in j)
    if what == "finish":
        return next(k for k, j in enumerate(result.left) if i in j)
    # arrival: the first iteration that ran at or after the arrival time
    return next(k for k, start in enumerate(_starts(result)) if start >= trace.arrival_ms - 1e-9)


def _starts(result: ContinuousResult) -> list[float]:
    out, t = [], 0.0
    for ms in result.step_ms:
        out.append(t)
        t += ms
    return out
