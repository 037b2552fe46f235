"""Speculative sampling preserves the target distribution: exact enumeration and empirical draws.

No model weights here: small synthetic "models" (context -> logits) over a 4-token vocabulary let
us enumerate every draft, every accept/reject outcome and every correction, and compare the
resulting distribution of the first J output tokens with the target's own chain distribution.
Warping (temperature / top-k / top-p) goes through decodelab.sampling.probabilities for BOTH p and
q, as in speculative_generate.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from decodelab.proposers import NGramProposer, common_prefix_length
from decodelab.sampling import SamplingConfig, probabilities
from decodelab.speculative import (
    acceptance_probabilities,
    expected_speedup,
    expected_tokens_per_call,
    optimal_gamma,
    residual_distribution,
    verify_step,
)

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
    """Run the real verify_step (and a draft that samples from q) n times; count first-J tokens."""
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
            k, t = verify_step(p, torch.stack(rows) if rows else None, d, gen)
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
    # verify_step with p == q never rejects and never produces NaN
    a = acceptance_probabilities(torch.stack([p, p]), torch.stack([p]), torch.tensor([17]))
    assert float(a[0]) == 1.0
    gen = torch.Generator().manual_seed(3)
    for _ in range(50):
        k, t = verify_step(torch.stack([p, noisy]), torch.stack([noisy]), [int(torch.argmax(p))], gen)
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
    assert expected_speedup(0.5, 0, 0.3) == 1.0
    assert expected_speedup(0.6, 2, 0.5) == pytest.approx((1 - 0.6**3) / 0.4 / 2.0)
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
    assert math.isfinite(expected_speedup(0.999999, 8, 0.0))


def test_ngram_proposer_hand_computed():
    ng = NGramProposer(min_n=1, max_n=2)
    # last 2-gram (1, 2) occurred at 0 -> propose what followed it
    assert ng.propose([1, 2, 3, 4, 1, 2], 3).tokens == [3, 4, 1]
    assert ng.propose([1, 2, 3, 4, 1, 2], 1).tokens == [3]
    # latest earlier occurrence wins: (5,) at index 2 (followed by 7) rather than index 0 (by 6)
    assert ng.propose([5, 6, 5, 7, 5], 2).tokens == [7, 5]
    assert ng.propose([1, 2, 3], 4).tokens == []  # nothing repeats
    assert ng.propose([9], 4).tokens == [] and ng.forward_calls == 0
    with pytest.raises(ValueError):
        NGramProposer(min_n=0)


def test_common_prefix_length():
    assert common_prefix_length([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix_length([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix_length([], [1]) == 0
    assert common_prefix_length([7, 2], [1, 2]) == 0
    a = list(range(300))
    b = a[:211] + [-1] + a[212:]
    assert common_prefix_length(a, b) == 211
