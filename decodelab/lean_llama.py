"""A lean Llama forward pass for draft models: the same weights and maths, far fewer tensor operations.

:class:`LlamaRunner` is a model, not a proposer: :class:`decodelab.proposers.DraftModelProposer`
runs a Llama draft through it (``backend="lean"``, the default where :meth:`LlamaRunner.supports`
the architecture). It re-implements ``transformers``' ``LlamaForCausalLM`` forward pass over the
model's own weights, with a preallocated KV cache cropped by moving an index and ~15 tensor
operations per layer.

Why: speculative decoding only pays when a draft step is much cheaper than a target step
(c = draft step / target step, Leviathan et al. 2023, arXiv 2211.17192, Sec. 3.4), and a tiny
model's single-token pass through ``transformers`` is dominated by per-call overhead (figures:
``facts/tiny-model-feasibility.md``, "Speed"; ``decodelab bench speculative`` prints both c
values). The target is never run this way: it always uses ``transformers`` (every output token is
the target's own, and the comparison with target-only decoding is fair). Drafts of any other
architecture run through ``transformers``. Which forward pass a draft uses only changes speed,
never the output distribution (logits agree to ~1e-5, tested).
"""

from __future__ import annotations

import functools
import weakref

import torch
import torch.nn.functional as F

from ._check import fail

__all__ = ["LlamaRunner"]


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
