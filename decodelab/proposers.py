"""Draft proposers for speculative decoding: who writes the draft the target model checks.

:func:`decodelab.speculative.speculative_generate` talks to a draft through one small interface,
:class:`Proposer`: ``propose(ids, gamma, cfg, generator) -> Proposal(tokens, q)``. Three
implementations:

* :class:`DraftModelProposer` — a small causal LM (the 초안 모델, draft model) drafts
  autoregressively with its own KV cache. Each drafted token is drawn from ``q`` = the draft's
  next-token distribution under the SAME temperature / top-k / top-p as the target
  (:func:`decodelab.sampling.probabilities`), and ``q`` is returned for the rejection rule.
* :class:`NGramProposer` — model-free n-gram drafting, ``draft="ngram"`` (vLLM's name for it;
  Saxena 2023 calls it "prompt lookup decoding"): find the latest earlier occurrence of the last
  n tokens and propose what followed it. It is deterministic, so ``q`` is one-hot at each proposed token
  (``Proposal.q is None``); the rejection rule stays exact with a one-hot ``q``.
* anything else that subclasses :class:`Proposer` (an abstract base class: ``propose`` is
  required, ``reset`` and ``sync`` have no-op defaults).

:func:`decodelab.speculative.as_proposer` is the one place that turns a ``draft`` argument (a
model, a proposer or a name) into a proposer; the loop's module owns it, so EAGLE (a proposer
built on this one) is imported downward from there.

Llama drafts run through :class:`LlamaRunner`, a lean re-implementation of the Llama forward
pass (the same weights, a preallocated KV cache cropped by moving an index, ~15 tensor operations
per layer). Speculative decoding only pays when a draft step is much cheaper than a target step
(c = draft step / target step, Leviathan et al. 2023, Sec. 3.4), and a tiny model's single-token
pass through ``transformers`` is dominated by per-call overhead (figures:
``facts/tiny-model-feasibility.md``, "Speed"; ``decodelab bench speculative`` prints both c values). The target is never run this way: it always uses ``transformers`` (so every output token
is the target's own, and the comparison with target-only decoding is fair). Drafts of any other
causal-LM architecture (Qwen2, Mistral, Gemma, GPT-2, ...) run through ``transformers``' forward
pass. The draft's implementation only changes speed, never the output distribution (see
``speculative.py``).

Vocabularies: a draft may have more or fewer output rows than the target (real pairs that share
one tokenizer are often padded differently, e.g. Qwen2.5-0.5B 151,936 rows vs Qwen2.5-7B 152,064).
:class:`DraftModelProposer` drafts from its first ``vocab_size`` rows only (``decodelab.speculative.as_proposer`` passes
the smaller of the two sizes), so it never proposes an id the target cannot read, and ``q`` has
that many columns; the verification pads it with zeros to the target's width.
"""

from __future__ import annotations

import abc
import functools
import time
import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ._check import check, fail
from .decoding import DecodeState, cache_length, crop_cache, forward, new_cache, prefill
from .models import vocab_size as _rows  # the parameter name vocab_size is taken
from .rejection import verify_logits
from .sampling import SamplingConfig, probabilities

__all__ = [
    "DraftModelProposer",
    "LlamaRunner",
    "NGramProposer",
    "Proposal",
    "Proposer",
    "Verdict",
    "common_prefix_length",
]


@dataclass
class Proposal:
    """What a proposer returns for one round.

    Attributes:
        tokens: the drafted token ids, ``0 <= len(tokens) <= gamma`` (a proposer may propose
            fewer, e.g. ``NGramProposer`` when nothing matches; 0 tokens = a plain target step).
        q: float tensor ``(len(tokens), vocab)``: row i is the distribution ``tokens[i]`` was
            drawn from, or ``None`` for a deterministic proposer (one-hot at ``tokens[i]``). For
            greedy decoding (temperature 0) model drafts also return ``None``.
    """

    tokens: list[int]
    q: torch.Tensor | None = None


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The outcome of one verification (:meth:`Proposer.verify_round`).

    Attributes:
        drafted: the drafted tokens of this round as a display shows them (a chain: all of them;
            a tree: the accepted path and the best-ranked continuation below it).
        accepted: how many of them the target accepted (a prefix of ``drafted``).
        token: the target's own token after them: recovered (a rejection) or bonus (all accepted).
        forward_s: wall time of the target's verification forward pass, seconds (the chain path:
            the pass alone; a tree: the pass and the walk, which reads the LM head lazily).
    """

    drafted: list[int]
    accepted: int
    token: int
    forward_s: float


class Proposer(abc.ABC):
    """The draft side of speculative decoding (an abstract base class). Subclass it and implement
    :meth:`propose`; :meth:`reset` and :meth:`sync` are no-op hooks by default (as transformers'
    ``CandidateGenerator.update_candidate_strategy``).

    The target's two passes are methods too, so the loop in
    :func:`decodelab.speculative.speculative_generate` has one path for every proposer:
    :meth:`prefill_target` (the target's prefill) and :meth:`verify_round` (one target pass over
    the newest token and the draft, then the rejection rule of :mod:`decodelab.rejection`). The
    defaults are the chain path. A proposer that reads the target's hidden states (EAGLE,
    :mod:`decodelab.eagle`) declares it with ``reads_target = True`` and overrides both, the way
    transformers' candidate generators declare what they need with class attributes.

    Attributes:
        forward_calls: number of model forward passes made so far (0 by default: model-free).
        vocab_size: size of the distributions in ``Proposal.q`` (``None`` if it never returns q).
        reads_target: ``True`` when the proposer runs the target's passes itself (its overrides of
            :meth:`prefill_target` and :meth:`verify_round` keep the target's hidden states).
    """

    forward_calls: int = 0
    vocab_size: int | None = None
    reads_target: bool = False

    @abc.abstractmethod
    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig,
                generator: torch.Generator | None = None) -> Proposal:
        """Draft up to ``gamma`` tokens that follow ``ids`` (prompt + tokens accepted so far)."""

    def reset(self) -> None:
        """Forget all state (KV cache, history) before a new generation. Default: nothing."""

    def sync(self, ids: list[int]) -> None:
        """Called after every verification with the accepted text ``ids``, so that a proposer
        with a cache can drop rejected positions at once. Default: nothing."""

    def prefill_target(self, target, input_ids: torch.Tensor) -> DecodeState:
        """The target's prefill over ``input_ids`` (LongTensor ``(1, S)``): a
        :class:`~decodelab.decoding.DecodeState` whose logits give the first token.
        Default: :func:`decodelab.decoding.prefill`, exactly as plain decoding."""
        return prefill(target, input_ids)

    def verify_round(self, target, cache, ids: list[int], proposal: Proposal, cfg: SamplingConfig,
                     generator: torch.Generator | None = None) -> Verdict:
        """Verify ``proposal`` in ONE target forward pass and apply the rejection rule.

        Args:
            target: the target model; ``cache``: its KV cache holding ``len(ids) - 1`` positions
                (every token but the newest, ``ids[-1]``), extended in place by ``1 + len(drafts)``.
            ids: prompt + tokens so far; ``proposal``: this round's draft (may be empty: a plain
                target step); ``cfg``, ``generator``: the sampling settings and draws.

        Returns:
            :class:`Verdict`. The caller crops the cache to the accepted text. Default (a chain):
            a forward pass over ``[ids[-1]] + drafts`` keeping ``len(drafts) + 1`` logits, then
            :func:`decodelab.rejection.verify_logits`.
        """
        drafted = proposal.tokens
        t0 = time.perf_counter()
        logits = forward(target, torch.tensor([[ids[-1]] + drafted]), cache, logits_to_keep=len(drafted) + 1)[0]
        forward_s = time.perf_counter() - t0
        k, token = verify_logits(logits, drafted, cfg, proposal.q, generator)
        return Verdict(drafted=drafted, accepted=k, token=token, forward_s=forward_s)


def common_prefix_length(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists (binary search on C-level slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------------
# a lean Llama forward pass (draft side only)


_PREPARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _prepared_weights(model):
    """The rearranged weights of :class:`LlamaRunner`, cached per model object.

    The cache entry is reused only while every parameter is the same tensor at the same version
    (``Tensor._version`` counts in-place changes), so edited or reloaded weights are re-prepared.
    """
    sig = tuple((p.data_ptr(), p._version) for p in model.parameters())
    hit = _PREPARED.get(model)
    if hit is not None and hit[0] == sig:
        return hit[1]
    cfg, inner = model.config, model.model
    h = cfg.num_attention_heads
    nkv = cfg.num_key_value_heads or h
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // h
    root = cfg.hidden_size ** 0.5
    half = d // 2
    # rotate_half(x) = x @ P with P the signed permutation [x1, x2] -> [-x2, x1]
    with torch.no_grad():
        embed = inner.embed_tokens.weight.detach()
        dtype, dev = embed.dtype, embed.device
        P = torch.zeros(d, d, device=dev)
        P[half:, :half] = -torch.eye(half, device=dev)
        P[:half, half:] = torch.eye(half, device=dev)
        layers = []
        for layer in inner.layers:
            a, m = layer.self_attn, layer.mlp
            wq, wk, wv = a.q_proj.weight.float(), a.k_proj.weight.float(), a.v_proj.weight.float()
            # rows giving rotate_half(q) and rotate_half(k) directly (P^T applied per head)
            rq = (P.t() @ wq.view(h, d, -1)).reshape(h * d, -1)
            rk = (P.t() @ wk.view(nkv, d, -1)).reshape(nkv * d, -1)
            # RMSNorm weight and its sqrt(hidden) factor folded into the next projection:
            # (n(x) * w) @ W^T = n(x) @ (W * w)^T
            ln1 = layer.input_layernorm.weight.float() * root
            ln2 = layer.post_attention_layernorm.weight.float() * root
            wqkv = torch.cat([wq, wk, wv, rq, rk]) * ln1[None, :]
            wgu = torch.cat([m.gate_proj.weight.float(), m.up_proj.weight.float()]) * ln2[None, :]
            layers.append((
                wqkv.t().contiguous().to(dtype),
                a.o_proj.weight.detach().t().contiguous(),
                wgu.t().contiguous().to(dtype),
                m.down_proj.weight.detach().t().contiguous(),
            ))
        head = model.get_output_embeddings().weight.float() * (inner.norm.weight.float() * root)[None, :]
        lm_head = head.t().contiguous().to(dtype)  # (hidden, vocab), final norm folded in
    out = (embed, layers, lm_head)
    _PREPARED[model] = (sig, out)
    return out


@functools.lru_cache(maxsize=8)
def _tables(theta: float, d: int, max_len: int, dtype, device):
    """RoPE cos/sin ``(max_len, 1, d)`` as transformers computes them (float32, then cast) and a
    causal mask ``(max_len, max_len)``; shared by all runners (never modified)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.arange(max_len, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1).to(device)
    causal = torch.ones(max_len, max_len, dtype=torch.bool, device=device).tril_()
    return emb.cos().to(dtype)[:, None, :], emb.sin().to(dtype)[:, None, :], causal


class LlamaRunner:
    """A minimal-overhead forward pass over a ``transformers`` Llama model's own weights.

    Same maths as ``LlamaForCausalLM`` (RMSNorm, RoPE "default", SDPA attention, SiLU-gated MLP;
    transformers ``models/llama/modeling_llama.py``), rearranged to need fewer tensor operations
    (each costs microseconds of dispatch, more than the arithmetic of a tiny model):

    * q/k/v and gate/up projections are concatenated into one matrix each, and the RMSNorm
      weights are folded into the matrix that follows each norm;
    * RoPE's ``rotate_half(q)`` and ``rotate_half(k)`` come out of the same matrix product (extra
      output rows, pre-permuted), so RoPE is one multiply-add;
    * the residual additions are fused into ``addmm``;
    * the KV cache is a preallocated tensor of shape ``(layers, 2, 1, kv_heads, max_len, head_dim)``
      whose length is an int (``crop`` just moves it).

    Logits agree with ``transformers`` to ~1e-5 (tested), not bit for bit.

    Only for batch 1, float32/float16/bfloat16 weights on one device, Llama configs with the
    "default" RoPE, no biases and ``pretraining_tp == 1`` (see :meth:`supports`).

    Args:
        model: a ``LlamaForCausalLM``.
        max_len: positions to preallocate (default: the model's context); the buffers double
            when more are needed.
        vocab_size: logits for the first ``vocab_size`` output rows only (default: all).

    Raises:
        ValueError: an architecture :meth:`supports` rejects.
    """

    def __init__(self, model, max_len: int | None = None, vocab_size: int | None = None):
        if not self.supports(model):
            raise fail("model", type(model).__name__, "LlamaRunner는 기본 RoPE의 Llama 모델만 돌립니다",
                       "LlamaForCausalLM; 다른 구조는 backend='transformers'")
        cfg = model.config
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads or self.n_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.eps = float(cfg.rms_norm_eps)
        self.hidden = cfg.hidden_size
        self.embed, self.layers, self.lm_head = _prepared_weights(model)
        if vocab_size is not None and vocab_size < self.lm_head.shape[1]:
            self.lm_head = self.lm_head[:, :vocab_size].contiguous()
        self.dtype, self.device = self.embed.dtype, self.embed.device
        self.theta = float(cfg.rope_parameters["rope_theta"])
        self.kv = torch.zeros(len(self.layers), 2, 1, self.n_kv, 0, self.head_dim, dtype=self.dtype, device=self.device)
        self.length = 0
        self.max_len = 0
        self.scale = self.head_dim ** -0.5
        self.gqa = self.n_kv != self.n_heads
        self._q = self.n_heads * self.head_dim
        self._k = self.n_kv * self.head_dim
        self._grow(int(max_len or cfg.max_position_embeddings))

    def _grow(self, max_len: int) -> None:
        """(Re)allocate the RoPE tables, causal mask and KV buffer for ``max_len`` positions."""
        d = self.head_dim
        self.cos, self.sin, self.causal = _tables(self.theta, d, max_len, self.dtype, self.device)
        # empty, not zeros: a position is always written before attention reads it
        kv = torch.empty(len(self.layers), 2, 1, self.n_kv, max_len, d, dtype=self.dtype, device=self.device)
        kv[..., : self.length, :] = self.kv[..., : self.length, :]
        self.kv = kv
        self.K = [kv[i, 0] for i in range(len(self.layers))]  # per-layer views (1, kv_heads, max_len, d)
        self.V = [kv[i, 1] for i in range(len(self.layers))]
        self.max_len = max_len

    @staticmethod
    def supports(model) -> bool:
        """Whether ``model`` is a Llama causal LM this runner reproduces exactly."""
        cfg = getattr(model, "config", None)
        if cfg is None or getattr(cfg, "model_type", None) != "llama":
            return False
        rope = getattr(cfg, "rope_parameters", None) or {}
        return (
            rope.get("rope_type", "default") == "default"
            and "rope_theta" in rope
            and not getattr(cfg, "attention_bias", False)
            and not getattr(cfg, "mlp_bias", False)
            and getattr(cfg, "hidden_act", "silu") == "silu"
            and getattr(cfg, "pretraining_tp", 1) == 1
            and hasattr(model, "model") and hasattr(model.model, "layers")
        )

    def crop(self, length: int) -> None:
        """Keep only the first ``length`` cached positions (O(1): the buffer is reused)."""
        self.length = min(self.length, int(length))

    @torch.inference_mode()
    def forward(self, ids: list[int], keep: int = 1) -> torch.Tensor:
        """Feed ``ids`` (T new tokens) after the cached positions; return logits ``(keep, vocab)``.

        The buffers grow (doubling) if ``max_len`` positions are not enough.
        """
        T = len(ids)
        pos = self.length
        end = pos + T
        if end > self.max_len:
            self._grow(max(end, 2 * self.max_len))
        h, d, nkv = self.n_heads, self.head_dim, self.n_kv
        nqk = h + nkv
        ke = nqk * d  # columns: [q | k | v | rotate_half(q) | rotate_half(k)]
        ve = ke + nkv * d
        deps = self.hidden * self.eps  # rsqrt(mean(x^2) + eps) = sqrt(hidden) * rsqrt(sum(x^2) + hidden * eps)
        cos, sin = self.cos[pos:end], self.sin[pos:end]
        if T == 1:  # the drafting hot path: no mask, views instead of transposes
            tok = ids[0]
            x = self.embed[tok:tok + 1]  # (1, hidden)
            c, s_ = cos[0], sin[0]
            for (wqkv, wo, wgu, wdown), K, V in zip(self.layers, self.K, self.V):
                qkv = (x * x.square().sum(-1, keepdim=True).add_(deps).rsqrt_()) @ wqkv
                qk = torch.addcmul(qkv[0, :ke].view(nqk, d) * c, qkv[0, ve:].view(nqk, d), s_)  # RoPE
                K[0, :, pos] = qk[h:]
                V[0, :, pos] = qkv[0, ke:ve].view(nkv, d)
                att = F.scaled_dot_product_attention(qk[:h].view(1, h, 1, d), K[:, :, :end], V[:, :, :end],
                                                     scale=self.scale, enable_gqa=self.gqa)
                x = torch.addmm(x, att.view(1, h * d), wo)
                g, u = ((x * x.square().sum(-1, keepdim=True).add_(deps).rsqrt_()) @ wgu).chunk(2, dim=-1)
                x = torch.addmm(x, F.silu(g) * u, wdown)
        else:
            x = self.embed[ids]  # (T, hidden)
            mask = self.causal[pos:end, :end]
            for (wqkv, wo, wgu, wdown), K, V in zip(self.layers, self.K, self.V):
                qkv = (x * x.square().sum(-1, keepdim=True).add_(deps).rsqrt_()) @ wqkv
                qk = torch.addcmul(qkv[:, :ke].view(T, nqk, d) * cos, qkv[:, ve:].view(T, nqk, d), sin)
                K[0, :, pos:end] = qk[:, h:].transpose(0, 1)
                V[0, :, pos:end] = qkv[:, ke:ve].view(T, nkv, d).transpose(0, 1)
                q = qk[None, :, :h].transpose(1, 2)  # (1, h, T, d): 4-D inputs take SDPA's fast CPU kernel
                att = F.scaled_dot_product_attention(q, K[:, :, :end], V[:, :, :end], attn_mask=mask,
                                                     scale=self.scale, enable_gqa=self.gqa)
                x = torch.addmm(x, att[0].transpose(0, 1).reshape(T, h * d), wo)
                g, u = ((x * x.square().sum(-1, keepdim=True).add_(deps).rsqrt_()) @ wgu).chunk(2, dim=-1)
                x = torch.addmm(x, F.silu(g) * u, wdown)
        self.length = end
        x = x[T - keep:]
        return ((x * x.square().sum(-1, keepdim=True).add_(deps).rsqrt_()) @ self.lm_head).float()


# --------------------------------------------------------------------------------------------
# proposers


class DraftModelProposer(Proposer):
    """A draft model proposing tokens autoregressively, with its own KV cache.

    Cache bookkeeping: the proposer remembers the tokens whose keys/values are in its cache
    (``self.history``). After each verification :meth:`sync` crops the cache to the longest
    prefix it shares with the accepted text (rejected drafts go). :meth:`propose` then feeds the
    rest of ``ids`` (the first call: the whole prompt, i.e. the draft's prefill; later: 1 token, or
    2 when the previous round accepted every draft, like transformers' ``new_len - 2`` crop) and
    drafts ``gamma`` tokens: ``gamma`` forward passes in all. Right after drafting its cache
    holds ``len(ids) + gamma - 1`` positions.

    Args:
        model: a ``transformers`` causal LM sharing the target's tokenizer (any architecture).
        backend: ``"auto"`` (lean :class:`LlamaRunner` when the architecture allows, else
            ``transformers``), ``"lean"`` or ``"transformers"``. Both give the same tokens.
        vocab_size: draft from the first ``vocab_size`` output rows only (default: all rows);
            :func:`decodelab.speculative.as_proposer` passes ``min(draft rows, target rows)``.

    Raises:
        ValueError: unknown ``backend``, or ``"lean"`` for an unsupported architecture.
    """

    def __init__(self, model, *, backend: str = "auto", vocab_size: int | None = None):
        if backend not in ("auto", "lean", "transformers"):
            raise fail("backend", backend, "초안 모델을 돌릴 방식을 고르세요", "'auto', 'lean', 'transformers'")
        if backend == "auto":
            backend = "lean" if LlamaRunner.supports(model) else "transformers"
        self.model = model
        self.vocab_size = min(_rows(model), int(vocab_size)) if vocab_size is not None else _rows(model)
        self.forward_calls = 0
        self._runner = LlamaRunner(model, vocab_size=self.vocab_size) if backend == "lean" else None
        self._device = next(model.parameters()).device
        self._n_embed = int(model.get_input_embeddings().weight.shape[0])
        self.reset()

    @property
    def backend(self) -> str:
        """``"lean"`` (:class:`LlamaRunner`) or ``"transformers"``."""
        return "transformers" if self._runner is None else "lean"

    def reset(self) -> None:
        """Forget the draft's KV cache and its token history before a new generation (the next
        :meth:`propose` prefills the whole prompt). :func:`speculative_generate` calls it."""
        self.history: list[int] = []
        self._hf_cache = None
        if self._runner is not None:
            self._runner.crop(0)

    # one forward pass over new tokens -> logits of the last position, shape (vocab_size,)
    def _step(self, new: list[int]) -> torch.Tensor:
        self.forward_calls += 1
        self.history.extend(new)
        if max(new) >= self._n_embed:  # a token from the target's padded rows: the draft has no
            new = [t if t < self._n_embed else 0 for t in new]  # embedding for it; any input keeps q valid
        if self._runner is not None:
            return self._runner.forward(new)[0]
        return forward(self.model, torch.tensor([new], device=self._device), self._hf_cache)[0, -1, : self.vocab_size]

    def _crop(self, n: int) -> None:
        del self.history[n:]
        if self._runner is not None:
            self._runner.crop(n)
        else:
            crop_cache(self._hf_cache, n)

    def sync(self, ids: list[int]) -> None:
        """Crop the cache to the longest prefix it shares with ``ids`` (the accepted text): called
        after every verification, so the draft's cache never keeps a rejected token."""
        n = common_prefix_length(self.history, ids)
        if n < len(self.history):
            self._crop(n)

    def cache_length(self) -> int:
        """Positions currently in the draft's KV cache (== ``len(self.history)``)."""
        return self._runner.length if self._runner is not None else cache_length(self._hf_cache)

    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig,
                generator: torch.Generator | None = None) -> Proposal:
        """Draft ``gamma`` tokens after ``ids`` (``gamma`` forward passes).

        Greedy (``cfg.greedy``): each token is the draft's argmax, ``q`` is ``None``. Otherwise
        each token is drawn from ``q_i = probabilities(draft_logits_i, cfg)`` and ``q`` is the
        ``(gamma, vocab_size)`` stack of those rows, the very tensors that were sampled from.
        """
        if self._runner is None and self._hf_cache is None:
            self._hf_cache = new_cache(self.model)
        keep = common_prefix_length(self.history, ids)
        if keep == len(ids):  # everything is cached already: re-feed the last token
            keep -= 1
        self._crop(keep)
        logits = self._step(ids[keep:])
        tokens: list[int] = []
        if cfg.greedy:
            for i in range(gamma):
                tok = int(logits.argmax())
                tokens.append(tok)
                if i + 1 < gamma:
                    logits = self._step([tok])
            return Proposal(tokens, None)
        rows = []
        for i in range(gamma):
            q = probabilities(logits, cfg)
            tok = int(torch.multinomial(q, 1, generator=generator))
            rows.append(q)
            tokens.append(tok)
            if i + 1 < gamma:
                logits = self._step([tok])
        return Proposal(tokens, torch.stack(rows))


class NGramProposer(Proposer):
    """Prompt lookup / n-gram drafting: no model, no forward passes (c ~ 0).

    Looks for the most recent earlier occurrence of the last ``n`` tokens of ``ids`` (trying
    ``n = max_n`` down to ``min_n``) and proposes the up to ``gamma`` tokens that followed it
    (vLLM ``method="ngram"`` with ``prompt_lookup_min/max``; Saxena 2023, "prompt lookup
    decoding"). Deterministic: the
    returned ``q`` is ``None`` (one-hot). Acceptance depends entirely on repetition in the text.

    Raises:
        TypeError: ``min_n`` or ``max_n`` not a number.
        ValueError: ``min_n`` not a whole number >= 1, or ``max_n`` not one >= ``min_n``.
    """

    def __init__(self, min_n: int = 1, max_n: int = 3, vocab_size: int | None = None):
        self.min_n = check("min_n", min_n, "가장 짧은 n-gram 길이", low=1, integer=True)
        self.max_n = check("max_n", max_n, "가장 긴 n-gram 길이", low=self.min_n, integer=True, hint="min_n 이상")
        self.vocab_size = vocab_size
        self.forward_calls = 0

    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig | None = None,
                generator: torch.Generator | None = None) -> Proposal:
        """Propose the tokens that followed the latest earlier occurrence of the last n tokens.

        Args:
            ids: prompt + tokens accepted so far (token ids, length L).
            gamma: the most tokens to propose (int >= 0).
            cfg, generator: ignored (the proposal is deterministic); accepted for the interface.

        Returns:
            :class:`Proposal` with ``tokens`` = ``ids[start + n : start + n + gamma]`` for the
            longest ``n`` in ``max_n..min_n`` (and ``n <= L - 1``) whose last-n-token tail occurs
            earlier at ``start`` with at least one token after it, the latest such ``start``;
            0 to ``gamma`` tokens, fewer when the match is near the end, ``[]`` when nothing
            repeats (then :func:`speculative_generate` does a plain target step). ``q`` is
            ``None`` (one-hot).
        """
        L = len(ids)
        for n in range(min(self.max_n, L - 1), self.min_n - 1, -1):
            tail = ids[L - n:]
            for start in range(L - n - 1, -1, -1):  # latest earlier occurrence first
                if ids[start:start + n] == tail:
                    follow = ids[start + n: start + n + gamma]
                    if follow:
                        return Proposal(list(follow), None)
        return Proposal([], None)
