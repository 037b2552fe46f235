"""Experiments with speculative decoding on this computer: what notebooks 04/04b, ``decodelab card``
and ``benchmarks/bench_speculative.py`` measure with the loop of :mod:`decodelab.speculative`.

* :func:`measure_costs` — median step times of the target (one token, and one verification of
  ``gamma + 1`` tokens) and of one drafted token, and the cost ratio ``c`` (Leviathan et al. 2023,
  arXiv 2211.17192, Sec. 3.4);
* :func:`speedup_sweep` — target-only greedy decoding against :func:`speculative_generate` for each
  gamma, counts pooled over prompts (one :class:`GammaRow` per gamma);
* :func:`exactness_experiment` — the next token sampled many times from the target alone and
  through one draft-and-verify step, for a histogram (the distribution is the target's).

Every output token still comes from :func:`decodelab.speculative.speculative_generate` or
:func:`decodelab.rejection.verify_probabilities`; this module only times, repeats and pools.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._check import fail
from .decoding import crop_cache, forward, generate, prefill
from .models import format_prompt
from .rejection import same_width, verify_probabilities
from .sampling import SamplingConfig, make_generator, probabilities
from .speculative import as_proposer, speculative_generate
from .speculative_metrics import SpecDecodingStats

__all__ = ["GammaRow", "exactness_experiment", "measure_costs", "speedup_sweep"]


def measure_costs(target, draft, tokenizer, prompt: str, *, gammas=(4,), reps: int = 20) -> dict:
    """Median step times on this computer, in ms, and the cost ratio ``c``.

    Returns a dict with ``target_step_ms`` (one target decode step, 1 token), ``verify_ms``
    (``{gamma: ms}`` for one verification of ``gamma + 1`` tokens), ``verify_cost``
    (``{gamma: verify_ms / target_step_ms}``), ``draft_step_ms`` (one drafted token as
    :func:`speculative_generate` drafts it: one forward pass of a draft model, ~0 for
    ``"ngram"``) and ``c`` = draft step / target step (Leviathan et al. 2023, Sec. 3.4).

    Args:
        draft: anything :func:`speculative_generate` accepts (a model, a proposer, ``"ngram"``).

    Raises:
        TypeError / ValueError: as :func:`speculative_generate` (``draft``, ``prompt``).
    """
    ids = format_prompt(tokenizer, prompt)
    proposer = as_proposer(draft, target, tokenizer)
    cache = prefill(target, torch.tensor([ids])).cache
    inputs = {n: torch.tensor([[ids[-1]] * n]) for n in [1] + [int(gamma) + 1 for gamma in gammas]}

    def target_pass(n):  # ms of one forward pass over n new tokens; the cache is restored after
        t0 = time.perf_counter()
        forward(target, inputs[n], cache, logits_to_keep=n)
        ms = (time.perf_counter() - t0) * 1000.0
        crop_cache(cache, len(ids))
        return ms

    cfg = SamplingConfig(0.0)
    proposer.reset()
    proposer.propose(ids, 1, cfg)

    def draft_pass():  # a model draft re-feeds the last token: exactly one forward pass
        t0 = time.perf_counter()
        proposer.propose(ids, 1, cfg)
        ms = (time.perf_counter() - t0) * 1000.0
        proposer.sync(ids)
        return ms

    # interleaved, so that a change of load on the machine hits every measurement alike
    times: dict[int, list[float]] = {n: [] for n in inputs}
    draft_times: list[float] = []
    target_pass(1)
    for _ in range(reps):
        for n in inputs:
            times[n].append(target_pass(n))
        draft_times.append(draft_pass())
    step = statistics.median(times[1])
    verify = {int(gamma): statistics.median(times[int(gamma) + 1]) for gamma in gammas}
    draft_step = statistics.median(draft_times)
    return {"target_step_ms": step, "verify_ms": verify,
            "verify_cost": {gamma: ms / step for gamma, ms in verify.items()},
            "draft_step_ms": draft_step, "c": draft_step / step}


@dataclass
class GammaRow:
    """One gamma of :func:`speedup_sweep`, pooled over its prompts.

    Attributes:
        gamma: draft tokens per round.
        acceptance_rate: accepted / drafted tokens, summed over prompts (vLLM's definition).
        mean_acceptance_length: 1 + accepted / drafting rounds, summed over prompts.
        tokens_per_target_call: generated tokens / target forward passes (prefill included).
        spec_ms_per_token: mean over prompts of speculative ``e2e_ms / tokens``, ms.
        base_ms_per_token: the same for target-only greedy decoding, ms (``nan`` when the sweep
            ran with ``compare=False``).
        alpha: Leviathan et al.'s per-token acceptance probability, accepted / evaluated draft
            positions summed over prompts (:attr:`~decodelab.speculative_metrics.SpecDecodingStats.alpha`).
        stats: the pooled counters (:class:`~decodelab.speculative_metrics.SpecDecodingStats`).
    """

    gamma: int
    acceptance_rate: float
    mean_acceptance_length: float
    tokens_per_target_call: float
    spec_ms_per_token: float
    base_ms_per_token: float
    alpha: float = float("nan")
    stats: SpecDecodingStats | None = None

    @property
    def speedup(self) -> float:
        """Target-only ms/token / speculative ms/token (> 1: speculative decoding is faster;
        ``nan`` without the target-only runs)."""
        return self.base_ms_per_token / self.spec_ms_per_token


def speedup_sweep(target, draft, tokenizer, prompts, max_new_tokens: int, gammas=range(1, 9), *,
                  compare: bool = True, on_prompt: Callable | None = None) -> list[GammaRow]:
    """Greedy target-only decoding vs :func:`speculative_generate` for each gamma, on this computer.

    For each gamma and each prompt it runs target-only greedy decoding (:func:`decodelab.generate`,
    if ``compare``) and then greedy :func:`speculative_generate` with ``num_speculative_tokens =
    gamma``, alternately, so that load changes hit both; EOS is ignored so both make
    ``max_new_tokens`` tokens. Counts are pooled over the prompts in one
    :class:`~decodelab.speculative_metrics.SpecDecodingStats` (acceptance rate = all accepted / all drafted tokens, as vLLM sums
    its counters; alpha likewise); ms per token = ``e2e_ms / tokens``
    (tokenisation + prefill + decoding), averaged over prompts. This is the one pooling loop the
    notebook, ``decodelab card`` and ``benchmarks/bench_speculative.py`` share.

    Args:
        target, draft, tokenizer: as in :func:`speculative_generate` (``draft`` may be a proposer).
        prompts: one prompt or a list of them.
        max_new_tokens: tokens per generation (int >= 1).
        gammas: the gammas to sweep (ints >= 1).
        compare: also run target-only decoding (needed for ``speedup``); ``False`` measures the
            acceptance only and leaves ``base_ms_per_token`` as ``nan``.
        on_prompt: called after each prompt as ``on_prompt(gamma, prompt, base, spec)`` with the
            :class:`decodelab.GenerationResult` (``None`` without ``compare``) and the
            :class:`~decodelab.speculative.SpeculativeResult`, e.g. to time a third method
            interleaved with the two.

    Raises:
        RuntimeError: a greedy speculative output differs from the target-only output (a bug:
            greedy speculative decoding must be token-identical).
        ValueError: as :func:`speculative_generate` (bad gamma, prompt, ``max_new_tokens``...).
    """
    if isinstance(prompts, str):
        prompts = [prompts]
    rows = []
    for gamma in map(int, gammas):
        base_ms = spec_ms = 0.0  # sums over prompts of ms per token
        calls = tokens = 0
        stats = SpecDecodingStats(gamma)
        for prompt in prompts:
            base = None
            if compare:
                base = generate(target, tokenizer, prompt, max_new_tokens, top_candidates=0, stop_at_eos=False)
                base_ms += base.e2e_ms / len(base.token_ids)
            spec = speculative_generate(target, draft, tokenizer, prompt, max_new_tokens,
                                        num_speculative_tokens=gamma, stop_at_eos=False)
            if base is not None and spec.token_ids != base.token_ids:
                raise RuntimeError(
                    f"gamma={gamma}, prompt={prompt!r}: 탐욕 투기적 디코딩의 출력이 대상 모델만의 출력과 다릅니다 "
                    f"(버그이거나, bf16/fp16처럼 검증 패스의 반올림이 한 토큰씩과 다른 수치 형식)")
            spec_ms += spec.e2e_ms / len(spec.token_ids)
            stats.merge(spec.stats)
            calls += spec.target_forward_calls
            tokens += len(spec.token_ids)
            if on_prompt is not None:
                on_prompt(gamma, prompt, base, spec)
        n_prompts = len(prompts)
        rows.append(GammaRow(
            gamma=gamma,
            acceptance_rate=stats.acceptance_rate,
            mean_acceptance_length=stats.mean_acceptance_length,
            tokens_per_target_call=tokens / calls,
            spec_ms_per_token=spec_ms / n_prompts,
            base_ms_per_token=base_ms / n_prompts if compare else float("nan"),
            alpha=stats.alpha,
            stats=stats,
        ))
    return rows


def exactness_experiment(target, draft, tokenizer, prompt: str, *, n: int = 4000, temperature: float = 1.0,
                         top_k: int | None = None, top_p: float | None = None, seed: int = 0, bins: int = 8) -> dict:
    """Sample the next token after ``prompt`` ``n`` times two ways, for a histogram.

    * target-only: ``n`` draws from ``p`` (the target's warped distribution);
    * speculative (gamma 1): ``n`` times, the draft draws ``d ~ q`` and :func:`verify_probabilities` accepts
      it or replaces it with a recovered token; the emitted token is recorded.

    Returns ``{"p", "q"}`` (float tensors ``(vocab,)``), ``{"target_counts", "spec_counts"}``
    (LongTensors ``(vocab,)``), ``"accept_rate"`` (fraction of accepted drafts), the binning used
    for plots: ``"top"`` (LongTensor ``(bins,)``, the ``bins`` most likely tokens under ``p``,
    highest first) and ``"binned"``, a dict of float64 tensors ``(bins + 1,)`` (those tokens + one
    bin for all the rest) with keys ``"p"``, ``"q"``, ``"target"``, ``"spec"`` (the last two are
    empirical frequencies, counts / n), and total variation distances over those bins:
    ``"tv_target"`` / ``"tv_spec"`` of the two empirical distributions from ``p`` (both only
    sampling noise, about ``sqrt(bins / n)`` at most), ``"tv_pq"`` of ``q`` from ``p``.

    Raises:
        ValueError: ``temperature == 0`` (nothing to sample).
    """
    cfg = SamplingConfig(temperature, top_k, top_p)
    if cfg.greedy:
        raise fail("temperature", temperature, "샘플링 실험에는 0보다 큰 온도가 필요합니다", "temperature > 0, 예: 1.0")
    ids = format_prompt(tokenizer, prompt)
    p = probabilities(prefill(target, torch.tensor([ids])).logits, cfg)
    q = probabilities(prefill(draft, torch.tensor([ids])).logits[: p.shape[-1]], cfg)
    p, q = same_width(p, q)  # a draft with fewer rows gives the missing tokens probability 0
    gen = make_generator(seed, p.device)
    target_samples = torch.multinomial(p, n, replacement=True, generator=gen)
    drafts = torch.multinomial(q, n, replacement=True, generator=gen)
    p2 = torch.stack([p, p])  # the second row (bonus) is never looked at: only the first token counts
    q1 = q[None]
    spec = torch.empty(n, dtype=torch.long, device=p.device)
    n_accepted = 0
    for i in range(n):
        drafted = int(drafts[i])
        accepted, token = verify_probabilities(p2, q1, [drafted], gen)
        spec[i] = drafted if accepted == 1 else token
        n_accepted += accepted
    V = p.shape[0]
    tc = torch.bincount(target_samples, minlength=V)
    sc = torch.bincount(spec, minlength=V)
    top = torch.topk(p, min(bins, V)).indices

    def binned(v):  # the `bins` most likely tokens under p, + one bin for all others
        sel = v[top].double()
        return torch.cat([sel, (v.double().sum() - sel.sum()).reshape(1)])

    b = {"p": binned(p), "q": binned(q), "target": binned(tc) / n, "spec": binned(sc) / n}
    return {
        "p": p, "q": q, "target_counts": tc, "spec_counts": sc, "accept_rate": n_accepted / n,
        "top": top, "binned": b,
        "tv_target": 0.5 * float((b["target"] - b["p"]).abs().sum()),
        "tv_spec": 0.5 * float((b["spec"] - b["p"]).abs().sum()),
        "tv_pq": 0.5 * float((b["q"] - b["p"]).abs().sum()),
    }
