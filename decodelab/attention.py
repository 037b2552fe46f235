"""Attention, one head at a time: the query, key and value of each position, and the weights.

Notebook 01's primer ("어텐션: 쿼리, 키, 값") uses three things from here:

- :func:`attention_shapes`: the head counts and sizes a model's attention has (from its config):
  query heads, key/value (KV) heads, the head size and the group of query heads that share one
  KV head (grouped-query attention, GQA; Ainslie et al. 2023, arXiv 2305.13245).
- :func:`head_attention`: one head's queries, keys, values and attention weights for a prompt,
  computed step by step as Vaswani et al. (2017, "Attention Is All You Need", eq. 1) write it,
  ``softmax(Q K^T / sqrt(d_head)) V``, with the causal mask (a position sees only itself and the
  positions before it). ``tests/test_attention.py`` checks the weights against the ones
  transformers' own (eager) attention returns with ``output_attentions=True``.
- :func:`cached_kv`: the keys and values a KV cache holds for one layer (what the model keeps so
  that later tokens can read them again).

Llama-family models only (the bundled pair, and any ``LlamaForCausalLM``-shaped model whose
layers have ``self_attn.q_proj``/``k_proj``/``v_proj`` and rotary position embeddings).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from ._check import check, fail

__all__ = ["AttentionShapes", "HeadAttention", "attention_figure", "attention_shapes", "cached_kv", "head_attention"]


@dataclass(frozen=True)
class AttentionShapes:
    """The sizes of a decoder's attention, per layer.

    Attributes:
        name: the model's name (its config's ``_name_or_path``, or the profile's name).
        n_layers: layers (each has its own attention).
        d_model: the hidden size (numbers per position entering a layer).
        n_q_heads: query heads per layer (``num_attention_heads``).
        n_kv_heads: key/value heads per layer (``num_key_value_heads``; equal to ``n_q_heads``
            without GQA).
        d_head: numbers in one head's query, key or value vector (``head_dim``).
    """

    name: str
    n_layers: int
    d_model: int
    n_q_heads: int
    n_kv_heads: int
    d_head: int

    @property
    def group(self) -> int:
        """Query heads that share one KV head: ``n_q_heads // n_kv_heads`` (1 = no sharing)."""
        return self.n_q_heads // self.n_kv_heads

    def kv_head_of(self, head: int) -> int:
        """The KV head that query head ``head`` reads (transformers' ``repeat_kv`` order: query
        heads ``0..group-1`` read KV head 0, the next ``group`` read KV head 1, ...)."""
        return head // self.group


def attention_shapes(model) -> AttentionShapes:
    """The attention sizes of ``model``.

    Args:
        model: a transformers model (its ``.config`` is read), a transformers config, or a
            :class:`decodelab.profiles.ModelProfile` (e.g. ``profiles.get_model("Llama-3-8B")``,
            built from the published config.json).

    Returns:
        :class:`AttentionShapes` (counts, and sizes in numbers per vector, not bytes).

    Raises:
        TypeError: ``model`` has no attention sizes (not a model, config or profile).
        ValueError: the query heads are not a whole multiple of the KV heads.
    """
    from .profiles import ModelProfile

    if isinstance(model, ModelProfile):
        shapes = AttentionShapes(model.name, model.n_layers, model.d_model, model.n_q_heads, model.n_kv_heads,
                                 model.d_head)
    else:
        cfg = getattr(model, "config", model)
        if not hasattr(cfg, "num_attention_heads") or not hasattr(cfg, "hidden_size"):
            raise fail("model", type(model).__name__, "어텐션 크기를 읽을 수 없습니다", "transformers 모델, 그 config, "
                       "또는 decodelab.profiles.get_model(...)의 결과", TypeError)
        n_q = int(cfg.num_attention_heads)
        n_kv = int(getattr(cfg, "num_key_value_heads", None) or n_q)
        d_head = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // n_q)
        name = str(getattr(cfg, "_name_or_path", "") or getattr(cfg, "model_type", ""))
        shapes = AttentionShapes(Path(name).name if name else name,
                                 int(cfg.num_hidden_layers), int(cfg.hidden_size), n_q, n_kv, d_head)
    if shapes.n_q_heads % shapes.n_kv_heads:
        raise fail("num_key_value_heads", shapes.n_kv_heads, "쿼리 헤드 수가 KV 헤드 수의 배수가 아닙니다",
                   f"{shapes.n_q_heads}의 약수")
    return shapes


@dataclass
class HeadAttention:
    """One attention head of one layer, for every position of a prompt.

    Attributes:
        token_ids: the prompt's token ids (``S`` of them).
        layer, head: which layer and which query head (0-based).
        kv_head: the KV head this query head reads (= ``head`` without GQA).
        query, key, value: float32 tensors ``(S, d_head)``; row ``i`` belongs to position ``i``.
            Query and key are after the rotary position embedding (RoPE), as the model uses them.
        scores: float32 ``(S, S)``: ``query @ key.T / sqrt(d_head)``, ``-inf`` above the diagonal
            (a position does not see later positions).
        weights: float32 ``(S, S)``: the softmax of each row of ``scores``; row ``i`` is how much
            position ``i`` takes from each position ``j <= i``; every row sums to 1, zeros above
            the diagonal.
        output: float32 ``(S, d_head)``: ``weights @ value``, this head's output (before the
            layer's output projection ``o_proj`` mixes the heads).
    """

    token_ids: list[int]
    layer: int
    head: int
    kv_head: int
    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor


def _prompt_ids(tokenizer, prompt) -> torch.Tensor:
    if isinstance(prompt, str):
        if not prompt:
            raise fail("prompt", prompt, "빈 프롬프트입니다", "글자가 하나 이상인 문자열")
        ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    else:
        ids = prompt
    ids = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1)
    if ids.shape[1] == 0:
        raise fail("prompt", prompt, "토큰이 하나도 없습니다", "토큰이 1개 이상인 프롬프트")
    return ids


def head_attention(model, tokenizer, prompt, *, layer: int = 0, head: int = 0) -> HeadAttention:
    """The queries, keys, values and attention weights of one head for ``prompt``.

    The layer's input (the hidden states after the layers before it) is normalised
    (``input_layernorm``) and projected by ``q_proj``, ``k_proj``, ``v_proj``; the head's slice is
    rotated by the rotary position embedding (queries and keys only); then
    ``weights = softmax(Q K^T / sqrt(d_head) + causal mask)`` (Vaswani et al. 2017, eq. 1) and
    ``output = weights V``. With GQA, query head ``h`` reads KV head ``h // group``
    (:meth:`AttentionShapes.kv_head_of`). One forward pass of the layers before ``layer``; no KV
    cache is kept.

    Args:
        model: a Llama-family transformers causal LM (e.g. ``decodelab.load_models().target``).
        tokenizer: its tokenizer (used when ``prompt`` is a string).
        prompt: a string (tokenized without special tokens) or a sequence of ``S >= 1`` token ids.
        layer: ``0 <= layer < n_layers``.
        head: a query head, ``0 <= head < n_q_heads``.

    Returns:
        :class:`HeadAttention` (float32 tensors on the CPU).

    Raises:
        ValueError: an empty prompt, or ``layer``/``head`` out of range (Korean, with the range).
        TypeError: ``layer``/``head`` not an int.
    """
    shapes = attention_shapes(model)
    layer = check("layer", layer, "층 번호", integer=True, high=shapes.n_layers - 1,
                  hint=f"이 모델의 층은 0~{shapes.n_layers - 1}")
    head = check("head", head, "쿼리 헤드 번호", integer=True, high=shapes.n_q_heads - 1,
                 hint=f"이 모델의 쿼리 헤드는 0~{shapes.n_q_heads - 1}")
    ids = _prompt_ids(tokenizer, prompt)
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    decoder = model.model
    block = decoder.layers[layer]
    attn = block.self_attn
    d, kv = shapes.d_head, shapes.kv_head_of(head)
    with torch.inference_mode():
        out = model(input_ids=ids.to(model.device), use_cache=False, output_hidden_states=True, logits_to_keep=1)
        hidden = out.hidden_states[layer]                      # the input of this layer, (1, S, d_model)
        x = block.input_layernorm(hidden)
        q = attn.q_proj(x)[..., head * d:(head + 1) * d]        # (1, S, d_head)
        k = attn.k_proj(x)[..., kv * d:(kv + 1) * d]
        v = attn.v_proj(x)[..., kv * d:(kv + 1) * d]
        positions = torch.arange(ids.shape[1], device=hidden.device)[None]
        cos, sin = decoder.rotary_emb(hidden, positions)
        q, k = apply_rotary_pos_emb(q[:, None], k[:, None], cos, sin)   # (1, 1, S, d_head)
        q, k, v = q[0, 0].float().cpu(), k[0, 0].float().cpu(), v[0].float().cpu()
    n = ids.shape[1]
    scores = (q @ k.T) / d ** 0.5
    scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return HeadAttention(ids[0].tolist(), layer, head, kv, q, k, v, scores, weights, weights @ v)


def cached_kv(cache, layer: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The keys and values a KV cache holds for one layer.

    Args:
        cache: a ``transformers`` cache (``DecodeState.cache`` after :func:`decodelab.prefill`).
        layer: ``0 <= layer <`` the cache's layer count.

    Returns:
        ``(keys, values)``, each a tensor of shape ``(batch, n_kv_heads, positions, d_head)``
        (the cache's own tensors, not copies).

    Raises:
        ValueError: no cache (``None``), or ``layer`` out of range. TypeError: ``layer`` not an int.
    """
    if cache is None:
        raise fail("cache", None, "KV 캐시가 없습니다", "use_cache=True로 만든 DecodeState의 cache")
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise fail("cache", type(cache).__name__, "층별 키·값을 읽을 수 없는 캐시입니다", "transformers DynamicCache",
                   TypeError)
    layer = check("layer", layer, "층 번호", integer=True, high=len(layers) - 1, hint=f"0~{len(layers) - 1}")
    return layers[layer].keys, layers[layer].values


def attention_figure(result: HeadAttention, tokenizer):
    """One head's attention weights as a grid: row = the position whose query asks, column = the
    position whose key answers; darker = larger weight (0 to 1), the weight written in each cell.

    Args:
        result: from :func:`head_attention`.
        tokenizer: to label the rows and columns with the tokens.

    Returns:
        a matplotlib Figure (pyplot-managed, shown inline by Jupyter).
    """
    from .plots import new_figure
    from .plots import plot_label

    w = result.weights.numpy()
    n = len(result.token_ids)
    labels = [f"{i}: {plot_label(tokenizer, t)}" for i, t in enumerate(result.token_ids)]
    fig, ax = new_figure(figsize=(min(10, 2.4 + 0.7 * n), min(7.5, 1.9 + 0.6 * n)))
    ax.imshow(w, cmap="Blues", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if j <= i:
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=10,
                        color="white" if w[i, j] > 0.6 else "#111827")
            else:
                ax.text(j, i, "·", ha="center", va="center", fontsize=10, color="#9ca3af")
    ax.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=11)
    ax.set_yticks(range(n), labels, fontsize=11)
    ax.set_xlabel("키를 내는 위치 (앞 토큰들)", fontsize=12)
    ax.set_ylabel("쿼리를 내는 위치", fontsize=12)
    ax.set_title(f"층 {result.layer}, 헤드 {result.head}의 어텐션 가중치 (행마다 합 1)", fontsize=13)
    fig.tight_layout()
    return fig
