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
:func:`verify_logits` is the one verification function for both rules.

Vocabularies: target and draft may have output layers of different sizes when they share one
tokenizer (padded rows). The draft only proposes ids the target has; the target's distribution is
never cut (every output token is the target's own), and a draft ``q`` narrower than ``p`` is
zero-padded (a token the draft cannot produce has ``q = 0``), which keeps the rule exact.

Metrics: one accumulator, :class:`SpecDecodingStats`, with vLLM's counter names, fed once per
round by ``observe_draft``, gives vLLM's ``acceptance_rate`` and ``mean_acceptance_length`` and
Leviathan et al.'s per-token acceptance probability ``alpha``.

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
from .decoding import cache_length, check_budget, check_prompt_ids, crop_cache, eos_ids, forward, prefill, result_fields
from .eagle.proposer import make_proposer
from .models import format_prompt
from .models import vocab_size as _rows  # the parameter name vocab_size is taken
from .proposers import DraftModelProposer, NGramProposer, Proposal, Proposer
from .rejection import same_width, verify_probabilities
from .sampling import SamplingConfig, choose, make_generator, probabilities

__all__ = [
    "Round",
    "SpecDecodingStats",
    "SpeculativeResult",
    "SweepRow",
    "as_proposer",
    "exactness_experiment",
    "measure_costs",
    "round_pieces",
    "speculative_generate",
    "speedup_sweep",
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
            return NGramProposer(vocab_size=_rows(target))
        if name in ("eagle", "eagle-tree"):  # the feature-level head (decodelab.eagle)
            return make_proposer(name, target)
        why = ("프롬프트 찾기(prompt lookup)는 vLLM의 이름 'ngram'으로 부릅니다" if name in ("prompt_lookup", "prompt-lookup")
               else "알 수 없는 초안 이름입니다")
        raise fail("draft", draft, why,
                   "이름 'ngram', 'eagle', 'eagle-tree' (대소문자는 가리지 않음), 초안 모델, Proposer를 상속한 객체")
    if isinstance(draft, Proposer):
        return draft
    if hasattr(draft, "get_output_embeddings") and hasattr(draft, "config"):
        rows = _rows(draft)
        if tokenizer is not None and rows < len(tokenizer):
            raise fail("draft.vocab_size", rows,
                       f"초안 모델의 출력 행 수가 토크나이저 어휘(vocabulary) {len(tokenizer)}개보다 적습니다: 다른 "
                       f"토크나이저로 학습한 초안이거나, 토크나이저에 특수 토큰(added special tokens)을 추가했습니다",
                       f"{len(tokenizer)} 이상, 대상과 같은 토크나이저로 학습한 초안")
        return DraftModelProposer(draft, vocab_size=min(rows, _rows(target)))
    raise fail("draft", type(draft).__name__, "초안은 transformers 인과 언어 모델, Proposer 또는 'ngram'이어야 합니다",
               "모델, Proposer를 상속한 객체, 'ngram'", TypeError)


# --------------------------------------------------------------------------------------------
# the metrics: one accumulator


@dataclass
class SpecDecodingStats:
    """Counters of speculative decoding, with vLLM's names (``vllm/v1/spec_decode/metrics.py``,
    ``SpecDecodingStats.observe_draft``), plus what Leviathan et al.'s ``alpha`` needs.

    One instance is fed once per drafting round by :meth:`observe_draft`
    (:func:`speculative_generate`); :meth:`merge` pools several (:func:`speedup_sweep`).

    Attributes:
        num_spec_tokens: gamma (length of the per-position lists).
        num_drafts: drafting rounds (vLLM ``spec_decode_num_drafts``).
        num_draft_tokens: drafted tokens (``spec_decode_num_draft_tokens``).
        num_accepted_tokens: accepted drafted tokens (``spec_decode_num_accepted_tokens``).
        num_accepted_tokens_per_pos: accepted count at draft position 0..gamma-1
            (``spec_decode_num_accepted_tokens_per_pos``).
        num_drafts_per_pos: drafts that reached position i (a round drafting fewer than gamma
            tokens, e.g. the last one, does not reach the later positions).
        num_evaluated_tokens: draft positions the verification actually decided: a round whose
            first rejection is at 0-based position k evaluated k + 1 positions; a round with no
            rejection evaluated all of its accepted drafts.
    """

    num_spec_tokens: int
    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    num_accepted_tokens_per_pos: list[int] = field(default_factory=list)
    num_drafts_per_pos: list[int] = field(default_factory=list)
    num_evaluated_tokens: int = 0

    def __post_init__(self) -> None:
        for pos in (self.num_accepted_tokens_per_pos, self.num_drafts_per_pos):
            pos.extend([0] * (self.num_spec_tokens - len(pos)))

    def observe_draft(self, num_draft_tokens: int, num_accepted_tokens: int, rejected: bool | None = None) -> None:
        """Count one drafting round: ``num_draft_tokens`` drafted, the first
        ``num_accepted_tokens`` accepted. ``rejected`` says whether the round ended with a
        rejection (default: ``num_accepted_tokens < num_draft_tokens``; an accepted EOS ends a
        round early without one)."""
        if rejected is None:
            rejected = num_accepted_tokens < num_draft_tokens
        self.num_drafts += 1
        self.num_draft_tokens += num_draft_tokens
        self.num_accepted_tokens += num_accepted_tokens
        self.num_evaluated_tokens += num_accepted_tokens + int(rejected)
        for i in range(num_draft_tokens):
            self.num_drafts_per_pos[i] += 1
        for i in range(num_accepted_tokens):
            self.num_accepted_tokens_per_pos[i] += 1

    def merge(self, other: "SpecDecodingStats") -> "SpecDecodingStats":
        """Add ``other``'s counts to these (pooling, as vLLM sums its counters); returns self."""
        if other.num_spec_tokens > self.num_spec_tokens:
            self.num_spec_tokens = other.num_spec_tokens
            self.__post_init__()
        self.num_drafts += other.num_drafts
        self.num_draft_tokens += other.num_draft_tokens
        self.num_accepted_tokens += other.num_accepted_tokens
        self.num_evaluated_tokens += other.num_evaluated_tokens
        for i, (a, n) in enumerate(zip(other.num_accepted_tokens_per_pos, other.num_drafts_per_pos)):
            self.num_accepted_tokens_per_pos[i] += a
            self.num_drafts_per_pos[i] += n
        return self

    @property
    def acceptance_rate(self) -> float:
        """Accepted / drafted tokens (vLLM: ``num_accepted_tokens / num_draft_tokens``); 0 if none.
        Lower than ``alpha`` by construction: drafts after a rejection count as not accepted."""
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        """1 + accepted / drafts (vLLM's mean acceptance length): tokens per drafting round."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else 1.0

    @property
    def alpha(self) -> float:
        """Leviathan et al.'s per-token acceptance probability, estimated as accepted draft
        positions / draft positions actually evaluated (``num_evaluated_tokens``; the maximum-
        likelihood estimate when each position is accepted independently with probability
        alpha). The alpha of ``expected_tokens_per_call(alpha, gamma)``; 0 if nothing drafted."""
        return self.num_accepted_tokens / self.num_evaluated_tokens if self.num_evaluated_tokens else 0.0

    @property
    def per_position_acceptance_rate(self) -> list[float]:
        """Accepted fraction at each draft position (vLLM divides per-position accepted counts
        by ``num_drafts``; here the denominator is the drafts that reached that position, which
        is the same when every round drafts ``gamma`` tokens)."""
        return [a / n if n else 0.0 for a, n in zip(self.num_accepted_tokens_per_pos, self.num_drafts_per_pos)]


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
    return property(lambda self: getattr(self.stats, name), doc=f"``stats.{name}`` (:class:`SpecDecodingStats`).")


@dataclass
class SpeculativeResult:
    """What :func:`speculative_generate` returns. Times in ms; metric names follow vLLM.

    Attributes:
        prompt_ids / token_ids / text: as in :class:`decodelab.GenerationResult`.
        rounds: one :class:`Round` per target verification (the first token, from the target's
            prefill, is not a round).
        gamma: ``num_speculative_tokens`` as used: capped at ``max(1, max_new_tokens - 1)``.
        stats: the counters (:class:`SpecDecodingStats`); ``num_drafts``, ``num_draft_tokens``,
            ``num_accepted_tokens``, ``num_accepted_tokens_per_pos``, ``num_drafts_per_pos``,
            ``acceptance_rate``, ``mean_acceptance_length``, ``alpha`` and
            ``per_position_acceptance_rate`` read through to it.
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


def _cut_at_eos(drafted: list[int], k: int, token: int | None, stop: set[int]):
    """An accepted EOS ends the output right there: no recovered or bonus token after it."""
    for j in range(k):
        if drafted[j] in stop:
            return j + 1, None
    return k, token


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
        g = min(gamma, max_new_tokens - len(out) - 1)  # drafts + 1 target token fit the budget
        prop = proposer.propose(ids, g, cfg, gen) if g > 0 else Proposal([])
        if len(prop.tokens) > g:  # a user's proposer may return more than asked: the budget holds
            prop = Proposal(prop.tokens[:g], None if prop.q is None else prop.q[:g])
        t1 = time.perf_counter()
        v = proposer.verify_round(target, cache, ids, prop, cfg, gen)
        k, token = _cut_at_eos(v.drafted, v.accepted, v.token, stop)
        emitted = v.drafted[:k] + ([] if token is None else [token])
        crop_cache(cache, len(ids) - 1 + len(emitted))  # drop rejected drafts; the newest is fed next round
        ids.extend(emitted)
        out.extend(emitted)
        proposer.sync(ids)
        t2 = time.perf_counter()

        # --- counting, beside the algorithm ---
        drafted = v.drafted
        kind = "plain" if not drafted else "eos" if token is None else "bonus" if k == len(drafted) else "recovered"
        if drafted:
            stats.observe_draft(len(drafted), k, rejected=kind == "recovered")
        rnd = Round(proposed=drafted, accepted=k, token=token, kind=kind, emitted=emitted,
                    draft_ms=(t1 - t0) * 1000.0, verify_ms=(t2 - t1) * 1000.0,
                    verify_forward_ms=v.forward_s * 1000.0, target_cache_len=cache_length(cache))
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


def round_pieces(result: SpeculativeResult, tokenizer) -> list[dict]:
    """Round-by-round token texts for display (used by the notebook's HTML view).

    Returns one dict per round: ``{"round": i, "tokens": [(text, status), ...]}`` where status is
    ``"accepted"``, ``"rejected"`` (drafted but thrown away), ``"recovered"``, ``"bonus"``,
    ``"plain"``; texts are each token's own string (byte-level pieces decoded one by one).
    """
    out = []
    for i, r in enumerate(result.rounds, start=1):
        toks = [(t, "accepted" if j < r.accepted else "rejected") for j, t in enumerate(r.proposed)]
        if r.token is not None:
            toks.append((r.token, r.kind))
        out.append({"round": i, "tokens": [(tokenizer.decode([t]), s) for t, s in toks]})
    return out


# --------------------------------------------------------------------------------------------
# measurements used by notebook 04 and benchmarks/bench_speculative.py


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
    import statistics

    ids = format_prompt(tokenizer, prompt)
    prop = as_proposer(draft, target, tokenizer)
    cache = prefill(target, torch.tensor([ids])).cache
    inputs = {n: torch.tensor([[ids[-1]] * n]) for n in [1] + [int(g) + 1 for g in gammas]}

    def target_pass(n):  # ms of one forward pass over n new tokens; the cache is restored after
        t0 = time.perf_counter()
        forward(target, inputs[n], cache, logits_to_keep=n)
        ms = (time.perf_counter() - t0) * 1000.0
        crop_cache(cache, len(ids))
        return ms

    cfg = SamplingConfig(0.0)
    prop.reset()
    prop.propose(ids, 1, cfg)

    def draft_pass():  # a model draft re-feeds the last token: exactly one forward pass
        t0 = time.perf_counter()
        prop.propose(ids, 1, cfg)
        ms = (time.perf_counter() - t0) * 1000.0
        prop.sync(ids)
        return ms

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
        alpha: Leviathan et al.'s per-token acceptance probability, accepted / evaluated draft
            positions summed over prompts (:attr:`SpecDecodingStats.alpha`).
        stats: the pooled counters (:class:`SpecDecodingStats`).
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
                  compare: bool = True, on_prompt: Callable | None = None) -> list[SweepRow]:
    """Greedy target-only decoding vs :func:`speculative_generate` for each gamma, on this computer.

    For each gamma and each prompt it runs target-only greedy decoding (:func:`decodelab.generate`,
    if ``compare``) and then greedy :func:`speculative_generate` with ``num_speculative_tokens =
    gamma``, alternately, so that load changes hit both; EOS is ignored so both make
    ``max_new_tokens`` tokens. Counts are pooled over the prompts in one
    :class:`SpecDecodingStats` (acceptance rate = all accepted / all drafted tokens, as vLLM sums
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
        calls = tokens = 0
        stats = SpecDecodingStats(int(g))
        for p in prompts:
            r0 = None
            if compare:
                r0 = generate(target, tokenizer, p, max_new_tokens, top_candidates=0, stop_at_eos=False)
                base += r0.e2e_ms / len(r0.token_ids)
            r1 = speculative_generate(target, draft, tokenizer, p, max_new_tokens, num_speculative_tokens=g,
                                      stop_at_eos=False)
            if r0 is not None and r1.token_ids != r0.token_ids:
                raise RuntimeError(
                    f"gamma={g}, prompt={p!r}: 탐욕 투기적 디코딩의 출력이 대상 모델만의 출력과 다릅니다 "
                    f"(버그이거나, bf16/fp16처럼 검증 패스의 반올림이 한 토큰씩과 다른 수치 형식)")
            spec += r1.e2e_ms / len(r1.token_ids)
            stats.merge(r1.stats)
            calls += r1.target_forward_calls
            tokens += len(r1.token_ids)
            if on_prompt is not None:
                on_prompt(int(g), p, r0, r1)
        k = len(prompts)
        rows.append(SweepRow(
            gamma=int(g),
            acceptance_rate=stats.acceptance_rate,
            mean_acceptance_length=stats.mean_acceptance_length,
            tokens_per_target_call=tokens / calls,
            spec_ms_per_token=spec / k,
            base_ms_per_token=base / k if compare else float("nan"),
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
    acc = 0
    for i in range(n):
        d = int(drafts[i])
        k, t = verify_probabilities(p2, q1, [d], gen)
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
