"""The accept/reject rule of speculative decoding, as pure functions on probabilities and logits.

Shaped like vLLM's rejection sampler (``vllm/v1/sample/rejection_sampler.py``): given the
target's distributions ``p`` at the ``gamma`` draft positions and one beyond, the draft's
distributions ``q`` the drafts were drawn from, and the drafted tokens ``d_1..d_gamma``:

* :func:`acceptance_probabilities`: ``min(1, p_i(d_i) / q_i(d_i))`` per position;
* :func:`residual_distribution`: the recovered token's distribution ``norm(max(0, p - q))`` after
  a rejection;
* :func:`verify_probabilities`: one round of the rule (accept a prefix, then a recovered or bonus
  token), distributed exactly as successive draws from ``p`` (Leviathan, Kalman & Matias 2023,
  arXiv 2211.17192, Algorithm 1 and Appendix A.1; Chen et al. 2023, arXiv 2302.01318, Theorem 1);
* :func:`verify_logits`: the same from the target's raw logits, greedy or sampling: the one
  verification function of the chain path (:mod:`decodelab.proposers`);
* :func:`same_width`: the one padding helper: target and draft may have output layers of
  different widths when they share a tokenizer; a token a model has no row for has probability 0
  under it (the tree's sibling rule, :mod:`decodelab.tree`, uses it too).

A leaf module: it imports only torch and :mod:`decodelab.sampling`. Exactness holds under exact
arithmetic; the floating-point conditions are in :mod:`decodelab.speculative`'s docstring.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .sampling import SamplingConfig, probabilities

__all__ = [
    "acceptance_probabilities",
    "residual_distribution",
    "same_width",
    "verify_logits",
    "verify_probabilities",
]


def same_width(p: torch.Tensor, q: torch.Tensor | None):
    """``p`` and ``q`` zero-padded on their last dimension to the wider of the two (a token a model
    has no row for has probability 0 under it: the draft's padded rows, or the target's).

    Shapes ``(..., vocab_p)`` and ``(..., vocab_q)`` -> both ``(..., max(vocab_p, vocab_q))``;
    ``q=None`` (a one-hot draft) returns ``(p, None)`` unchanged.
    """
    if q is None or q.shape[-1] == p.shape[-1]:
        return p, q
    v = max(p.shape[-1], q.shape[-1])
    return F.pad(p, (0, v - p.shape[-1])), F.pad(q, (0, v - q.shape[-1]))


def acceptance_probabilities(p: torch.Tensor, q: torch.Tensor | None, tokens: torch.Tensor) -> torch.Tensor:
    """``min(1, p_i(d_i) / q_i(d_i))`` for each draft position i (Leviathan et al. 2023, Alg. 1).

    Args:
        p: target probabilities, shape ``(>= gamma, vocab)`` (only the first ``gamma`` rows used).
        q: draft probabilities ``(gamma, vocab_q)``, or ``None`` for a deterministic draft
            (one-hot: ``q_i(d_i) = 1``, so the acceptance probability is ``p_i(d_i)``). A
            different width is zero-padded to the wider of the two.
        tokens: LongTensor ``(gamma,)`` of draft tokens ``d_i``.

    Returns:
        Tensor ``(gamma,)`` in [0, 1]. A token the draft gave probability 0 (it could not have
        drawn it) gets 0, never NaN.
    """
    p, q = same_width(p, q)
    g = tokens.shape[0]
    rows = torch.arange(g, device=p.device)
    tokens = tokens.to(p.device)
    p_d = p[rows, tokens]
    if q is None:
        return p_d.clamp(0.0, 1.0)
    q_d = q[rows, tokens]
    ratio = p_d / q_d.clamp_min(torch.finfo(q_d.dtype).tiny)
    return torch.where(q_d > 0, ratio.clamp(max=1.0), torch.zeros_like(ratio))


def residual_distribution(p_row: torch.Tensor, q_row: torch.Tensor | None, token: int | None = None) -> torch.Tensor:
    """The distribution of the recovered token, ``norm(max(0, p - q))``, after a rejection
    (shape ``(vocab,)``, the wider of ``p_row`` and ``q_row``).

    ``q_row=None`` means a one-hot draft at ``token``. When ``max(0, p - q)`` is all zeros (p == q,
    where a rejection has probability 0 but float rounding can still produce one) it returns
    ``p_row`` itself, so the result is always a proper distribution, never NaN. It is a plain
    normalisation, not a softmax (facts/speculative.md).
    """
    p_row, q_row = same_width(p_row, q_row)
    if q_row is None:
        r = p_row.clone()
        r[int(token)] = 0.0
    else:
        r = (p_row - q_row).clamp_min_(0.0)
    s = r.sum()
    if not bool(s > 0) or not bool(torch.isfinite(s)):
        return p_row / p_row.sum()
    return r / s


def verify_probabilities(p: torch.Tensor, q: torch.Tensor | None, draft_tokens,
                         generator: torch.Generator | None = None) -> tuple[int, int]:
    """The sampling rule on probabilities ``p`` and ``q`` (not logits); returns ``(num_accepted,
    token)`` as :func:`verify_logits`.

    Args:
        p: target probabilities ``(gamma + 1, vocab)`` at the draft positions and one beyond.
        q: draft probabilities ``(gamma, vocab_q)`` the drafts were drawn from, or ``None``
            (deterministic / one-hot draft).
        draft_tokens: ``gamma`` ints ``d_1..d_gamma``.
        generator: ``torch.Generator`` on ``p``'s device (``None``: the global RNG).

    Returns:
        ``(k, t)``: the first ``k`` drafts are accepted (0 <= k <= gamma) and ``t`` follows them:
        the recovered token, drawn from :func:`residual_distribution` of row ``k`` if
        ``k < gamma``, else the bonus token, drawn from ``p[gamma]``. The emitted tokens
        ``d_1..d_k, t`` are distributed exactly as ``k + 1`` successive draws from ``p``
        (Leviathan et al. 2023, App. A.1; tested by enumeration).
    """
    g = len(draft_tokens)
    if g == 0:
        return 0, int(torch.multinomial(p[0], 1, generator=generator))
    toks = torch.as_tensor(draft_tokens, dtype=torch.long)
    a = acceptance_probabilities(p, q, toks)
    u = torch.rand(g, generator=generator, dtype=a.dtype, device=a.device)
    rejected = (u >= a).nonzero()
    if rejected.numel() == 0:
        return g, int(torch.multinomial(p[g], 1, generator=generator))
    k = int(rejected[0, 0])
    r = residual_distribution(p[k], None if q is None else q[k], int(toks[k]))
    return k, int(torch.multinomial(r, 1, generator=generator))


def verify_logits(logits: torch.Tensor, draft_tokens: list[int], cfg: SamplingConfig, q: torch.Tensor | None = None,
                  generator: torch.Generator | None = None) -> tuple[int, int]:
    """One verification from the target's raw logits, greedy or sampling: how many drafts the
    target accepts, and its token.

    Args:
        logits: the target's logits ``(gamma + 1, vocab)`` after the newest token and after each
            draft (one forward pass over ``[newest] + draft_tokens``).
        draft_tokens: the ``gamma`` drafted ids.
        cfg: the sampling settings (the same for target and draft).
        q: the draft's distributions ``(gamma, vocab_q)``, or ``None`` (one-hot drafts).
        generator: for the sampling rule (see :func:`verify_probabilities`).

    Returns:
        ``(k, t)``, ``0 <= k <= gamma``: drafts ``d_1..d_k`` are accepted and ``t`` follows them.
        Greedy (``cfg.greedy``): ``k`` = the longest prefix equal to the target's argmax after
        each prefix, ``t`` = the target's argmax after it (recovered if ``k < gamma``, else the
        bonus); this is :func:`verify_probabilities` with one-hot ``p`` (tested), without drawing
        random numbers. Sampling: :func:`verify_probabilities` on ``probabilities(logits, cfg)``.
    """
    if not cfg.greedy:
        return verify_probabilities(probabilities(logits, cfg), q, draft_tokens, generator)
    best = logits.argmax(-1).tolist()
    k = 0
    while k < len(draft_tokens) and draft_tokens[k] == best[k]:
        k += 1
    return k, best[k]
