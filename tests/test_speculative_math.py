"""Speculative sampling preserves the target distribution: exact enumeration and empirical draws.

No model weights here: small synthetic "models" (context -> logits) over a 4-token vocabulary let
us enumerate every draft, every accept/reject outcome and every recovered token, and compare the
resulting distribution of the first J output tokens with the target's own chain distribution.
Warping (temperature / top-k / top-p) goes through decodelab.sampling.probabilities for BOTH p and
q, as in speculative_generate. The last test runs speculative_generate itself end to end on tiny
random Llama models (vocabulary 10, built in the test, nothing downloaded).
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from decodelab.proposers import NGramProposer, common_prefix_length
from decodelab.sampling import SamplingConfig, probabilities
from decodelab.latency import expected_speedup, expected_tokens_per_call, optimal_gamma
from decodelab.rejection import acceptance_probabilities, residual_distribution, verify_probabilities

V = 4


def _logits(ctx: tuple, salt: int, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed((hash(ctx) * 1000003 + salt) & 0x7FFFFFFF)
    return torch.randn(V, generator=g, dtype=torch.float32) * 1.5 * scale


class Synthetic:
    """p(.|ctx) and q(.|ctx) as functions of the whole context, warped with one SamplingConfig."""

    def __init__(self, cfg: SamplingConfig, draft: str):
        self.cfg, self.draft = cfg, draft  # draft: "sampling" | "near_deterministic" | "deterministic"
        self._p, self._q = {}, {}

    @staticmethod
    def _f64(probs):  # the float32 warped distribution, renormalised in float64
        x = probs.double()
        return x / x.sum()

    def p(self, ctx):
        if ctx not in self._p:
            self._p[ctx] = self._f64(probabilities(_logits(ctx, 1), self.cfg))
        return self._p[ctx]

    def q(self, ctx):
        if self.draft == "deterministic":
            return None
        if ctx not in self._q:
            scale = 25.0 if self.draft == "near_deterministic" else 1.0
            self._q[ctx] = self._f64(probabilities(_logits(ctx, 2, scale), self.cfg))
        return self._q[ctx]

    def det_token(self, ctx):  # the deterministic proposer's choice (argmax of its own logits)
        return int(_logits(ctx, 2).argmax())


def _target_chain(model: Synthetic, ctx: tuple, J: int) -> dict:
    out = {}
    for seq in itertools.product(range(V), repeat=J):
        prob, c = 1.0, ctx
        for t in seq:
            prob *= float(model.p(c)[t])
            c = c + (t,)
        out[seq] = prob
    return out


def _round_outcomes(model: Synthetic, ctx: tuple, gamma: int, residual=residual_distribution):
    """Exact distribution of one round's emitted sequence, built from the library's rule."""
    outcomes: dict[tuple, float] = {}
    # enumerate draft sequences with their probability under q
    drafts = [((), 1.0, [])]
    for _ in range(gamma):
        nxt = []
        for d, w, qrows in drafts:
            c = ctx + d
            q = model.q(c)
            if q is None:
                t = model.det_token(c)
                nxt.append((d + (t,), w, qrows + [None]))
            else:
                for t in range(V):
                    if q[t] > 0:
                        nxt.append((d + (t,), w * float(q[t]), qrows + [q]))
        drafts = nxt
    for d, w, qrows in drafts:
        p = torch.stack([model.p(ctx + d[:i]) for i in range(gamma + 1)])
        q = None if qrows[0] is None else torch.stack(qrows)
        a = acceptance_probabilities(p, q, torch.tensor(d))
        reach = w
        for k in range(gamma + 1):
            if k == gamma:
                for t in range(V):
                    key = d + (t,)
                    outcomes[key] = outcomes.get(key, 0.0) + reach * float(p[gamma, t])
                break
            r = residual(p[k], None if q is None else q[k], d[k])
            rej = reach * (1.0 - float(a[k]))
            for t in range(V):
                key = d[:k] + (t,)
                outcomes[key] = outcomes.get(key, 0.0) + rej * float(r[t])
            reach *= float(a[k])
    return outcomes


def _speculative_prefix_dist(model, ctx, J, gamma, residual=residual_distribution):
    """Exact distribution of the first J tokens of speculative decoding (rounds chained)."""
    memo = {}

    def dist(c, j):
        if (c, j) in memo:
            return memo[(c, j)]
        res: dict[tuple, float] = {}
        for seq, w in _round_outcomes(model, c, gamma, residual).items():
            if w == 0.0:
                continue
            if len(seq) >= j:
                key = seq[:j]
                res[key] = res.get(key, 0.0) + w
            else:
                for rest, w2 in dist(c + seq, j - len(seq)).items():
                    key = seq + rest
                    res[key] = res.get(key, 0.0) + w * w2
        memo[(c, j)] = res
        return res

    return dist(ctx, J)


CONFIGS = [
    SamplingConfig(1.0),
    SamplingConfig(0.7, top_k=3),
    SamplingConfig(1.3, top_p=0.8),
    SamplingConfig(0.9, top_k=2, top_p=0.9),
    SamplingConfig(0.0),  # greedy: one-hot p and q
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"T{c.temperature}-k{c.top_k}-p{c.top_p}")
@pytest.mark.parametrize("draft", ["sampling", "near_deterministic", "deterministic"])
def test_enumerated_output_distribution_equals_warped_target(cfg, draft):
    model = Synthetic(cfg, draft)
    ctx = (3, 1)
    J = 3
    want = _target_chain(model, ctx, J)
    for gamma in (1, 2):
        got = _speculative_prefix_dist(model, ctx, J, gamma)
        assert abs(sum(got.values()) - 1.0) < 1e-9
        worst = max(abs(got.get(s, 0.0) - w) for s, w in want.items())
        assert worst < 1e-6, (gamma, worst)
    if draft != "deterministic" and not cfg.greedy:
        # the draft really differs from the target here, so the rule has work to do
        assert float((model.p(ctx) - model.q(ctx)).abs().sum()) > 0.05


def test_enumeration_detects_a_wrong_residual():
    """Negative control: resampling from p instead of norm(max(0, p - q)) is biased (TV > 0.05)."""
    model = Synthetic(SamplingConfig(1.0), "sampling")
    want = _target_chain(model, (3, 1), 2)

    def naive(p_row, q_row, token):
        return p_row

    got = _speculative_prefix_dist(model, (3, 1), 2, 2, residual=naive)
    tv = 0.5 * sum(abs(got.get(s, 0.0) - w) for s, w in want.items())
    assert tv > 0.05


def _empirical_first_tokens(model: Synthetic, ctx, gamma, J, n, seed):
    """Run the real verify_probabilities (and a draft that samples from q) n times; count first-J tokens."""
    gen = torch.Generator().manual_seed(seed)
    counts: dict[tuple, int] = {}
    for _ in range(n):
        c, out = ctx, []
        while len(out) < J:
            d, rows = [], []
            for _ in range(gamma):
                q = model.q(c + tuple(d))
                if q is None:
                    d.append(model.det_token(c + tuple(d)))
                else:
                    d.append(int(torch.multinomial(q, 1, generator=gen)))
                    rows.append(q)
            p = torch.stack([model.p(c + tuple(d[:i])) for i in range(gamma + 1)])
            k, t = verify_probabilities(p, torch.stack(rows) if rows else None, d, gen)
            emitted = d[:k] + [t]
            out += emitted
            c = c + tuple(emitted)
        key = tuple(out[:J])
        counts[key] = counts.get(key, 0) + 1
    return {k: v / n for k, v in counts.items()}


@pytest.mark.parametrize(
    "cfg,draft",
    [
        (SamplingConfig(1.0), "sampling"),
        (SamplingConfig(0.7, top_k=3), "near_deterministic"),
        (SamplingConfig(1.3, top_p=0.8), "deterministic"),
    ],
)
def test_empirical_distribution_matches_target(cfg, draft):
    model = Synthetic(cfg, draft)
    n, J = 6000, 2
    want = _target_chain(model, (2,), J)
    got = _empirical_first_tokens(model, (2,), 2, J, n, seed=7)
    tv = 0.5 * sum(abs(got.get(s, 0.0) - w) for s, w in want.items())
    # E[TV] for 16 cells and n = 6000 is about 0.5 * sqrt(2/pi) * sum(sqrt(p/n)) <= 0.021
    assert tv < 0.045, tv


def test_residual_with_equal_or_nearly_equal_vectors_has_no_nan():
    p = torch.softmax(torch.randn(4096, generator=torch.Generator().manual_seed(0)), -1)
    r = residual_distribution(p, p.clone(), 5)
    assert torch.isfinite(r).all() and torch.allclose(r, p / p.sum())
    noisy = p * (1 + 1e-7 * torch.randn(4096, generator=torch.Generator().manual_seed(1)))
    noisy = noisy / noisy.sum()
    r = residual_distribution(p, noisy, 5)
    assert torch.isfinite(r).all() and abs(float(r.sum()) - 1.0) < 1e-5 and (r >= 0).all()
    # verify_probabilities with p == q never rejects and never produces NaN
    a = acceptance_probabilities(torch.stack([p, p]), torch.stack([p]), torch.tensor([17]))
    assert float(a[0]) == 1.0
    gen = torch.Generator().manual_seed(3)
    for _ in range(50):
        k, t = verify_probabilities(torch.stack([p, noisy]), torch.stack([noisy]), [int(torch.argmax(p))], gen)
        assert 0 <= t < 4096 and k in (0, 1)


def test_acceptance_probabilities_hand_computed():
    p = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
    q = torch.tensor([[0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])
    a = acceptance_probabilities(p, q, torch.tensor([1, 0]))
    assert torch.allclose(a, torch.tensor([0.3 / 0.5, 0.0]))  # q=0 -> 0, not NaN
    a = acceptance_probabilities(p, None, torch.tensor([0, 2]))  # one-hot draft: p(d)
    assert torch.allclose(a, torch.tensor([0.5, 0.8]))
    r = residual_distribution(p[0], q[0])
    assert torch.allclose(r, torch.tensor([0.25, 0.0, 0.0]) / 0.25)
    r = residual_distribution(p[1], None, 2)  # one-hot q at token 2: max(0, p - e_2)
    assert torch.allclose(r, torch.tensor([0.5, 0.5, 0.0]))


def test_formulas_hand_computed():
    # Leviathan et al. 2023: alpha 0.75, gamma 7, c 0.02 -> (1 - 0.75**8) / (0.25 * 1.14)
    assert expected_tokens_per_call(0.75, 7) == pytest.approx((1 - 0.75**8) / 0.25)
    assert expected_tokens_per_call(0.75, 7) == pytest.approx(3.5995483, abs=1e-6)
    assert expected_speedup(0.75, 7, 0.02) == pytest.approx(3.5995483 / 1.14, abs=1e-6)
    assert expected_tokens_per_call(1.0, 4) == 5.0
    assert expected_tokens_per_call(0.0, 4) == 1.0
    assert expected_speedup(0.6, 2, 0.5) == pytest.approx((1 - 0.6**3) / 0.4 / 2.0)
    # the docstring's example, rounded as printed there
    assert round(expected_speedup(0.75, 7, 0.02), 2) == 3.16
    # verification cost 1.5 target steps: 3.5995 / (7 * 0.02 + 1.5)
    assert expected_speedup(0.75, 7, 0.02, verify_cost=1.5) == pytest.approx(3.5995483 / 1.64, abs=1e-6)
    # the paper's bound: if alpha > c, some gamma gives >= (1 + alpha) / (1 + c)
    for alpha, c in [(0.6, 0.1), (0.8, 0.05), (0.4, 0.3)]:
        g = optimal_gamma(alpha, c)
        assert expected_speedup(alpha, g, c) >= (1 + alpha) / (1 + c) - 1e-12
    assert optimal_gamma(0.8, 0.02) > optimal_gamma(0.5, 0.2)
    with pytest.raises(ValueError, match="alpha"):
        expected_speedup(1.5, 2, 0.1)
    with pytest.raises(ValueError, match="gamma"):
        expected_speedup(0.5, -1, 0.1)
    with pytest.raises(ValueError, match="c="):
        expected_speedup(0.5, 2, -0.1)
    with pytest.raises(ValueError, match="verify_cost"):
        expected_speedup(0.5, 2, 0.1, verify_cost=0.0)
    # one validation for both modules: gamma is an int >= 1 (a wrong type: TypeError under the
    # contract's one error rule; latency.py raised ValueError before it adopted the rule)
    for bad_gamma, exc in ((0, ValueError), (-1, ValueError), (1.5, (TypeError, ValueError)), (True, (TypeError, ValueError))):
        with pytest.raises(exc, match="gamma"):
            expected_speedup(0.5, bad_gamma, 0.1)
        with pytest.raises(exc, match="gamma"):
            expected_tokens_per_call(0.5, bad_gamma)
    with pytest.raises(ValueError, match="alpha"):
        optimal_gamma(-0.1, 0.1)
    with pytest.raises(ValueError, match="max_gamma"):
        optimal_gamma(0.5, 0.1, max_gamma=0)
    assert math.isfinite(expected_speedup(0.999999, 8, 0.0))


def test_formulas_have_one_implementation():
    """The paper's formulas live in latency.py (torch-free) only; the package's name is that one."""
    import decodelab
    from decodelab import latency, speculative

    assert decodelab.expected_tokens_per_call is latency.expected_tokens_per_call
    assert decodelab.expected_speedup is latency.expected_speedup
    assert not hasattr(speculative, "expected_speedup") and not hasattr(speculative, "optimal_gamma")
    for alpha, gamma, c in [(0.75, 7, 0.02), (0.3, 1, 0.5), (1.0, 4, 0.0), (0.0, 3, 0.1)]:
        assert expected_speedup(alpha, gamma, c) == pytest.approx(float(latency.SpeculativeConfig(alpha, gamma, c).speedup))


def test_ngram_proposer_hand_computed():
    ng = NGramProposer(min_n=1, max_n=2)
    # last 2-gram (1, 2) occurred at 0 -> propose what followed it
    assert ng.propose([1, 2, 3, 4, 1, 2], 3).tokens == [3, 4, 1]
    assert ng.propose([1, 2, 3, 4, 1, 2], 1).tokens == [3]
    # latest earlier occurrence wins: (5,) at index 2 (followed by 7) rather than index 0 (by 6)
    assert ng.propose([5, 6, 5, 7, 5], 2).tokens == [7, 5]
    assert ng.propose([1, 2, 3], 4).tokens == []  # nothing repeats
    assert ng.propose([9], 4).tokens == [] and ng.forward_calls == 0
    with pytest.raises(ValueError, match="min_n=0"):
        NGramProposer(min_n=0)
    with pytest.raises(ValueError, match="max_n"):
        NGramProposer(max_n=2.5)
    with pytest.raises(ValueError, match="max_n=1: .*min_n 이상"):
        NGramProposer(min_n=2, max_n=1)
    with pytest.raises(TypeError, match="min_n"):
        NGramProposer(min_n="2")


def test_common_prefix_length():
    assert common_prefix_length([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix_length([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix_length([], [1]) == 0
    assert common_prefix_length([7, 2], [1, 2]) == 0
    a = list(range(300))
    b = a[:211] + [-1] + a[212:]
    assert common_prefix_length(a, b) == 211


# --------------------------------------------------------------------------------------------
# end to end: speculative_generate itself, on tiny random Llama models

V_TINY = 10
TINY_PROMPT = "3 1 4 1 5 3 1"  # repeats, so the n-gram proposer finds drafts


class DigitTokenizer:
    """A tokenizer for the tiny models: "3 1 4" <-> [3, 1, 4] (no special tokens, no EOS)."""

    eos_token_id = None

    def __len__(self):
        return V_TINY

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [int(x) for x in text.split()]}

    def decode(self, ids, skip_special_tokens=True):
        return " ".join(str(int(i)) for i in ids)

    def convert_ids_to_tokens(self, i):
        return str(int(i))


@pytest.fixture(scope="module")
def tiny_pair():
    """A random 1-layer Llama target and a draft = the target with seeded noise on every weight
    (so q approximates p but differs: TV(p, q) 0.1-0.9 here), one torch thread while in use."""
    import copy

    from transformers import LlamaConfig, LlamaForCausalLM

    from decodelab._torch import set_threads

    n_threads = set_threads(1)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=V_TINY, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                      initializer_range=0.5)  # large weights: peaked, varied distributions
    target = LlamaForCausalLM(cfg).eval()
    draft = copy.deepcopy(target)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for w in draft.parameters():
            w.add_(0.2 * w.abs().mean() * torch.randn(w.shape, generator=g))
    yield target, draft
    torch.set_num_threads(n_threads)


def _model_chain(model, ids, cfg, J) -> dict:
    """Exact distribution of the next J tokens when sampling from ``model`` alone with ``cfg``:
    enumerate every prefix with nonzero probability (one batched forward pass per depth)."""
    from decodelab.decoding import forward

    dist = {(): 1.0}
    for _ in range(J):
        prefixes = list(dist)
        logits = forward(model, torch.tensor([ids + list(s) for s in prefixes]), None)[:, -1]
        probs = probabilities(logits, cfg).double()
        new = {}
        for s, row in zip(prefixes, probs):
            row = row / row.sum()
            for t in torch.nonzero(row).flatten().tolist():
                new[s + (t,)] = dist[s] * float(row[t])
        dist = new
    return dist


def _null_tv_quantile(want: dict, n: int, q: float = 0.999, sims: int = 4000) -> float:
    """The q-quantile of TV(empirical, want) for n exact draws from ``want`` (Monte Carlo, seeded):
    the TV a correct sampler exceeds with probability 1 - q."""
    w = torch.tensor(list(want.values()), dtype=torch.float64)
    draws = torch.multinomial(w, n * sims, replacement=True, generator=torch.Generator().manual_seed(0))
    counts = torch.zeros(sims, len(w), dtype=torch.float64).scatter_add_(
        1, draws.view(sims, n), torch.ones(sims, n, dtype=torch.float64))
    return float((0.5 * (counts / n - w).abs().sum(1)).quantile(q))


E2E_RUNS = 500
E2E_CASES = [
    # (draft, sampling settings, max_new_tokens, gamma). max_new_tokens 4 lets a round draft 2
    # tokens (a round drafts at most max_new_tokens - 1 - tokens so far).
    ("model", SamplingConfig(1.3, top_p=0.85), 3, 2),  # the draft model as given: _as_proposer + lean runner
    ("proposer", SamplingConfig(0.9, top_k=2), 4, 3),  # one DraftModelProposer reused across runs
    ("ngram", SamplingConfig(1.0, top_k=3), 4, 3),  # prompt lookup: one-hot q
]


@pytest.mark.slow  # 2-3 s per case here
@pytest.mark.parametrize("kind,cfg,J,gamma", E2E_CASES, ids=[c[0] for c in E2E_CASES])
def test_speculative_generate_samples_the_target_chain(tiny_pair, kind, cfg, J, gamma):
    """The empirical distribution of speculative_generate's whole output (n seeds) is within
    sampling noise of the target's exact J-token chain distribution under the same warping.

    The bound is calibrated, not guessed: the 99.9% quantile of the TV distance between n exact
    draws from the chain and the chain itself. With n = 500 it is 0.10-0.17 here. Checked
    against two deliberate bugs, every case fails: p in the verification warped at 1.5x the
    temperature (TV 0.17-0.21, or outputs outside the target's top-p set), and drafts drawn
    at 1.5x the temperature while the ratio uses q at the right one (0.14-0.19; not applicable
    to n-gram drafts). A draft whose q is warped differently but used consistently (drawn from
    AND in the ratio) passes, as it must: the rule is exact for any q.
    """
    from decodelab.proposers import DraftModelProposer, NGramProposer
    from decodelab.speculative import speculative_generate

    target, draft_model = tiny_pair
    tok = DigitTokenizer()
    draft = {"model": draft_model, "ngram": NGramProposer(), "proposer": DraftModelProposer(draft_model)}[kind]
    n = E2E_RUNS
    counts: dict[tuple, int] = {}
    kinds, longest = set(), 0
    for i in range(n):
        r = speculative_generate(target, draft, tok, TINY_PROMPT, J, num_speculative_tokens=gamma,
                                 temperature=cfg.temperature, top_k=cfg.top_k, top_p=cfg.top_p, seed=i,
                                 stop_at_eos=False)
        key = tuple(r.token_ids)
        counts[key] = counts.get(key, 0) + 1
        kinds.update(rd.kind for rd in r.rounds)
        longest = max([longest] + [len(rd.proposed) for rd in r.rounds])
    want = _model_chain(target, tok(TINY_PROMPT)["input_ids"], cfg, J)
    assert abs(sum(want.values()) - 1.0) < 1e-9
    assert set(counts) <= set(want), "an output the target could never produce"
    tv = 0.5 * sum(abs(counts.get(s, 0) / n - w) for s, w in want.items())
    bound = _null_tv_quantile(want, n)
    assert tv < bound, (tv, bound)
    # the runs exercised the rule: rejections with a recovered token and full acceptance with a bonus,
    # and (max_new_tokens 4) rounds of more than one draft
    assert {"recovered", "bonus"} <= kinds, kinds
    assert longest == min(gamma, J - 2)


def test_crop_cache_keeps_the_first_positions(tiny_pair):
    from decodelab.decoding import cache_length, crop_cache, forward, prefill

    target, _ = tiny_pair
    ids = [3, 1, 4, 1, 5, 9, 2]
    cache = prefill(target, torch.tensor([ids])).cache
    crop_cache(cache, 10)  # longer than the cache: nothing happens
    assert cache_length(cache) == 7
    crop_cache(cache, 4)
    assert cache_length(cache) == 4
    # the cropped cache continues exactly like a fresh prefill of the first 4 tokens
    from_cache = forward(target, torch.tensor([[ids[4]]]), cache)[0, -1]
    fresh = forward(target, torch.tensor([ids[:5]]), None)[0, -1]
    assert torch.allclose(from_cache, fresh, atol=1e-5)
    crop_cache(None, 3)  # no cache: nothing to do
    with pytest.raises(ValueError, match="length=-1"):
        crop_cache(cache, -1)
    with pytest.raises(ValueError, match="length=1.5"):
        crop_cache(cache, 1.5)


def test_timing_excludes_proposer_setup_and_itl_has_one_gap_per_round(tiny_pair, monkeypatch):
    """With a frozen clock that only moves while the proposer is being built, every time is 0:
    building the proposer (e.g. a LlamaRunner) is setup, not part of TTFT or E2E."""
    import types

    import decodelab.speculative as S

    target, draft = tiny_pair
    tok = DigitTokenizer()
    clock = types.SimpleNamespace(now=100.0)
    monkeypatch.setattr(S, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    build = S.as_proposer

    def slow_build(*args, **kwargs):
        clock.now += 1.0  # one second of setup
        return build(*args, **kwargs)

    monkeypatch.setattr(S, "as_proposer", slow_build)
    r = S.speculative_generate(target, draft, tok, TINY_PROMPT, 6, num_speculative_tokens=2, stop_at_eos=False)
    assert r.ttft_ms == 0.0 and r.e2e_ms == 0.0 and r.tpot_ms == 0.0
    assert r.itl_ms == [0.0] * len(r.rounds) and len(r.rounds) >= 2
    monkeypatch.undo()
    # real clock: one inter-token latency per round (a round emits a chunk of 1..gamma+1
    # tokens), and they add up to E2E - TTFT
    r = S.speculative_generate(target, draft, tok, TINY_PROMPT, 8, num_speculative_tokens=3, temperature=1.0,
                               seed=4, stop_at_eos=False)
    assert len(r.itl_ms) == len(r.rounds) < len(r.token_ids) - 1
    assert all(x >= 0 for x in r.itl_ms)
    assert sum(r.itl_ms) == pytest.approx(r.e2e_ms - r.ttft_ms, abs=1e-6)
    assert r.tpot_ms == pytest.approx(sum(r.itl_ms) / (len(r.token_ids) - 1))


def test_speedup_sweep_pools_counts_over_prompts(tiny_pair, monkeypatch):
    """speedup_sweep's pooled numbers equal a hand pooling of speculative_generate's counters;
    the hook sees every (gamma, prompt); a greedy mismatch raises RuntimeError."""
    import decodelab.speculative_experiments as E
    from decodelab.tools import card
    from decodelab.speculative import speculative_generate
    from decodelab.speculative_experiments import speedup_sweep

    target, draft = tiny_pair
    tok = DigitTokenizer()
    prompts = [TINY_PROMPT, "2 7 1 8"]
    seen = []
    rows = speedup_sweep(target, draft, tok, prompts, 7, gammas=[1, 3],
                         on_prompt=lambda g, p, base, spec: seen.append((g, p, base.token_ids == spec.token_ids)))
    assert seen == [(1, prompts[0], True), (1, prompts[1], True), (3, prompts[0], True), (3, prompts[1], True)]
    for row in rows:
        rs = [speculative_generate(target, draft, tok, p, 7, num_speculative_tokens=row.gamma, stop_at_eos=False)
              for p in prompts]
        drafted = sum(r.num_draft_tokens for r in rs)
        accepted = sum(r.num_accepted_tokens for r in rs)
        assert drafted > 0 and row.acceptance_rate == accepted / drafted
        assert row.mean_acceptance_length == 1 + accepted / sum(r.num_drafts for r in rs)
        assert row.tokens_per_target_call == 14 / sum(r.target_forward_calls for r in rs)
        assert row.spec_ms_per_token > 0 and row.base_ms_per_token > 0
    (only,) = speedup_sweep(target, draft, tok, prompts, 7, gammas=[3], compare=False)
    assert math.isnan(only.base_ms_per_token) and only.acceptance_rate == rows[1].acceptance_rate
    # decodelab card's table is the same sweep
    monkeypatch.setattr(card, "CARD_PROMPTS", prompts)
    pair = type("Pair", (), {"target": target, "draft": draft, "tokenizer": tok})()
    table = card.acceptance_table(pair, gammas=(1, 3), tokens=7)
    assert [t["acceptance_rate"] for t in table] == [r.acceptance_rate for r in rows]
    assert [t["tokens_per_target_call"] for t in table] == [r.tokens_per_target_call for r in rows]
    # a target-only run that disagrees (as a bug would) is reported, not silently averaged
    real = E.generate

    def wrong(*args, **kwargs):
        res = real(*args, **kwargs)
        res.token_ids = [(res.token_ids[0] + 1) % V_TINY] + res.token_ids[1:]
        return res

    monkeypatch.setattr(E, "generate", wrong)  # the target-only decoding the sweep runs
    with pytest.raises(RuntimeError, match="gamma=1"):
        speedup_sweep(target, draft, tok, prompts, 7, gammas=[1])


def test_exactness_experiment_returns_the_plotted_bins(tiny_pair):
    import matplotlib.pyplot as plt

    from decodelab.speculative_experiments import exactness_experiment
    from decodelab.teach.widgets.speculative import exactness_figure

    target, draft = tiny_pair
    tok = DigitTokenizer()
    exp = exactness_experiment(target, draft, tok, TINY_PROMPT, n=300, temperature=1.0, seed=0, bins=4)
    b, top, n = exp["binned"], exp["top"], 300
    assert top.tolist() == torch.topk(exp["p"], 4).indices.tolist()
    for key, full in (("p", exp["p"]), ("q", exp["q"]), ("target", exp["target_counts"] / n),
                      ("spec", exp["spec_counts"] / n)):
        assert b[key].shape == (5,)
        assert torch.allclose(b[key][:4], full[top].double())
        assert float(b[key].sum()) == pytest.approx(1.0, abs=1e-6)
    assert exp["tv_spec"] == pytest.approx(0.5 * float((b["spec"] - b["p"]).abs().sum()))
    assert exp["tv_pq"] > 0.05  # the draft differs from the target here
    fig = exactness_figure(exp, tok)
    try:
        heights = [[bar.get_height() for bar in c] for c in fig.axes[0].containers]
        assert len(heights) == 4
        for got, key in zip(heights, ("p", "q", "target", "spec")):
            assert got == pytest.approx(b[key].tolist())
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [str(int(i)) for i in top] + ["나머지"]
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------------------------
# the metrics accumulator and alpha


def test_alpha_and_vllm_metrics_hand_computed():
    """A crafted round history (gamma 4), counted by hand.

    round  drafted  accepted  how it ended          evaluated positions
    1      4        2         rejection at pos 2    3
    2      4        4         all accepted          4
    3      4        0         rejection at pos 0    1
    4      2        2         all (a capped round)  2
    5      3        1         accepted EOS at pos 0 1 (no rejection)
    accepted 9, drafted 17, evaluated 11, rounds 5.
    """
    from decodelab.speculative_metrics import SpecDecodingStats

    s = SpecDecodingStats(4)
    for drafted, accepted, rejected in [(4, 2, None), (4, 4, None), (4, 0, None), (2, 2, None), (3, 1, False)]:
        s.observe_draft(drafted, accepted, rejected)
    assert (s.num_drafts, s.num_draft_tokens, s.num_accepted_tokens, s.num_evaluated_tokens) == (5, 17, 9, 11)
    assert s.alpha == 9 / 11
    assert s.acceptance_rate == 9 / 17  # vLLM's: lower than alpha by construction
    assert s.mean_acceptance_length == 1 + 9 / 5
    assert s.num_accepted_tokens_per_pos == [4, 3, 1, 1]
    assert s.num_drafts_per_pos == [5, 5, 4, 3]
    assert s.per_position_acceptance_rate == [4 / 5, 3 / 5, 1 / 4, 1 / 3]
    # pooling two halves gives the whole (the pooling speedup_sweep does)
    a, b = SpecDecodingStats(4), SpecDecodingStats(2)
    for drafted, accepted, rejected in [(4, 2, None), (4, 4, None), (4, 0, None)]:
        a.observe_draft(drafted, accepted, rejected)
    for drafted, accepted, rejected in [(2, 2, None), (2, 1, False)]:  # a gamma-2 run: at most 2 drafts
        b.observe_draft(drafted, accepted, rejected)
    pooled = SpecDecodingStats(2).merge(b).merge(a)
    assert pooled.num_spec_tokens == 4 and pooled.num_evaluated_tokens == 11 and pooled.alpha == 9 / 11
    assert pooled.num_accepted_tokens_per_pos == [4, 3, 1, 1] and pooled.num_draft_tokens == 16
    empty = SpecDecodingStats(3)
    assert (empty.alpha, empty.acceptance_rate, empty.mean_acceptance_length) == (0.0, 0.0, 1.0)


def test_result_alpha_is_counted_from_its_rounds(tiny_pair):
    """SpeculativeResult.alpha on a real run = accepted / (accepted + rounds ending in a
    rejection), from the round history; GammaRow.alpha pools the same counts over prompts."""
    from decodelab.speculative import speculative_generate
    from decodelab.speculative_experiments import speedup_sweep

    target, draft = tiny_pair
    tok = DigitTokenizer()
    prompts = [TINY_PROMPT, "2 7 1 8", "9 9 3"]
    acc = ev = 0
    for p in prompts:
        r = speculative_generate(target, draft, tok, p, 12, num_speculative_tokens=3, stop_at_eos=False)
        kinds = [rd.kind for rd in r.rounds]
        assert "recovered" in kinds or "bonus" in kinds
        a = sum(rd.accepted for rd in r.rounds)
        e = a + kinds.count("recovered")
        assert r.alpha == a / e and r.stats.num_evaluated_tokens == e
        assert r.alpha >= r.acceptance_rate
        acc, ev = acc + a, ev + e
    (row,) = speedup_sweep(target, draft, tok, prompts, 12, [3], compare=False)
    assert row.alpha == acc / ev and row.stats.num_evaluated_tokens == ev


# --------------------------------------------------------------------------------------------
# the greedy rule, tested like the sampling one


def test_greedy_verify_hand_computed():
    from decodelab.rejection import verify_logits

    greedy = SamplingConfig(0.0)
    logits = torch.tensor([[0.0, 1.0, 0.0, 5.0],   # argmax 3 after the newest token
                           [0.0, 2.0, 1.0, 0.0],   # argmax 1 after d_1
                           [0.0, 0.0, 3.0, 1.0]])  # argmax 2 after d_2 (the bonus position)
    assert verify_logits(logits, [3, 1], greedy) == (2, 2)  # both accepted, bonus = argmax of the last row
    assert verify_logits(logits, [3, 0], greedy) == (1, 1)  # d_2 rejected, recovered = argmax of row 1
    assert verify_logits(logits, [2, 1], greedy) == (0, 3)  # d_1 rejected at once
    assert verify_logits(logits[:1], [], greedy) == (0, 3)  # no drafts: a plain target step


@pytest.mark.parametrize("padded", [False, True])
def test_greedy_verify_is_the_sampling_rule_with_one_hot_distributions(padded):
    """verify_logits() with greedy settings equals verify_probabilities() on the one-hot p of the same logits
    (with a deterministic draft, or a one-hot q, also zero-padded narrower than p), for every
    acceptance pattern of random cases: greedy is the special case of the rejection rule."""
    from decodelab.rejection import verify_logits, verify_probabilities

    greedy = SamplingConfig(0.0)
    g = torch.Generator().manual_seed(0)
    seen = set()
    for case in range(300):
        gamma = 1 + case % 4
        logits = torch.randn(gamma + 1, 12, generator=g)
        best = logits.argmax(-1).tolist()
        k_true = int(torch.randint(0, gamma + 1, (1,), generator=g))  # drafts agree up to here
        drafts = best[:k_true] + [(best[i] + 1 + int(torch.randint(0, 10, (1,), generator=g))) % 12
                                  for i in range(k_true, gamma)]
        p = probabilities(logits, greedy)
        q = torch.nn.functional.one_hot(torch.tensor(drafts), 12).float()
        if padded:
            q = q[:, :11]  # a draft with one row fewer: tokens it cannot propose have q = 0
            drafts = [min(d, 10) for d in drafts]
            k_true = next((i for i, (d, b) in enumerate(zip(drafts, best)) if d != b), gamma)
        got = verify_logits(logits, drafts, greedy)
        assert got == (k_true, best[k_true])
        assert verify_probabilities(p, None, drafts, torch.Generator().manual_seed(case)) == got
        assert verify_probabilities(p, q, drafts, torch.Generator().manual_seed(case)) == got
        seen.add((gamma, got[0]))
    assert len(seen) == sum(gamma + 1 for gamma in range(1, 5))  # every (gamma, accepted) pattern occurred


def test_narrow_q_is_zero_padded_exactly():
    """A draft with fewer rows than the target: the rule on (p, q) equals the rule on (p, q with
    zeros appended), acceptance and residual alike."""
    g = torch.Generator().manual_seed(3)
    p = torch.softmax(torch.randn(3, 7, generator=g), -1)
    q = torch.softmax(torch.randn(2, 5, generator=g), -1)
    qp = torch.cat([q, torch.zeros(2, 2)], 1)
    toks = torch.tensor([4, 1])
    assert torch.equal(acceptance_probabilities(p, q, toks), acceptance_probabilities(p, qp, toks))
    assert torch.equal(residual_distribution(p[0], q[0]), residual_distribution(p[0], qp[0]))
    assert residual_distribution(p[0], q[0]).shape == (7,)
    for seed in range(20):
        assert verify_probabilities(p, q, [4, 1], torch.Generator().manual_seed(seed)) == \
            verify_probabilities(p, qp, [4, 1], torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------------------------
# measure_costs takes every kind of draft speculative_generate takes


def test_measure_costs_with_every_proposer_kind(tiny_pair):
    from decodelab.proposers import DraftModelProposer, NGramProposer, Proposal, Proposer
    from decodelab.speculative import speculative_generate
    from decodelab.speculative_experiments import measure_costs

    target, draft = tiny_pair
    tok = DigitTokenizer()

    class Fixed(Proposer):  # a user's proposer: only propose(); reset/sync are no-op defaults
        forward_calls, vocab_size = 0, None

        def propose(self, ids, gamma, cfg=None, generator=None):
            return Proposal([ids[-1]] * gamma)

    kinds = {
        "model": draft,
        "lean": DraftModelProposer(draft, backend="lean"),
        "transformers": DraftModelProposer(draft, backend="transformers"),
        "NGramProposer": NGramProposer(),
        "ngram": "ngram",
        "custom": Fixed(),
    }
    reps = 5
    for name, d in kinds.items():
        calls0 = getattr(d, "forward_calls", 0)
        m = measure_costs(target, d, tok, TINY_PROMPT, gammas=(2, 3), reps=reps)
        assert set(m) == {"target_step_ms", "verify_ms", "verify_cost", "draft_step_ms", "c"}, name
        assert set(m["verify_ms"]) == {2, 3} and m["target_step_ms"] > 0 and m["draft_step_ms"] >= 0
        assert m["c"] == m["draft_step_ms"] / m["target_step_ms"]
        assert m["verify_cost"][3] == m["verify_ms"][3] / m["target_step_ms"]
        if isinstance(d, DraftModelProposer):  # one prefill, then exactly one forward pass per timing
            assert d.forward_calls - calls0 == 1 + reps, name
        # and the same argument works in speculative_generate
        r = speculative_generate(target, d, tok, TINY_PROMPT, 6, num_speculative_tokens=2, stop_at_eos=False)
        assert len(r.token_ids) == 6
