"""Speculative decoding (투기적 디코딩): a draft writes, the target verifies in one pass.

The algorithm of Leviathan, Kalman & Matias 2023 ("Fast Inference from Transformers via
Speculative Decoding", arXiv 2211.17192, Algorithm 1) and Chen et al. 2023 ("Accelerating Large
Language Model Decoding with Speculative Sampling", arXiv 2302.01318, Algorithm 2):

1. **draft** — the 초안 모델 (draft model) ``q`` proposes ``gamma`` tokens ``d_1..d_gamma``, one
   forward pass each, with its own KV cache (:mod:`decodelab.proposers`);
2. **verify** — the 대상 모델 (target model) ``p`` reads the newest accepted token plus all
   ``gamma`` drafts in ONE forward pass (``logits_to_keep = gamma + 1``), which gives the
   ``gamma + 1`` distributions ``p_1..p_{gamma+1}``;
3. **accept / reject** — ``d_i`` is accepted with probability ``min(1, p_i(d_i) / q_i(d_i))``; at the
   first rejection a replacement is drawn from ``norm(max(0, p_i - q_i))`` (the *correction*) and
   the rest of the draft is thrown away; if all ``gamma`` drafts are accepted, one *bonus* token is
   drawn from ``p_{gamma+1}``. Every round therefore emits between 1 and ``gamma + 1`` tokens, and
   each emitted token is distributed exactly as if it had been sampled from ``p`` alone
   (Leviathan et al. 2023, Appendix A.1; Chen et al. 2023, Theorem 1).

Greedy decoding (temperature 0) is the special case with one-hot ``p`` and ``q``: a draft token is
accepted iff it equals the target's argmax, and the correction is the target's argmax, so the
output is token-identical to plain greedy decoding of the target (tested against
``target.generate(do_sample=False)``).

Cache invariant (documented and tested): after every round the target's KV cache holds
``len(prompt) + len(tokens) - 1`` positions — every token so far except the newest, which is fed
at the start of the next verification (as in transformers' assisted generation, which crops the
target cache to ``new_len - 1``). After every round the draft's cache is cropped to the longest
prefix it shares with the accepted text, so it never keeps a rejected token (it may lag one
token behind after a fully accepted round; the next round feeds that token).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from . import latency as _latency
from .decoding import cache_length, check_budget, crop_cache, encode_prompt, eos_ids, forward, prefill, tpot
from .models import check_same_vocabulary, vocab_size
from .proposers import DraftModelProposer, NGramProposer, Proposal, Proposer
from .sampling import SamplingConfig, choose, make_generator, probabilities

__all__ = [
    "Round",
    "SpeculativeResult",
    "SweepRow",
    "acceptance_probabilities",
    "exactness_experiment",
    "expected_speedup",
    "expected_tokens_per_call",
    "measure_costs",
    "optimal_gamma",
    "residual_distribution",
    "round_pieces",
    "speculative_generate",
    "speedup_sweep",
    "verify_step",
]


# --------------------------------------------------------------------------------------------
# the paper's formulas


def expected_tokens_per_call(alpha: float, gamma: int) -> float:
    """Expected number of tokens one target forward pass produces (Leviathan et al. 2023, Eq. 1).

    ``E[tokens] = (1 - alpha**(gamma + 1)) / (1 - alpha)``, assuming each draft token is accepted
    independently with probability ``alpha``; it equals ``gamma + 1`` when ``alpha == 1``. This is
    the *mean acceptance length* vLLM reports (1 + accepted / drafts). A thin wrapper of
    :func:`decodelab.latency.expected_tokens_per_call` (the one, torch-free implementation).

    Args:
        alpha: acceptance rate in [0, 1] (``E[sum_x min(p(x), q(x))]`` = 1 - total variation).
        gamma: draft tokens per round (int >= 1, as ``num_speculative_tokens``).

    Raises:
        ValueError: ``alpha`` outside [0, 1] or ``gamma`` not an int >= 1.
    """
    return _latency.expected_tokens_per_call(alpha, gamma)


def expected_speedup(alpha: float, gamma: int, c: float, *, verify_cost: float = 1.0) -> float:
    """Expected wall-time speedup over target-only decoding (Leviathan et al. 2023, Theorem 3.8).

    ``speedup = (1 - alpha**(gamma + 1)) / ((1 - alpha) * (gamma * c + 1))``: the tokens per round
    (:func:`expected_tokens_per_call`) divided by the cost of a round in target-step units
    (``gamma`` draft steps of relative cost ``c`` + one verification, assumed to cost one target
    step). Example from the paper (Sec. 4 / our facts file ``speculative.md``): alpha 0.75,
    gamma 7, c 0.02 -> 3.16 (the paper rounds it to 3.2; measured there: 3.4x). A thin wrapper of
    :func:`decodelab.latency.speculative_speedup` (the one, torch-free implementation).

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: draft tokens per round (int >= 1).
        c: draft step time / target step time (>= 0), e.g. 0.05 for a 20x cheaper draft.
        verify_cost: time of one verification of ``gamma + 1`` tokens in target-step units. The
            paper takes 1 (memory-bound decode: reading the weights dominates, however many
            positions are scored); on a CPU it is measurably above 1 (see :func:`measure_costs`).

    Raises:
        ValueError: ``alpha`` outside [0, 1], ``gamma`` not an int >= 1, ``c < 0`` or
            ``verify_cost <= 0``.
    """
    return _latency.speculative_speedup(alpha, gamma, c, verify_cost=verify_cost)


def optimal_gamma(alpha: float, c: float, max_gamma: int = 16) -> int:
    """The ``gamma`` in ``1..max_gamma`` that maximises :func:`expected_speedup` (ties: smaller).

    Raises:
        ValueError: ``alpha`` outside [0, 1], ``c < 0``, or ``max_gamma`` not an int >= 1.
    """
    if isinstance(max_gamma, bool) or not isinstance(max_gamma, int) or max_gamma < 1:
        raise ValueError(f"max_gamma={max_gamma!r}: 살펴볼 최대 초안 토큰 수는 1 이상의 정수여야 합니다.")
    return max(range(1, max_gamma + 1), key=lambda g: (expected_speedup(alpha, g, c), -g))


# --------------------------------------------------------------------------------------------
# one verification: the rejection rule as a pure function


def acceptance_probabilities(p: torch.Tensor, q: torch.Tensor | None, tokens: torch.Tensor) -> torch.Tensor:
    """``min(1, p_i(d_i) / q_i(d_i))`` for each draft position i (Leviathan et al. 2023, Alg. 1).

    Args:
        p: target probabilities, shape ``(>= gamma, vocab)`` (only the first ``gamma`` rows used).
        q: draft probabilities ``(gamma, vocab)``, or ``None`` for a deterministic draft (one-hot:
            ``q_i(d_i) = 1``, so the acceptance probability is ``p_i(d_i)``).
        tokens: LongTensor ``(gamma,)`` of draft tokens ``d_i``.

    Returns:
        Tensor ``(gamma,)`` in [0, 1]. A token the draft gave probability 0 (it could not have
        drawn it) gets 0, never NaN.
    """
    g = tokens.shape[0]
    rows = torch.arange(g)
    p_d = p[rows, tokens]
    if q is None:
        return p_d.clamp(0.0, 1.0)
    q_d = q[rows, tokens]
    ratio = p_d / q_d.clamp_min(torch.finfo(q_d.dtype).tiny)
    return torch.where(q_d > 0, ratio.clamp(max=1.0), torch.zeros_like(ratio))


def residual_distribution(p_row: torch.Tensor, q_row: torch.Tensor | None, token: int | None = None) -> torch.Tensor:
    """The correction distribution ``norm(max(0, p - q))`` after a rejection (shape ``(vocab,)``).

    ``q_row=None`` means a one-hot draft at ``token``. When ``max(0, p - q)`` is all zeros (p == q,
    where a rejection has probability 0 but float rounding can still produce one) it returns
    ``p_row`` itself, so the result is always a proper distribution, never NaN. It is a plain
    normalisation, not a softmax (a past transformers bug, see ``speculative.md``).
    """
    if q_row is None:
        r = p_row.clone()
        r[int(token)] = 0.0
    else:
        r = (p_row - q_row).clamp_min_(0.0)
    s = r.sum()
    if not bool(s > 0) or not bool(torch.isfinite(s)):
        return p_row / p_row.sum()
    return r / s


def verify_step(p: torch.Tensor, q: torch.Tensor | None, draft_tokens, generator: torch.Generator | None = None):
    """One verification with the rejection rule; returns ``(n_accepted, next_token)``.

    Args:
        p: target probabilities ``(gamma + 1, vocab)`` at the draft positions and one beyond.
        q: draft probabilities ``(gamma, vocab)`` the drafts were drawn from, or ``None``
            (deterministic / one-hot draft).
        draft_tokens: ``gamma`` ints ``d_1..d_gamma``.
        generator: ``torch.Generator`` for the uniforms and the resampling (``None``: global RNG).

    Returns:
        ``(k, t)``: the first ``k`` drafts are accepted (0 <= k <= gamma) and ``t`` follows them —
        drawn from :func:`residual_distribution` of row ``k`` if ``k < gamma`` (the correction),
        else from ``p[gamma]`` (the bonus token). The emitted tokens ``d_1..d_k, t`` are
        distributed exactly as ``k + 1`` successive draws from ``p`` (tested by enumeration).
    """
    g = len(draft_tokens)
    if g == 0:
        return 0, int(torch.multinomial(p[0], 1, generator=generator))
    toks = torch.as_tensor(draft_tokens, dtype=torch.long)
    a = acceptance_probabilities(p, q, toks)
    u = torch.rand(g, generator=generator, dtype=a.dtype)
    rejected = (u >= a).nonzero()
    if rejected.numel() == 0:
        return g, int(torch.multinomial(p[g], 1, generator=generator))
    k = int(rejected[0, 0])
    r = residual_distribution(p[k], None if q is None else q[k], int(toks[k]))
    return k, int(torch.multinomial(r, 1, generator=generator))


# --------------------------------------------------------------------------------------------
# the generation loop


@dataclass
class Round:
    """One draft-and-verify round.

    Attributes:
        proposed: the drafted tokens (``len`` = this round's gamma; 0 for a plain target step,
            used when only one token is left to generate or a model-free proposer found nothing).
        accepted: how many of them the target accepted (a prefix).
        token: the correction (``kind == "correction"``), the bonus (``"bonus"``), the plain
            target token (``"plain"``), or ``None`` when an accepted EOS ended the round (``"eos"``).
        kind: ``"correction"``, ``"bonus"``, ``"plain"`` or ``"eos"``.
        emitted: the tokens this round added to the output (``proposed[:accepted]`` + ``token``).
        draft_ms: wall time of drafting, ms. verify_ms: the target's forward pass plus the
            accept/reject decisions and cache cropping, ms.
        target_cache_len: positions in the target's KV cache after the round, read from the
            cache itself (the invariant: prompt + tokens so far - 1).
    """

    proposed: list[int]
    accepted: int
    token: int | None
    kind: str
    emitted: list[int]
    draft_ms: float
    verify_ms: float
    target_cache_len: int


@dataclass
class SpeculativeResult:
    """What :func:`speculative_generate` returns. Times in ms; metric names follow vLLM.

    Attributes:
        prompt_ids / token_ids / text: as in :class:`decodelab.GenerationResult`.
        rounds: one :class:`Round` per target verification (the first token, from the target's
            prefill, is not a round).
        gamma: ``num_speculative_tokens`` as used: capped at ``max(1, max_new_tokens - 1)``.
        num_drafts: rounds that drafted at least one token (vLLM ``spec_decode_num_drafts``).
        num_draft_tokens: drafted tokens (``spec_decode_num_draft_tokens``).
        num_accepted_tokens: accepted drafted tokens (``spec_decode_num_accepted_tokens``).
        num_accepted_tokens_per_pos: accepted count at draft position 0..gamma-1
            (``spec_decode_num_accepted_tokens_per_pos``).
        num_drafts_per_pos: how many drafts reached position i (denominator per position).
        target_forward_calls: target forward passes (prefill + one per round).
        draft_forward_calls: draft forward passes (0 for a model-free proposer).
        ttft_ms: tokenisation + target prefill + first token (draft prefill is in round 1;
            building the proposer is setup and not timed).
        tpot_ms: (E2E - TTFT) / (n - 1) (vLLM's definition; 0 when n == 1).
        e2e_ms: from the start until the last token is out (time spent in ``on_round`` excluded).
        itl_ms: inter-token latencies, one per round, ms: the gap between the emission of one
            chunk of tokens and the next (the first gap is measured from the first token). As in
            vLLM's benchmark for speculative decoding, one chunk can carry several tokens, so
            ``len(itl_ms) == len(rounds)`` (not ``n - 1``) and ``sum(itl_ms) ~= e2e_ms - ttft_ms``.
        draft_ms / verify_ms: sums over rounds.
        stopped_by: ``"eos"`` or ``"max_new_tokens"``.
    """

    prompt_ids: list[int]
    token_ids: list[int]
    text: str
    rounds: list[Round]
    gamma: int
    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    num_accepted_tokens_per_pos: list[int]
    num_drafts_per_pos: list[int]
    target_forward_calls: int
    draft_forward_calls: int
    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    draft_ms: float
    verify_ms: float
    stopped_by: str
    itl_ms: list[float] = field(default_factory=list)
    temperature: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def acceptance_rate(self) -> float:
        """Accepted / drafted tokens (vLLM: ``num_accepted_tokens / num_draft_tokens``); 0 if none."""
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        """1 + accepted / drafts (vLLM's mean acceptance length): tokens per drafting round."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else 1.0

    @property
    def per_position_acceptance_rate(self) -> list[float]:
        """Accepted fraction at each draft position (vLLM divides per-position accepted counts
        by ``num_drafts``; here the denominator is the drafts that reached that position, which
        is the same when every round drafts ``gamma`` tokens)."""
        return [a / n if n else 0.0 for a, n in zip(self.num_accepted_tokens_per_pos, self.num_drafts_per_pos)]

    @property
    def tokens_per_target_call(self) -> float:
        """Generated tokens / target forward passes (prefill included)."""
        return len(self.token_ids) / self.target_forward_calls if self.target_forward_calls else 0.0

    @property
    def ms_per_token(self) -> float:
        """E2E / generated tokens, ms."""
        return self.e2e_ms / len(self.token_ids) if self.token_ids else 0.0


def _check_gamma(gamma) -> int:
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise ValueError(
            f"num_speculative_tokens={gamma!r}: 초안 토큰 수(gamma)는 1 이상의 정수여야 합니다 "
            f"(예: 4). 초안 없이 생성하려면 decodelab.generate를 쓰세요."
        )
    return gamma


def _as_proposer(target, draft, tokenizer, max_len: int) -> Proposer:
    if isinstance(draft, str):
        if draft in ("ngram", "prompt_lookup"):
            return NGramProposer(vocab_size=vocab_size(target))
        raise ValueError(f"draft={draft!r}: 모델 객체, Proposer, 또는 'ngram' 중 하나를 주세요.")
    if hasattr(draft, "propose") and hasattr(draft, "reset"):
        vs = getattr(draft, "vocab_size", None)
        if vs is not None and vs != vocab_size(target):
            raise ValueError(
                f"초안(proposer)의 어휘 크기 {vs}가 대상 모델의 {vocab_size(target)}와 다릅니다. "
                f"같은 토크나이저를 쓰는 초안을 주세요. / proposer vocabulary differs from the target's"
            )
        return draft
    if not hasattr(draft, "get_output_embeddings"):
        raise TypeError(f"draft: transformers 인과 언어 모델이나 Proposer가 필요합니다 (받은 것: {type(draft).__name__}).")
    check_same_vocabulary(target, draft, tokenizer)
    return DraftModelProposer(draft, max_len=max_len)


def speculative_generate(
    target,
    draft,
    tokenizer,
    prompt: str,
    max_new_tokens: int,
    *,
    num_speculative_tokens: int = 4,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    stop_at_eos: bool = True,
    on_round: Callable[[Round, object], None] | None = None,
) -> SpeculativeResult:
    """Generate with speculative decoding: draft ``gamma`` tokens, verify them in one target pass.

    Args:
        target: the 대상 모델 (a ``transformers`` causal LM); every output token is its own.
        draft: the 초안 모델 (a causal LM with the same vocabulary), or any
            :class:`decodelab.proposers.Proposer` (e.g. ``NGramProposer()``), or ``"ngram"``.
        tokenizer: the shared tokenizer.
        prompt: non-empty text.
        max_new_tokens: int >= 1; the output has exactly this many tokens unless EOS comes first.
        num_speculative_tokens: gamma, draft tokens per round (int >= 1). The last rounds draft
            fewer so that drafts + the correction/bonus never pass ``max_new_tokens``.
        temperature, top_k, top_p: as in :func:`decodelab.generate`, applied identically to the
            target's ``p`` and the draft's ``q`` (one :class:`~decodelab.sampling.SamplingConfig`).
            Temperature 0 = greedy: output identical to ``decodelab.generate`` and
            ``target.generate(do_sample=False)``.
        seed: seed of the ``torch.Generator`` used for drafting, accepting and resampling.
        stop_at_eos: stop right after an EOS token, also when it is an accepted draft token
            inside a block (no correction or bonus follows it).
        on_round: called after each round with the :class:`Round` and the target's KV cache
            (for inspection and live display; do not modify the cache). Time spent in it is
            excluded from the timings.

    Returns:
        :class:`SpeculativeResult`: ``token_ids``, ``text``, ``rounds`` and vLLM-named metrics
        (``acceptance_rate``, ``mean_acceptance_length``, ``per_position_acceptance_rate``,
        ``target_forward_calls``, ``draft_forward_calls``), ``ttft_ms``, ``tpot_ms``, ``itl_ms``
        (one gap per round) and ``e2e_ms`` (ms).

    Raises:
        ValueError: ``num_speculative_tokens < 1``, draft/target vocabularies differ, empty
            prompt, bad ``max_new_tokens`` / sampling settings, or the context would overflow.
    """
    gamma = _check_gamma(num_speculative_tokens)
    cfg = SamplingConfig(temperature, top_k, top_p)
    t0 = time.perf_counter()
    prompt_ids = encode_prompt(tokenizer, prompt)
    tokenize_s = time.perf_counter() - t0
    check_budget(target, len(prompt_ids), max_new_tokens)
    # a round never drafts more than max_new_tokens - 1 tokens (one target token always follows),
    # so a larger gamma only costs memory: size buffers and per-position counters by what is usable
    gamma = min(gamma, max(1, max_new_tokens - 1))
    # setup, not timed: building the proposer (e.g. preparing a LlamaRunner's weights) is not part
    # of answering this prompt; the clock starts after it, with the tokenisation time added back
    proposer = _as_proposer(target, draft, tokenizer, len(prompt_ids) + max_new_tokens + gamma + 1)
    proposer.reset()
    t_start = time.perf_counter() - tokenize_s
    sync = getattr(proposer, "sync", None)
    calls0 = proposer.forward_calls
    gen = make_generator(seed)
    stop = eos_ids(target, tokenizer) if stop_at_eos else set()
    greedy = cfg.greedy

    # prefill: the target's first token (TTFT), exactly as in decodelab.generate
    state = prefill(target, torch.tensor([prompt_ids]))
    cache = state.cache
    first = choose(state.logits, cfg, gen)
    ids = prompt_ids + [first]  # everything so far; the cache holds all but ids[-1]
    out = [first]
    ttft = (time.perf_counter() - t_start) * 1000.0
    rounds: list[Round] = []
    acc_pos = [0] * gamma
    drafts_pos = [0] * gamma
    n_drafts = n_draft_tokens = n_accepted = 0
    target_calls = 1
    stopped_by = "eos" if first in stop else "max_new_tokens"
    draft_ms_total = verify_ms_total = 0.0
    paused = 0.0  # seconds spent in on_round, excluded from e2e
    itl: list[float] = []
    last_emit = ttft  # ms on the clock that excludes `paused`

    while stopped_by != "eos" and len(out) < max_new_tokens:
        remaining = max_new_tokens - len(out)
        g = min(gamma, remaining - 1)  # drafts + 1 target token never pass max_new_tokens
        t0 = time.perf_counter()
        prop = proposer.propose(ids, g, cfg, gen) if g > 0 else Proposal([], None)
        drafted = prop.tokens[:g]
        g = len(drafted)
        t1 = time.perf_counter()

        # verification: the newest token + all drafts in ONE target forward pass
        logits = forward(target, torch.tensor([[ids[-1]] + drafted]), cache, logits_to_keep=g + 1)[0]
        target_calls += 1
        if greedy:
            best = logits.argmax(-1).tolist()  # target's argmax after each prefix, g + 1 values
            k = 0
            while k < g and drafted[k] == best[k]:
                k += 1
            token = best[k]
        else:
            p = probabilities(logits, cfg)
            q = None if prop.q is None else prop.q[:g]
            k, token = verify_step(p, q, drafted, gen)
        kind = "plain" if g == 0 else ("bonus" if k == g else "correction")
        # an accepted EOS ends the output right there: no correction / bonus after it
        for j in range(k):
            if drafted[j] in stop:
                k, token, kind = j + 1, None, "eos"
                break
        emitted = drafted[:k] + ([] if token is None else [token])
        # crop: the cache holds ids + drafted (len(ids) + g positions); keep all accepted
        # positions but the newest token's: len(ids) - 1 + len(emitted)
        crop_cache(cache, len(ids) - 1 + len(emitted))
        ids.extend(emitted)
        if sync is not None:
            sync(ids)  # the draft drops its rejected positions too
        t2 = time.perf_counter()
        emit = (t2 - t_start - paused) * 1000.0  # this round's chunk is out
        itl.append(emit - last_emit)
        last_emit = emit

        if g > 0:
            n_drafts += 1
            n_draft_tokens += g
            n_accepted += k
            for i in range(g):
                drafts_pos[i] += 1
            for i in range(k):
                acc_pos[i] += 1
        out.extend(emitted)
        rnd = Round(drafted, k, token, kind, emitted, (t1 - t0) * 1000.0, (t2 - t1) * 1000.0, cache_length(cache))
        rounds.append(rnd)
        draft_ms_total += (t1 - t0) * 1000.0
        verify_ms_total += (t2 - t1) * 1000.0
        if kind == "eos" or (token is not None and token in stop):
            stopped_by = "eos"
        if on_round is not None:
            t3 = time.perf_counter()
            on_round(rnd, cache)
            paused += time.perf_counter() - t3

    e2e = last_emit  # E2E ends when the last token is out (vLLM); e2e - ttft = sum(itl), up to rounding
    n = len(out)
    return SpeculativeResult(
        prompt_ids=prompt_ids,
        token_ids=out,
        text=tokenizer.decode(out, skip_special_tokens=True),
        rounds=rounds,
        gamma=gamma,
        num_drafts=n_drafts,
        num_draft_tokens=n_draft_tokens,
        num_accepted_tokens=n_accepted,
        num_accepted_tokens_per_pos=acc_pos,
        num_drafts_per_pos=drafts_pos,
        target_forward_calls=target_calls,
        draft_forward_calls=proposer.forward_calls - calls0,
        ttft_ms=ttft,
        tpot_ms=tpot(e2e, ttft, n),
        e2e_ms=e2e,
        draft_ms=draft_ms_total,
        verify_ms=verify_ms_total,
        stopped_by=stopped_by,
        itl_ms=itl,
        temperature=float(temperature),
    )


def round_pieces(result: SpeculativeResult, tokenizer) -> list[dict]:
    """Round-by-round token texts for display (used by the notebook's HTML view).

    Returns one dict per round: ``{"round": i, "tokens": [(text, status), ...]}`` where status is
    ``"accepted"``, ``"rejected"`` (drafted but thrown away), ``"corrected"``, ``"bonus"``,
    ``"plain"``; texts are each token's own string (byte-level pieces decoded one by one).
    """
    out = []
    for i, r in enumerate(result.rounds, start=1):
        toks = []
        for j, t in enumerate(r.proposed):
            toks.append((t, "accepted" if j < r.accepted else "rejected"))
        if r.token is not None:
            toks.append((r.token, {"correction": "corrected", "bonus": "bonus", "plain": "plain"}[r.kind]))
        out.append({"round": i, "tokens": [(tokenizer.decode([t]), s) for t, s in toks]})
    return out



# --------------------------------------------------------------------------------------------
# measurements used by notebook 04 and benchmarks/bench_speculative.py


def measure_costs(target, draft, tokenizer, prompt: str, *, gammas=(4,), reps: int = 20) -> dict:
    """Median step times on this computer, in ms, and the cost ratio ``c``.

    Returns a dict with ``target_step_ms`` (one target decode step, 1 token), ``verify_ms``
    (``{gamma: ms}`` for one verification of ``gamma + 1`` tokens), ``verify_cost``
    (``{gamma: verify_ms / target_step_ms}``), ``draft_step_ms`` (one draft forward pass as
    :func:`speculative_generate` runs it, or as ``draft`` runs it if it is a proposer) and ``c`` =
    draft step / target step (Leviathan et al. 2023, Sec. 3.4).
    """
    import statistics

    ids = encode_prompt(tokenizer, prompt)
    cache = prefill(target, torch.tensor([ids])).cache
    inputs = {n: torch.tensor([[ids[-1]] * n]) for n in [1] + [int(g) + 1 for g in gammas]}

    def target_pass(n):  # ms of one forward pass over n new tokens; the cache is restored after
        t0 = time.perf_counter()
        forward(target, inputs[n], cache, logits_to_keep=n)
        ms = (time.perf_counter() - t0) * 1000.0
        crop_cache(cache, len(ids))
        return ms

    prop = DraftModelProposer(draft) if hasattr(draft, "get_output_embeddings") else draft
    cfg = SamplingConfig(0.0)
    prop.reset()
    prop.propose(ids, 1, cfg)

    def draft_pass():  # the last token is re-fed: exactly one draft forward pass
        t0 = time.perf_counter()
        prop.propose(ids, 1, cfg)
        return (time.perf_counter() - t0) * 1000.0

    # interleaved, so that a change of load on the machine hits every measurement alike
    times: dict[int, list[float]] = {n: [] for n in inputs}
    ds: list[float] = []
    target_pass(1)
    for _ in range(reps):
        for n in inputs:
            times[n].append(target_pass(n))
        ds.append(draft_pass())
    step = statistics.median(times[1])
    verify = {int(g): statistics.median(times[int(g) + 1]) for g in gammas}
    d = statistics.median(ds)
    return {"target_step_ms": step, "verify_ms": verify, "verify_cost": {g: v / step for g, v in verify.items()},
            "draft_step_ms": d, "c": d / step}


@dataclass
class SweepRow:
    """One gamma of :func:`speedup_sweep`, pooled over its prompts.

    Attributes:
        gamma: draft tokens per round.
        acceptance_rate: accepted / drafted tokens, summed over prompts (vLLM's definition).
        mean_acceptance_length: 1 + accepted / drafting rounds, summed over prompts.
        tokens_per_target_call: generated tokens / target forward passes (prefill included).
        spec_ms_per_token: mean over prompts of speculative ``e2e_ms / tokens``, ms.
        base_ms_per_token: the same for target-only greedy decoding, ms (``nan`` when the sweep
            ran with ``compare=False``).
    """

    gamma: int
    acceptance_rate: float
    mean_acceptance_length: float
    tokens_per_target_call: float
    spec_ms_per_token: float
    base_ms_per_token: float

    @property
    def speedup(self) -> float:
        """Target-only ms/token / speculative ms/token (> 1: speculative decoding is faster;
        ``nan`` without the target-only runs)."""
        return self.base_ms_per_token / self.spec_ms_per_token


def speedup_sweep(target, draft, tokenizer, prompts, max_new_tokens: int, gammas=range(1, 9), *,
                  compare: bool = True, on_prompt: Callable | None = None) -> list[SweepRow]:
    """Greedy target-only decoding vs :func:`speculative_generate` for each gamma, on this computer.

    For each gamma and each prompt it runs target-only greedy decoding (:func:`decodelab.generate`,
    if ``compare``) and then greedy :func:`speculative_generate` with ``num_speculative_tokens =
    gamma``, alternately, so that load changes hit both; EOS is ignored so both make
    ``max_new_tokens`` tokens. Counts are pooled over the prompts (acceptance rate = all accepted /
    all drafted tokens, as vLLM sums its counters); ms per token = ``e2e_ms / tokens``
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
            :class:`SpeculativeResult`, e.g. to time a third method interleaved with the two.

    Raises:
        RuntimeError: a greedy speculative output differs from the target-only output (a bug:
            greedy speculative decoding must be token-identical).
        ValueError: as :func:`speculative_generate` (bad gamma, prompt, ``max_new_tokens``...).
    """
    from .decoding import generate

    if isinstance(prompts, str):
        prompts = [prompts]
    rows = []
    for g in gammas:
        base = spec = 0.0
        drafted = accepted = drafts = calls = tokens = 0
        for p in prompts:
            r0 = None
            if compare:
                r0 = generate(target, tokenizer, p, max_new_tokens, top_candidates=0, stop_at_eos=False)
                base += r0.e2e_ms / len(r0.token_ids)
            r1 = speculative_generate(target, draft, tokenizer, p, max_new_tokens, num_speculative_tokens=g,
                                      stop_at_eos=False)
            if r0 is not None and r1.token_ids != r0.token_ids:
                raise RuntimeError(
                    f"gamma={g}, prompt={p!r}: 탐욕 투기적 디코딩의 출력이 대상 모델만의 출력과 다릅니다 (버그). "
                    f"/ greedy speculative output differs from target-only output"
                )
            spec += r1.e2e_ms / len(r1.token_ids)
            drafted += r1.num_draft_tokens
            accepted += r1.num_accepted_tokens
            drafts += r1.num_drafts
            calls += r1.target_forward_calls
            tokens += len(r1.token_ids)
            if on_prompt is not None:
                on_prompt(int(g), p, r0, r1)
        k = len(prompts)
        rows.append(SweepRow(
            gamma=int(g),
            acceptance_rate=accepted / drafted if drafted else 0.0,
            mean_acceptance_length=1.0 + accepted / drafts if drafts else 1.0,
            tokens_per_target_call=tokens / calls,
            spec_ms_per_token=spec / k,
            base_ms_per_token=base / k if compare else float("nan"),
        ))
    return rows


def exactness_experiment(target, draft, tokenizer, prompt: str, *, n: int = 4000, temperature: float = 1.0,
                         top_k: int | None = None, top_p: float | None = None, seed: int = 0, bins: int = 8) -> dict:
    """Sample the next token after ``prompt`` ``n`` times two ways, for a histogram.

    * target-only: ``n`` draws from ``p`` (the target's warped distribution);
    * speculative (gamma 1): ``n`` times, the draft draws ``d ~ q`` and :func:`verify_step` accepts
      it or replaces it with a correction; the emitted token is recorded.

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
        raise ValueError("temperature=0: 샘플링 실험에는 temperature > 0 이 필요합니다.")
    ids = encode_prompt(tokenizer, prompt)
    p = probabilities(prefill(target, torch.tensor([ids])).logits, cfg)
    q = probabilities(prefill(draft, torch.tensor([ids])).logits, cfg)
    gen = make_generator(seed)
    target_samples = torch.multinomial(p, n, replacement=True, generator=gen)
    drafts = torch.multinomial(q, n, replacement=True, generator=gen)
    p2 = torch.stack([p, p])  # the second row (bonus) is never looked at: only the first token counts
    q1 = q[None]
    spec = torch.empty(n, dtype=torch.long)
    acc = 0
    for i in range(n):
        d = int(drafts[i])
        k, t = verify_step(p2, q1, [d], gen)
        spec[i] = d if k == 1 else t
        acc += k
    V = p.shape[0]
    tc = torch.bincount(target_samples, minlength=V)
    sc = torch.bincount(spec, minlength=V)
    top = torch.topk(p, min(bins, V)).indices

    def binned(v):  # the `bins` most likely tokens under p, + one bin for all others
        sel = v[top].double()
        return torch.cat([sel, (v.double().sum() - sel.sum()).reshape(1)])

    b = {"p": binned(p), "q": binned(q), "target": binned(tc) / n, "spec": binned(sc) / n}
    return {
        "p": p, "q": q, "target_counts": tc, "spec_counts": sc, "accept_rate": acc / n,
        "top": top, "binned": b,
        "tv_target": 0.5 * float((b["target"] - b["p"]).abs().sum()),
        "tv_spec": 0.5 * float((b["spec"] - b["p"]).abs().sum()),
        "tv_pq": 0.5 * float((b["q"] - b["p"]).abs().sum()),
    }
