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
   first rejection a replacement is drawn from ``norm(max(0, p_i - q_i))`` (the *recovered* token,
   vLLM's term) and
   the rest of the draft is thrown away; if all ``gamma`` drafts are accepted, one *bonus* token is
   drawn from ``p_{gamma+1}``. Every round therefore emits between 1 and ``gamma + 1`` tokens, and
   each emitted token is distributed exactly as if it had been sampled from ``p`` alone
   (Leviathan et al. 2023, Appendix A.1; Chen et al. 2023, Theorem 1).

Greedy decoding (temperature 0) is the special case with one-hot ``p`` and ``q``: a draft token is
accepted iff it equals the target's argmax, and the recovered token is the target's argmax, so the
output is token-identical to plain greedy decoding of the target (tested against
``target.generate(do_sample=False)``). That holds up to floating-point numerics: exactly for the
course's float32 CPU runs; under bf16/fp16 or batched GPU kernels a verification over ``gamma + 1``
positions may round differently from one-token steps (vLLM docs, "lossless guarantees").
:func:`decodelab.rejection.verify_logits` is the one verification function for both rules.

Vocabularies: target and draft may have output layers of different sizes when they share one
tokenizer (padded rows). The draft only proposes ids the target has; the target's distribution is
never cut (every output token is the target's own), and a draft ``q`` narrower than ``p`` is
zero-padded (a token the draft cannot produce has ``q = 0``), which keeps the rule exact.

Metrics: one accumulator, :class:`decodelab.speculative_metrics.SpecDecodingStats`, with vLLM's
counter names, fed once per round by ``observe_draft``, gives vLLM's ``acceptance_rate`` and
``mean_acceptance_length`` and Leviathan et al.'s per-token acceptance probability ``alpha``.

This module holds the loop (:func:`speculative_generate`, one :class:`Round` at a time), its result
types and :func:`as_proposer`. Next to it: the counters (:mod:`decodelab.speculative_metrics`), the
measurements the notebooks and benchmarks make with the loop (:mod:`decodelab.speculative_experiments`),
the drafts (:mod:`decodelab.proposers`, :mod:`decodelab.eagle`), the rejection rule
(:mod:`decodelab.rejection`) and draft trees (:mod:`decodelab.tree`).

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

from ._check import check_gamma, fail
from .decoding import cache_length, check_budget, check_prompt_ids, crop_cache, eos_ids, result_fields
from .eagle.proposer import make_proposer
from .models import format_prompt, output_rows
from .proposers import DraftModelProposer, NGramProposer, Proposal, Proposer
from .sampling import SamplingConfig, choose, make_generator
from .speculative_metrics import SpecDecodingStats

__all__ = [
    "Round",
    "SpeculativeResult",
    "as_proposer",
    "speculative_generate",
]


# --------------------------------------------------------------------------------------------
# the draft argument


def as_proposer(draft, target, tokenizer=None) -> Proposer:
    """The one place that turns a ``draft`` argument into a :class:`Proposer`.

    Args:
        draft: a ``transformers`` causal LM (-> :class:`DraftModelProposer` over the rows both
            models have), a :class:`Proposer` (returned as it is), or a name in any letter case:
            ``"ngram"`` (-> :class:`NGramProposer`; vLLM's name for prompt lookup decoding),
            ``"eagle"`` or ``"eagle-tree"`` (-> :func:`decodelab.eagle.make_proposer`, imported downward: EAGLE's proposer
            subclasses :class:`~decodelab.proposers.Proposer` and knows nothing of this loop).
        target: the target model (its output rows bound the draft's vocabulary).
        tokenizer: the shared tokenizer; a draft model with fewer output rows than
            ``len(tokenizer)`` is rejected (trained with another tokenizer, or the tokenizer has
            special tokens added after training).

    Raises:
        TypeError: ``draft`` is none of these (e.g. an object with ``propose`` that does not
            implement the whole :class:`Proposer` interface).
        ValueError: (Korean, listing the names) an unknown name (``"prompt_lookup"``: use
            ``"ngram"``), or a draft model smaller than the tokenizer's vocabulary.
    """
    if isinstance(draft, str):
        name = draft.strip().lower()  # "EAGLE", "NGram" and " eagle-tree" name the same proposers
        if name == "ngram":
            return NGramProposer(vocab_size=output_rows(target))
        if name in ("eagle", "eagle-tree"):  # the feature-level head (decodelab.eagle)
            return make_proposer(name, target)
        why = ("프롬프트 찾기(prompt lookup)는 vLLM의 이름 'ngram'으로 부릅니다" if name in ("prompt_lookup", "prompt-lookup")
               else "알 수 없는 초안 이름입니다")
        raise fail("draft", draft, why,
                   "이름 'ngram', 'eagle', 'eagle-tree' (대소문자는 가리지 않음), 초안 모델, Proposer를 상속한 객체")
    if isinstance(draft, Proposer):
        return draft
    if hasattr(draft, "get_output_embeddings") and hasattr(draft, "config"):
        rows = output_rows(draft)
        if tokenizer is not None and rows < len(tokenizer):
            raise fail("draft.vocab_size", rows,
                       f"초안 모델의 출력 행 수가 토크나이저 어휘(vocabulary) {len(tokenizer)}개보다 적습니다: 다른 "
                       f"토크나이저로 학습한 초안이거나, 토크나이저에 특수 토큰(added special tokens)을 추가했습니다",
                       f"{len(tokenizer)} 이상, 대상과 같은 토크나이저로 학습한 초안")
        return DraftModelProposer(draft, vocab_size=min(rows, output_rows(target)))
    raise fail("draft", type(draft).__name__, "초안은 transformers 인과 언어 모델, Proposer 또는 'ngram'이어야 합니다",
               "모델, Proposer를 상속한 객체, 'ngram'", TypeError)


# --------------------------------------------------------------------------------------------
# the generation loop


@dataclass(kw_only=True)
class Round:
    """One draft-and-verify round.

    Attributes:
        proposed: the drafted tokens (``len`` = this round's gamma; 0 for a plain target step,
            used when only one token is left to generate or a model-free proposer found nothing).
        accepted: how many of them the target accepted (a prefix).
        token: the recovered token (``kind == "recovered"``), the bonus (``"bonus"``), the plain
            target token (``"plain"``), or ``None`` when an accepted EOS ended the round (``"eos"``).
        kind: ``"recovered"``, ``"bonus"``, ``"plain"`` or ``"eos"``.
        emitted: the tokens this round added to the output (``proposed[:accepted]`` + ``token``).
        draft_ms: wall time of drafting, ms. verify_ms: the target's forward pass plus the
            accept/reject decisions and cache cropping, ms.
        target_cache_len: positions in the target's KV cache after the round, read from the
            cache itself (the invariant: prompt + tokens so far - 1).
        verify_forward_ms: the target's verification forward pass alone, ms (``verify_ms`` minus
            it is the round's own work: accepting, cropping the caches).
    """

    proposed: list[int]
    accepted: int
    token: int | None
    kind: str
    emitted: list[int]
    draft_ms: float
    verify_ms: float
    target_cache_len: int
    verify_forward_ms: float


def _from_stats(name: str) -> property:
    return property(lambda self: getattr(self.stats, name),
                    doc=f"``stats.{name}`` (:class:`~decodelab.speculative_metrics.SpecDecodingStats`).")


@dataclass
class SpeculativeResult:
    """What :func:`speculative_generate` returns. Times in ms; metric names follow vLLM.

    Attributes:
        prompt_ids / token_ids / text: as in :class:`decodelab.GenerationResult`.
        rounds: one :class:`Round` per target verification (the first token, from the target's
            prefill, is not a round).
        gamma: ``num_speculative_tokens`` as used: capped at ``max(1, max_new_tokens - 1)``.
        stats: the counters (:class:`~decodelab.speculative_metrics.SpecDecodingStats`);
            ``num_drafts``, ``num_draft_tokens``, ``num_accepted_tokens``,
            ``num_accepted_tokens_per_pos``, ``num_drafts_per_pos``, ``acceptance_rate``,
            ``mean_acceptance_length``, ``alpha`` and ``per_position_acceptance_rate`` read
            through to it.
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
        temperature: the sampling temperature used (0 = greedy).
    """

    prompt_ids: list[int]
    token_ids: list[int]
    text: str
    rounds: list[Round]
    gamma: int
    stats: SpecDecodingStats
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

    num_drafts = _from_stats("num_drafts")
    num_draft_tokens = _from_stats("num_draft_tokens")
    num_accepted_tokens = _from_stats("num_accepted_tokens")
    num_accepted_tokens_per_pos = _from_stats("num_accepted_tokens_per_pos")
    num_drafts_per_pos = _from_stats("num_drafts_per_pos")
    acceptance_rate = _from_stats("acceptance_rate")
    mean_acceptance_length = _from_stats("mean_acceptance_length")
    alpha = _from_stats("alpha")
    per_position_acceptance_rate = _from_stats("per_position_acceptance_rate")

    @property
    def tokens_per_target_call(self) -> float:
        """Generated tokens / target forward passes (prefill included)."""
        return len(self.token_ids) / self.target_forward_calls if self.target_forward_calls else 0.0

    @property
    def ms_per_token(self) -> float:
        """E2E / generated tokens, ms."""
        return self.e2e_ms / len(self.token_ids) if self.token_ids else 0.0


def _cut_at_eos(drafted: list[int], accepted: int, token: int | None, stop: set[int]) -> tuple[int, int | None]:
    """An accepted EOS ends the output right there: no recovered or bonus token after it.
    Returns ``(accepted, token)``, cut at the first accepted EOS (then ``token`` is ``None``)."""
    for position in range(accepted):
        if drafted[position] in stop:
            return position + 1, None
    return accepted, token


def _round_kind(drafted: list[int], accepted: int, token: int | None) -> str:
    """What ended the round (:attr:`Round.kind`)."""
    if not drafted:
        return "plain"  # no draft: one ordinary target step
    if token is None:
        return "eos"  # an accepted EOS ended the round
    if accepted == len(drafted):
        return "bonus"  # every draft accepted: the target's token after them is a bonus
    return "recovered"  # a rejection: the target's token replaces the rejected draft


class _Clock:
    """The loop's timing, kept beside the algorithm: ms since the start on a clock that stops
    while ``on_round`` runs (its time is the caller's, not decoding's)."""

    def __init__(self, already_s: float = 0.0):
        self.start = time.perf_counter() - already_s
        self.paused = 0.0

    def ms(self, t: float | None = None) -> float:
        return ((time.perf_counter() if t is None else t) - self.start - self.paused) * 1000.0

    def call_paused(self, fn, *args) -> None:
        t = time.perf_counter()
        fn(*args)
        self.paused += time.perf_counter() - t


def speculative_generate(
    target,
    draft,
    tokenizer,
    prompt: str | list[dict],
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
        target: the 대상 모델 (a ``transformers`` causal LM of any architecture); every output
            token is its own.
        draft: the 초안 모델 (a causal LM sharing the target's tokenizer; its output layer may
            be larger or smaller), any :class:`decodelab.proposers.Proposer` (e.g.
            ``NGramProposer()``), or a proposer's name, in any letter case: ``"ngram"``,
            ``"eagle"``, ``"eagle-tree"`` (see :func:`as_proposer`).
        tokenizer: the shared tokenizer.
        prompt: non-empty text, or a list of chat messages (see :func:`decodelab.models.format_prompt`).
        max_new_tokens: int >= 1; the output has exactly this many tokens unless EOS comes first.
        num_speculative_tokens: gamma, draft tokens per round (int >= 1). The last rounds draft
            fewer so that drafts + the recovered/bonus token never pass ``max_new_tokens``.
        temperature, top_k, top_p: as in :func:`decodelab.generate`, applied identically to the
            target's ``p`` and the draft's ``q`` (one :class:`~decodelab.sampling.SamplingConfig`).
            Temperature 0 = greedy: output identical to ``decodelab.generate`` and
            ``target.generate(do_sample=False)`` (up to numerics, see the module docstring).
        seed: seed of the ``torch.Generator`` used for drafting, accepting and resampling.
        stop_at_eos: stop right after an EOS token, also when it is an accepted draft token
            inside a block (no recovered or bonus token follows it).
        on_round: called after each round with the :class:`Round` and the target's KV cache
            (for inspection and live display; do not modify the cache). Time spent in it is
            excluded from the timings.

    Returns:
        :class:`SpeculativeResult`: ``token_ids``, ``text``, ``rounds``, the counters
        (``stats``; ``acceptance_rate``, ``mean_acceptance_length``, ``alpha``,
        ``per_position_acceptance_rate``), ``target_forward_calls``, ``draft_forward_calls``,
        ``ttft_ms``, ``tpot_ms``, ``itl_ms`` (one gap per round) and ``e2e_ms`` (ms).

    Raises:
        TypeError: an argument of the wrong type (e.g. ``draft`` neither a model, a proposer
            nor a name; ``tokenizer`` not a callable tokenizer with ``decode``, e.g. None).
        ValueError: an unknown proposer name (the Korean message lists the names),
            ``num_speculative_tokens < 1``, empty prompt, bad ``max_new_tokens`` /
            sampling settings, or the context would overflow.
    """
    gamma = check_gamma(num_speculative_tokens, name="num_speculative_tokens")
    if not (callable(tokenizer) and hasattr(tokenizer, "decode")):
        raise fail("tokenizer", tokenizer,
                   "토크나이저가 필요합니다: 대상 모델과 함께 불러온 토크나이저를 넣으세요 (예: pair.tokenizer)",
                   "transformers 토크나이저 (decodelab.load_models()의 .tokenizer)", TypeError)
    cfg = SamplingConfig(temperature, top_k, top_p)
    t0 = time.perf_counter()
    prompt_ids = format_prompt(tokenizer, prompt)
    tokenize_s = time.perf_counter() - t0
    check_prompt_ids(target, tokenizer, prompt_ids)
    max_new_tokens = check_budget(target, len(prompt_ids), max_new_tokens)
    # a round never drafts more than max_new_tokens - 1 tokens (one target token always follows)
    gamma = min(gamma, max(1, max_new_tokens - 1))
    # setup, not timed: building the proposer (e.g. preparing a LlamaRunner's weights) is not part
    # of answering this prompt; the clock starts after it, with the tokenisation time added back
    proposer = as_proposer(draft, target, tokenizer)
    proposer.reset()
    clock = _Clock(tokenize_s)
    calls0 = proposer.forward_calls
    gen = make_generator(seed, target.device)
    stop = eos_ids(target, tokenizer) if stop_at_eos else set()
    stats = SpecDecodingStats(gamma)
    rounds: list[Round] = []
    itl: list[float] = []

    # prefill: the target's first token (TTFT), exactly as in decodelab.generate (a proposer that
    # reads the target's hidden states, such as EAGLE, runs the target's passes itself)
    state = proposer.prefill_target(target, torch.tensor([prompt_ids]))
    cache = state.cache
    out = [choose(state.logits, cfg, gen)]
    ids = prompt_ids + out  # everything so far; the target's cache holds all but ids[-1]
    ttft = last_emit = clock.ms()

    while out[-1] not in stop and len(out) < max_new_tokens:
        # --- one round: draft, verify in one target pass, keep the accepted prefix ---
        t0 = time.perf_counter()
        draft_len = min(gamma, max_new_tokens - len(out) - 1)  # drafts + 1 target token fit the budget
        proposal = proposer.propose(ids, draft_len, cfg, gen) if draft_len > 0 else Proposal([])
        proposal = proposal.truncate(draft_len)  # a user's proposer may draft more than asked: the budget holds
        t1 = time.perf_counter()
        verification = proposer.verify_round(target, cache, ids, proposal, cfg, gen)
        drafted = verification.drafted
        accepted, token = _cut_at_eos(drafted, verification.accepted, verification.token, stop)
        emitted = drafted[:accepted] + ([] if token is None else [token])
        crop_cache(cache, len(ids) - 1 + len(emitted))  # drop rejected drafts; the newest is fed next round
        ids.extend(emitted)
        out.extend(emitted)
        proposer.sync(ids)
        t2 = time.perf_counter()

        # --- counting, beside the algorithm ---
        kind = _round_kind(drafted, accepted, token)
        if drafted:
            stats.observe_draft(len(drafted), accepted, rejected=kind == "recovered")
        rnd = Round(proposed=drafted, accepted=accepted, token=token, kind=kind, emitted=emitted,
                    draft_ms=(t1 - t0) * 1000.0, verify_ms=(t2 - t1) * 1000.0,
                    verify_forward_ms=verification.forward_s * 1000.0, target_cache_len=cache_length(cache))
        rounds.append(rnd)
        emit = clock.ms(t2)
        itl.append(emit - last_emit)
        last_emit = emit
        if on_round is not None:
            clock.call_paused(on_round, rnd, cache)

    e2e = last_emit  # E2E ends when the last token is out (vLLM); e2e - ttft = sum(itl), up to rounding
    return SpeculativeResult(
        **result_fields(tokenizer, prompt_ids, out, ttft, e2e, stop),
        rounds=rounds,
        gamma=gamma,
        stats=stats,
        target_forward_calls=1 + len(rounds),
        draft_forward_calls=proposer.forward_calls - calls0,
        draft_ms=sum(r.draft_ms for r in rounds),
        verify_ms=sum(r.verify_ms for r in rounds),
        itl_ms=itl,
        temperature=float(temperature),
    )
